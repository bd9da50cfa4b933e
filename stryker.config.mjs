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
    'src/delivery/core/give.ts',
    'src/delivery/core/thrown.ts',
    'src/delivery/records/item-records.ts',
    'src/delivery/records/checked.ts',
    // The checkout hints (#47): how long, how many, which share of the budget, for whom.
    'src/delivery/loop/hints.ts',
    // The hints a shop wrote into a shared journal (#47): how often they are read, backoff, stop.
    'src/delivery/loop/shared-hints.ts',
    'src/cli/journal-command.ts',
    'src/cli/journal-sources.ts',
    'src/cli/journal-print.ts',
    'src/host/databases.ts',
    'src/journals/**/*.ts',
    // The bridge's sinks (#37): what they send, when they stop sending; what counts as given.
    // (rcon/link.ts, the connection, is below with the bridge's decisions: its suite uses a
    // fake server, so its mutants no longer hang a socket until the timeout.)
    'src/bridge/rcon/sink.ts',
    'src/bridge/rcon/template.ts',
    'src/bridge/webhook/sink.ts',
    // Who is online, hence who is given anything: the RCON list poller and the roster.
    'src/bridge/rcon/players.ts',
    'src/bridge/roster.ts',
    // The staff page (#48): what it lets through and who may resolve (routes, sessions and
    // the brake, the accounts file and hashes, the escaper).
    'src/bridge/staff-page/routes.ts',
    'src/bridge/staff-page/sessions.ts',
    'src/bridge/staff-page/accounts.ts',
    'src/bridge/staff-page/html.ts',
    // The client core (#46): what is sent and how (the client, the endpoint table, the one
    // transport, the credentials and their redaction), what an answer says (every reader of
    // src/wire/), when a failure is "outcome unknown" and what an error holds (to-error, the
    // error classes), the local claim guard, the catalog cache, every argument and option
    // check, what reaches onEvent, the signals' links. Left out, each for one reason:
    // - src/index.ts: the public exports, a list of names.
    // - src/types.ts, src/wire/options.ts: interfaces only (no code runs).
    // - src/version.ts: one constant, written by the build.
    // - src/internal/clock.ts: `performance.now()` behind a name, nothing to decide.
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
    // The bridge's and the CLI's decisions (#46, in-process suites test/bridge/*-decisions and
    // test/cli/*-decisions): the HTTP API (token, body limits, 503 while stopping, each
    // route's refusals), bridge.json's rules, the secrets (the token's minimum, file modes and
    // owners), what the log redacts, the RCON connection (not sent vs unknown, packet bounds),
    // the assembly, the loop's option bounds, and both CLI layers (`teamgames` and what it
    // shares with `teamgames journal`). Left out: bridge/journal.ts (opens the journal the
    // config names: wiring over host/databases.ts, which is in), bridge/sink.ts and
    // bridge/rcon/types.ts (types only), host/io.ts (an interface), cli/index.ts (the bin's process wiring).
    'src/bridge/http/server.ts',
    'src/bridge/http/routes.ts',
    'src/bridge/secrets.ts',
    'src/host/secrets.ts',
    'src/host/redact.ts',
    'src/bridge/config.ts',
    'src/bridge/log.ts',
    'src/bridge/rcon/link.ts',
    // What a game's RCON reply says (given, absent player, refused), its presets (#44).
    'src/bridge/rcon/replies.ts',
    'src/bridge/bridge.ts',
    'src/delivery/loop/types.ts',
    'src/cli/shared.ts',
    'src/cli/program.ts',
  ],
  // Mutants in module-level constants would each need every suite: left out, for speed.
  // Counted once (#46: a dry run of every file below plus all of src/bridge/, cli/program.ts
  // and cli/shared.ts, against one test that imports them all): 614 of 12,798 mutants are
  // static; 253 of the 9,671 in this scope, 100 of them in the client core (texts and codes
  // answers are read by, option names and defaults, not-sent connection codes, retried
  // statuses, masked headers, the error brand). test/client/module-constants.test.ts loads the
  // SDK afresh inside its tests, so a changed constant fails a test there; 18 of the 100 are
  // equivalent (`true` → `false` in the objects CLIENT_OPTIONS and DERIVABLE_OPTIONS are
  // derived from by Object.keys, which reads names only). StrykerJS has no mutator for number
  // literals: limits (the 200-character excerpt, the 30 s Retry-After cap, the 10 s backoff
  // cap, the 1,024-player sweep) are pinned by tests of their edges instead.
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
