// @ts-check
/**
 * `npm run mutate`: StrykerJS over the client core, the delivery engine, the loop's call
 * budget and schedule, the delivery options, every journal, and the bridge's sinks (issues
 * #27, #33, #37, #46). Each
 * mutant runs only the tests that reach it (`perTest`), against the suites of
 * vitest.mutate.config.ts; a rerun is incremental (only mutants whose code or tests changed
 * run again). Reports: reports/mutation/ (HTML and JSON, ignored by git).
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
/**
 * The scope, room by room (`npm run mutate:rooms` runs one room at a time, each with its own
 * incremental file: scripts/mutate-rooms.ts); `mutate` below is every room's patterns.
 * @type {Record<string, string[]>}
 */
export const rooms = {
  // The delivery core: the one bounded give, the memory of given-not-acknowledged, the
  // players' locks, what a give threw, the records a give writes itself.
  core: [
    'src/delivery/core/shared.ts',
    'src/delivery/core/locks.ts',
    'src/delivery/core/give.ts',
    'src/delivery/core/thrown.ts',
    'src/delivery/records/item-records.ts',
    'src/delivery/records/checked.ts',
  ],
  // The engine: its modes, records, grants, report and options.
  engine: [
    'src/delivery/engine/engine.ts',
    'src/delivery/engine/modes.ts',
    'src/delivery/engine/records.ts',
    'src/delivery/engine/grants.ts',
    'src/delivery/engine/report.ts',
    'src/delivery/engine/options.ts',
  ],
  // What staff see (staff.ts, inspect.ts) and the vote rewards.
  votes: ['src/delivery/staff/staff.ts', 'src/delivery/inspect/inspect.ts', 'src/delivery/votes/votes.ts', 'src/delivery/votes/recovery.ts'],
  // The delivery loop (#33): its schedule, player bookkeeping, votes, budget, due heap.
  loop: [
    'src/delivery/loop/scheduler.ts',
    'src/delivery/loop/player.ts',
    'src/delivery/loop/start.ts',
    'src/delivery/loop/votes.ts',
    'src/delivery/loop/call-budget.ts',
    'src/delivery/loop/due-heap.ts',
  ],
  // The checkout hints (#47): how long, how many, which share of the budget, for whom; those
  // a shop wrote into a shared journal (how often they are read, backoff, stop).
  hints: ['src/delivery/loop/hints.ts', 'src/delivery/loop/shared-hints.ts'],
  // The `teamgames journal` command and the database options it shares with the bridge.
  cli: ['src/cli/journal-command.ts', 'src/cli/journal-sources.ts', 'src/cli/journal-print.ts', 'src/host/databases.ts'],
  // Every journal.
  journals: ['src/journals/**/*.ts'],
  // The bridge's sinks (#37): what they send, when they stop sending; what counts as given;
  // who is online (the RCON list poller, the roster). (rcon/link.ts, the connection, is with
  // the bridge's decisions: its suite uses a fake server.)
  sinks: ['src/bridge/rcon/sink.ts', 'src/bridge/rcon/template.ts', 'src/bridge/webhook/sink.ts', 'src/bridge/rcon/players.ts', 'src/bridge/roster.ts'],
  // The staff page (#48): what it lets through and who may resolve (routes, sessions and
  // the brake, the accounts file and hashes, the escaper).
  staffPage: ['src/bridge/staff-page/routes.ts', 'src/bridge/staff-page/sessions.ts', 'src/bridge/staff-page/accounts.ts', 'src/bridge/staff-page/html.ts'],
  // The client core (#46): what is sent and how (the client, the endpoint table, the one
  // transport, the credentials and their redaction), what an answer says (every reader of
  // src/wire/), when a failure is "outcome unknown" and what an error holds (to-error, the
  // error classes), the local claim guard, the catalog cache, every argument and option
  // check, what reaches onEvent, the signals' links. Left out, each for one reason:
  // - src/index.ts: the public exports, a list of names.
  // - src/types.ts, src/wire/options.ts: interfaces only (no code runs).
  // - src/version.ts: one constant, written by the build.
  // - src/internal/clock.ts: `performance.now()` behind a name, nothing to decide.
  client: [
    'src/client.ts',
    'src/client-parts.ts',
    'src/client-options.ts',
    'src/endpoints.ts',
    'src/auth.ts',
    'src/errors.ts',
    'src/errors/*.ts',
    'src/wire/*.ts',
    'src/internal/*.ts',
    '!src/internal/clock.ts',
    '!src/wire/options.ts',
  ],
  // The bridge's and the CLI's decisions (#46, in-process suites test/bridge/*-decisions and
  // test/cli/*-decisions): the HTTP API (token, body limits, 503 while stopping, each
  // route's refusals), bridge.json's rules, the secrets (the token's minimum, file modes and
  // owners), what the log redacts, the RCON connection (not sent vs unknown, packet bounds),
  // what a game's RCON reply says (#44), the assembly, the loop's option bounds, and both CLI
  // layers. Left out: bridge/journal.ts (opens the journal the config names: wiring over
  // host/databases.ts, which is in), bridge/sink.ts and bridge/rcon/types.ts (types only),
  // host/io.ts (an interface), cli/index.ts (the bin's process wiring).
  decisions: [
    'src/bridge/http/server.ts',
    'src/bridge/http/routes.ts',
    'src/bridge/secrets.ts',
    'src/host/secrets.ts',
    'src/host/redact.ts',
    'src/bridge/config.ts',
    'src/bridge/log.ts',
    'src/bridge/rcon/link.ts',
    'src/bridge/rcon/replies.ts',
    'src/bridge/bridge.ts',
    'src/delivery/loop/types.ts',
    'src/cli/shared.ts',
    'src/cli/program.ts',
  ],
};

/**
 * Rooms run against suites of their own (`npm run mutate:rooms` passes them in
 * MUTATE_ROOM_SUITES); the others run against vitest.mutate.config.ts's. A room with
 * suites of its own then runs its survivors again against the whole set (the second pass,
 * narrowed to their lines), and its scores count that verdict.
 * @type {Record<string, string>}
 */
export const roomSuites = {
  // Without the child-process suites, which cost a journal mutant seconds each and see none.
  journals: 'vitest.mutate-journals.config.ts',
  // Without the suites that only call the client on the way to something else (every
  // delivery, journal and bridge suite).
  client: 'vitest.mutate-client.config.ts',
  // The bridge's and the CLI's in-process suites and the loop's, without the journals',
  // databases' and client's.
  decisions: 'vitest.mutate-decisions.config.ts',
};

export default {
  testRunner: 'vitest',
  vitest: { configFile: process.env.MUTATE_ROOM_SUITES ?? 'vitest.mutate.config.ts', related: false },
  coverageAnalysis: 'perTest',
  // Every room's patterns (see `rooms` above).
  mutate: Object.values(rooms).flat(),
  // Mutants in module-level constants would each need every suite: left out, for speed.
  // Counted once (#46: a dry run of every file below plus all of src/bridge/, cli/program.ts
  // and cli/shared.ts, against one test that imports them all): 614 of 12,798 mutants are
  // static; 253 of the 9,671 in this scope, 100 of them in the client core (texts and codes
  // answers are read by, option names and defaults, not-sent connection codes, retried
  // statuses, masked headers, the error brand). test/client/module-constants.test.ts loads the
  // SDK afresh inside its tests, so a changed constant fails a test there; 18 of the 100 were
  // equivalent (`true` → `false` in the objects CLIENT_OPTIONS and DERIVABLE_OPTIONS are
  // derived from by Object.keys, which reads names only), and their values are now 0. StrykerJS has no mutator for number
  // literals: limits (the 200-character excerpt, the 30 s Retry-After cap, the 10 s backoff
  // cap, the 1,024-player sweep) are pinned by tests of their edges instead.
  // A module loaded by a test file's static imports never sees a mutant of its module-level
  // code (StrykerJS switches the mutant on in a beforeAll, after the imports), yet such a
  // mutant is not dropped here when some suite loads the module lazily inside a test: it
  // survives whatever the suites check. The suites that check a module-level decision load
  // their module afresh in a beforeEach (vi.resetModules() and import(); e.g.
  // test/bridge/staff-page/parts.test.ts), in a file that does not also load it once.
  ignoreStatic: true,
  // Two cores: one vitest per core.
  concurrency: 2,
  timeoutMS: 15_000,
  // The whole set's first run takes 1 to 2 min on the two cores alone; on a busy machine it
  // passed StrykerJS's default 5 min and the run stopped before testing any mutant.
  dryRunTimeoutMinutes: 20,
  incremental: true,
  incrementalFile: 'reports/mutation/stryker-incremental.json',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, reportMutants: false },
  tempDirName: '.stryker-tmp',
  thresholds: { high: 95, low: 90, break: null },
};
