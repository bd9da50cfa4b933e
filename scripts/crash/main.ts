/**
 * `npm run crash`: the SIGKILL campaigns (kills.ts: one worker, two workers on one journal
 * file, or nodes on a database journal; their flags in options.ts), or with `--power-loss`
 * the power-loss campaign of the file journal (power-loss.ts, flags of its own), or with
 * `--votes` the vote rewards' campaign (votes.ts, flags of its own), or with
 * `--bridge webhook|rcon` the campaign of `teamgames bridge` (bridge.ts, flags of its own).
 *
 * @module
 */
// Chosen before any flag is parsed: each campaign parses its own (a name, not a literal,
// so the type check does not require a campaign that is not in this checkout).
const campaign = process.argv.includes('--power-loss')
  ? './power-loss.js'
  : process.argv.includes('--votes')
    ? './votes.js'
    : process.argv.some((arg) => arg === '--bridge' || arg.startsWith('--bridge='))
      ? './bridge.js'
      : './kills.js';
await import(campaign);
