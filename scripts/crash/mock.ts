/**
 * The mock CLI (`teamgames-mock`, src/mock/cli.ts) as the crash campaign runs it: the same
 * program, plus one guard: it exits when its stdin closes, so a campaign that dies (even
 * SIGKILLed) never leaves a mock server behind.
 *
 *   node crash-mock.mjs --port 0 --seed seed.json
 *
 * @module
 */
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
await import('../../src/mock/cli.js');
