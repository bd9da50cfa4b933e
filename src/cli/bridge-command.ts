/**
 * `teamgames bridge --config bridge.json`: parses the command line, loads the bridge (and
 * with it pino and prom-client, optional peers) only now, runs it until SIGTERM or SIGINT,
 * and resolves the exit code.
 *
 * @module
 */
import { COMMON_EXIT, UsageError, parseCommandLine } from '../common/command-line.js';
import { printable } from '../common/printable.js';
import { InvalidInputError } from '../errors.js';
import { URL_PASSWORD } from './databases.js';
import { EXIT, type TeamgamesEnv, type TeamgamesIo } from './shared.js';
import type { BridgeDeps, RunningBridge } from '../bridge/bridge.js';

/** The text of `teamgames bridge --help`. */
export const BRIDGE_USAGE = `Usage: teamgames bridge --config <bridge.json>
       teamgames bridge staff-hash <name> <read|resolve>   (password on stdin: a line
                      of the staff page's accounts file; see staff-hash --help)

Runs automatic, exactly-once delivery beside a game server written in any language:
the delivery loop, a local HTTP API the game calls (a player joined, left, typed
/claim…), and items sent to the game by webhook (a POST per item, deduped by the game
on deliveryId) or by RCON commands (at most once, never silent: an unknown outcome is a
window for staff). Logs are JSON lines on stdout.

Options:
  --config <path>     the bridge's config file (JSON; see the guide's "A bridge for
                      any game server"): listen, baseUrl, journal, loop, give, log,
                      staff (the staff page)
  -h, --help          show this help

Environment (secrets never go in the config or on the command line):
  TEAMGAMES_API_KEY (or TEAMGAMES_API_KEY_FILE)   the raw API key of the game server
  TEAMGAMES_BRIDGE_TOKEN (or ..._FILE)             the token the game sends on every
                      request (Authorization: Bearer …) and the webhook receives; at
                      least 32 characters (openssl rand -hex 32)
  TEAMGAMES_BASE_URL  the service URL when the config has no baseUrl
  the variables the config names: journal.postgres.urlEnv / journal.mysql.urlEnv
                      (the database URL), give.rcon.passwordEnv (the RCON password)

HTTP API (loopback by default; JSON; errors {"error":{"code","message","field"}}):
  POST /v1/join {"player"}   POST /v1/leave {"player"}   PUT /v1/online {"players":[…]}
  POST /v1/claim {"player"}  POST /v1/vote {"player","reward","amount"}
  POST /v1/expect {"player","transactionId","expiresInMs"} (a web shop's checkout hint)
  GET /v1/players/<name>/status   GET /v1/health   GET /metrics (Prometheus)

Needs the optional packages: npm install pino prom-client rcon-client

Exit codes:
  0  stopped by SIGTERM or SIGINT (started by npx or an npm script: also when npm
     exits, as npm does not pass SIGTERM on), everything closed
  1  could not start (the journal, the listener, the sink) or failed while running
  2  usage: bad option, a config with mistakes (all listed), a missing secret, or the
     optional packages missing
`;

const OPTIONS = { config: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } } as const;

/** What the command takes from outside besides io and env, for tests. */
export type BridgeCommandDeps = Omit<BridgeDeps, 'env'> & {
  /** Resolves when the bridge must stop. Default: the first SIGTERM or SIGINT. */
  stopSignal?: Promise<unknown>;
  /** Told once the bridge runs. */
  onStarted?: (bridge: RunningBridge) => void;
  /** Where `staff-hash` reads the password. Default: process.stdin. */
  stdin?: AsyncIterable<Buffer | string>;
  /** The parent's pid, read each second when npm started the bridge. Default: `process.ppid`. */
  parentPid?: () => number;
};

const PEERS = ['pino', 'prom-client', 'rcon-client'];

function missingPeer(error: unknown): string | undefined {
  const code = (error as { code?: unknown }).code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return undefined;
  const text = error instanceof Error ? error.message : '';
  return PEERS.find((name) => text.includes(`'${name}'`));
}

/** How often a bridge that npm started checks that its parent is still the one that started it. */
const PARENT_CHECK_MS = 1_000;

/**
 * The first SIGTERM or SIGINT, or for a bridge that npm started (`npx teamgames bridge`, an
 * npm script: `npm_command` is set) the end of its parent: npm passes a SIGTERM on to the
 * `sh -c` it runs the command in, not to the bridge, which was left running, orphaned,
 * holding its port and the journal's lock. Node has no "parent died" signal, so the parent
 * pid is checked every second (a timer that keeps nothing alive). `dispose` removes the
 * listeners and the timer (a start that failed).
 */
function signalled(env: TeamgamesEnv, parentPid: () => number): { promise: Promise<string>; dispose: () => void } {
  let dispose = () => {};
  const promise = new Promise<string>((resolve) => {
    const on = (name: string) => {
      dispose();
      resolve(name);
    };
    const parent = parentPid();
    const watch = env.npm_command === undefined ? undefined : setInterval(() => parentPid() !== parent && on('the npm process that started it exited'), PARENT_CHECK_MS).unref();
    dispose = () => {
      clearInterval(watch);
      process.off('SIGTERM', on);
      process.off('SIGINT', on);
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
  });
  return { promise, dispose };
}

/** Runs `teamgames bridge` (argv after the word `bridge`); resolves the exit code once it stopped. */
export async function runBridgeCommand(argv: readonly string[], io: TeamgamesIo, env: TeamgamesEnv, deps: BridgeCommandDeps = {}): Promise<number> {
  const fail = (code: number, message: string) => {
    // A driver's message may quote the database URL: its password masked.
    io.stderr.write(`teamgames bridge: ${printable(message.replace(URL_PASSWORD, '$1***@'))}${code === EXIT.USAGE ? ' (see teamgames bridge --help)' : ''}\n`);
    return code;
  };
  if (argv[0] === 'staff-hash') return (await import('../bridge/staff-page/hash-command.js')).runStaffHash(argv.slice(1), io, deps.stdin ?? process.stdin);
  let config: string;
  try {
    const { values, positionals } = parseCommandLine({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: true });
    if (values.help) {
      io.stdout.write(BRIDGE_USAGE);
      return EXIT.OK;
    }
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    if (values.config === undefined || values.config.trim() === '') throw new UsageError('--config <bridge.json> is required');
    config = values.config;
  } catch (error) {
    return fail(error instanceof UsageError ? EXIT.USAGE : EXIT.FAILURE, error instanceof Error ? error.message : String(error));
  }
  let startBridge: typeof import('../bridge/bridge.js').startBridge;
  try {
    // Loaded only for this command: pino, prom-client and the bridge's code.
    ({ startBridge } = await import('../bridge/bridge.js'));
  } catch (error) {
    const peer = missingPeer(error);
    if (peer !== undefined) return fail(EXIT.USAGE, `the bridge needs the optional package ${peer}: npm install pino prom-client rcon-client`);
    throw error;
  }
  // Listening before the start: a signal during it stops the bridge as soon as it runs.
  const signals = deps.stopSignal === undefined ? signalled(env, deps.parentPid ?? (() => process.ppid)) : undefined;
  const stop = deps.stopSignal ?? (signals as { promise: Promise<string> }).promise;
  let bridge: RunningBridge;
  try {
    bridge = await startBridge(config, { ...deps, env });
  } catch (error) {
    signals?.dispose();
    const peer = missingPeer(error);
    if (peer !== undefined) return fail(EXIT.USAGE, `the bridge needs the optional package ${peer}: npm install pino prom-client rcon-client`);
    // Multi-line usage errors (every mistake of the config) keep their lines.
    const message = error instanceof Error ? error.message : String(error);
    // The client's own checks (a plain-http base URL off loopback, a malformed key): usage too, in the config's words.
    if (error instanceof InvalidInputError) {
      const field = error.argument === 'options.baseUrl' ? 'baseUrl (or TEAMGAMES_BASE_URL)' : error.argument === 'options.apiKey' ? 'TEAMGAMES_API_KEY' : error.argument;
      return fail(EXIT.USAGE, `${field}: ${error.rule}`);
    }
    if (error instanceof UsageError) {
      io.stderr.write(`teamgames bridge: ${message.split('\n').map(printable).join('\n')}\n(see teamgames bridge --help)\n`);
      return EXIT.USAGE;
    }
    return fail(COMMON_EXIT.FAILURE, message.replace(/\s+/g, ' '));
  }
  deps.onStarted?.(bridge);
  const why = await stop;
  bridge.log.info(`stopping (${typeof why === 'string' ? why : 'asked'})`);
  await bridge.stop();
  return EXIT.OK;
}
