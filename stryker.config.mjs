// @ts-check
/**
 * `npm run mutate`: StrykerJS over the delivery engine, the loop's call budget and schedule,
 * the delivery options, every journal, and the bridge's sinks (issues #27, #33, #37). Each
 * mutant runs only the tests that reach it (`perTest`), against the suites of
 * vitest.mutate.config.ts; a rerun is incremental (only mutants whose code or tests changed
 * run again). Reports: reports/mutation/ (HTML and JSON, ignored by git).
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts', related: false },
  coverageAnalysis: 'perTest',
  // The engine, the delivery loop (#33: loop, its player bookkeeping, its votes, budget,
  // due heap, options), what staff see (staff.ts and the `teamgames journal` command), the
  // vote rewards, and every journal.
  mutate: [
    'src/delivery/engine/engine.ts',
    'src/delivery/engine/modes.ts',
    'src/delivery/engine/records.ts',
    'src/delivery/engine/grants.ts',
    'src/delivery/core/shared.ts',
    'src/delivery/core/locks.ts',
    'src/delivery/engine/report.ts',
    'src/delivery/loop/scheduler.ts',
    'src/delivery/loop/player.ts',
    'src/delivery/loop/start.ts',
    'src/delivery/loop/votes.ts',
    'src/delivery/loop/call-budget.ts',
    'src/delivery/loop/due-heap.ts',
    'src/delivery/engine/options.ts',
    'src/delivery/staff/staff.ts',
    'src/delivery/inspect/inspect.ts',
    'src/delivery/votes/votes.ts',
    'src/delivery/votes/recovery.ts',
    'src/delivery/votes/memory.ts',
    'src/cli/journal-command.ts',
    'src/cli/journal-sources.ts',
    'src/cli/journal-print.ts',
    'src/cli/databases.ts',
    'src/journals/**/*.ts',
    // The bridge's sinks (#37): what they send, when they stop sending; what counts as given.
    'src/bridge/rcon.ts',
    'src/bridge/rcon-template.ts',
    'src/bridge/webhook.ts',
    // Who is online, hence who is given anything: the RCON list poller and the roster.
    'src/bridge/rcon-players.ts',
    'src/bridge/roster.ts',
    // The staff page (#48): what it lets through and who may resolve (routes, sessions and
    // the brake, the accounts file and hashes, the escaper).
    'src/bridge/staff-page/routes.ts',
    'src/bridge/staff-page/sessions.ts',
    'src/bridge/staff-page/accounts.ts',
    'src/bridge/staff-page/html.ts',
    // The bridge's and the CLI's decisions (#46, in-process suites test/bridge/*-decisions and
    // test/cli/*-decisions): the HTTP API (token, body limits, 503 while stopping, each
    // route's refusals), bridge.json's rules, the secrets (the token's minimum, file modes and
    // owners), what the log redacts, the RCON connection (not sent vs unknown, packet bounds),
    // the assembly, the loop's option bounds, and both CLI layers (`teamgames` and what it
    // shares with `teamgames journal`). Left out: bridge/journal.ts (opens the journal the
    // config names: wiring over cli/databases.ts, which is in), bridge/sink.ts and
    // bridge/rcon-types.ts (types only), cli/index.ts (the bin's process wiring).
    'src/bridge/server.ts',
    'src/bridge/secrets.ts',
    'src/bridge/config.ts',
    'src/bridge/log.ts',
    'src/bridge/rcon-link.ts',
    'src/bridge/bridge.ts',
    'src/delivery/loop/types.ts',
    'src/cli/shared.ts',
    'src/cli/program.ts',
  ],
  // Mutants in module-level constants would each need every suite: left out, for speed.
  ignoreStatic: true,
  // Two cores: one vitest per core.
  concurrency: 2,
  timeoutMS: 15_000,
  incremental: true,
  incrementalFile: 'reports/mutation/stryker-incremental.json',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, reportMutants: false },
  tempDirName: '.stryker-tmp',
  thresholds: { high: 95, low: 90, break: null },
};
