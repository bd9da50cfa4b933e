/**
 * `teamgames journal resolve --bridge <url>`: a window resolved through a running bridge's
 * HTTP API (`POST /v1/windows/resolve`, its bearer token read as the bridge reads it, from
 * `TEAMGAMES_BRIDGE_TOKEN_FILE` or `TEAMGAMES_BRIDGE_TOKEN`, never from the command line),
 * so staff close a window of a file journal the bridge holds without stopping deliveries.
 * The bridge resolves with `resolveWindow` on its own journal: the same one-winner rule
 * and audit trail as the CLI's own resolve.
 *
 * @module
 */
import { isIP } from 'node:net';
import { UsageError } from '../common/command-line.js';
import { WindowAlreadyResolvedError } from '../errors.js';
import type { JournalWindow } from '../journals/contract.js';
import { entryProblem } from '../journals/entry-checks.js';
import { CommandFailure, oneLine } from '../host/databases.js';
import type { TeamgamesEnv } from '../host/io.js';
import { tokenOf } from '../host/secrets.js';

/** What `resolve` was asked: the player, the window's id, or both; who; the note. */
export interface ResolveArgs {
  player: string | undefined;
  windowId: string | undefined;
  by: string;
  note: string;
}

/** The bridge could not be reached, or did not answer in time (exit 4). */
export class BridgeUnreachable extends CommandFailure {
  // Stryker disable next-line StringLiteral: the command tells it by instanceof (exit 4, BRIDGE_UNREACHABLE); this name is printed nowhere
  override name = 'BridgeUnreachable';
  constructor(
    message: string,
    /** Nothing was sent (the connection was refused): another way may be tried. */
    readonly notSent: boolean,
  ) {
    super(message);
  }
}

/** A running bridge's HTTP API, as `--bridge` names it. */
export interface BridgeTarget {
  /** The URL as given, for messages. */
  url: string;
  /** Resolves the window through the bridge. @throws WindowAlreadyResolvedError, CommandFailure, BridgeUnreachable. */
  resolve(input: ResolveArgs): Promise<JournalWindow>;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The bridge `--bridge <url>` names, with its token. `warn` is told when the token would
 * cross the network in the clear (plain http to a host other than this one).
 * @throws UsageError for a URL that is not http(s) or a missing or bad token.
 */
export async function bridgeTarget(url: string, timeoutMs: number, env: TeamgamesEnv, warn: (message: string) => Promise<void>): Promise<BridgeTarget> {
  let base: URL;
  try {
    base = new URL(url);
  } catch {
    throw new UsageError(`--bridge must be the bridge's HTTP API, as http://127.0.0.1:8787 (its listen.host and listen.port), got "${url}"`);
  }
  if ((base.protocol !== 'http:' && base.protocol !== 'https:') || base.username !== '' || base.password !== '' || base.search !== '' || base.hash !== '') {
    throw new UsageError(`--bridge must be the bridge's HTTP API, as http://127.0.0.1:8787 (its listen.host and listen.port; no user, query or fragment), got "${url}"`);
  }
  // The token as the bridge reads it: a file of the bridge's (or its group's), or the environment.
  const token = await tokenOf(env);
  const host = base.hostname;
  if (base.protocol === 'http:' && !LOOPBACK.has(host) && !(isIP(host) === 4 && host.startsWith('127.'))) {
    await warn(`warning: --bridge ${base.origin} is plain http to another host: the bridge's token crosses the network in the clear; run this on the bridge's machine (http://127.0.0.1:<port>)`);
  }
  const endpoint = new URL('v1/windows/resolve', base.href.endsWith('/') ? base.href : `${base.href}/`);
  return {
    url,
    resolve: (input) => send(endpoint, url, token, input, timeoutMs),
  };
}

interface ErrorBody {
  error?: { code?: unknown; message?: unknown; windowId?: unknown; playerName?: unknown; resolution?: { by?: unknown; at?: unknown; note?: unknown } };
  window?: JournalWindow;
}

async function send(endpoint: URL, shown: string, token: string, input: ResolveArgs, timeoutMs: number): Promise<JournalWindow> {
  const body = {
    ...(input.player === undefined ? {} : { player: input.player }),
    ...(input.windowId === undefined ? {} : { windowId: input.windowId }),
    by: input.by,
    note: input.note,
  };
  let response: Response;
  let answer: ErrorBody;
  try {
    // Never redirected (a 3xx is a failure below): the token goes to the bridge named, nowhere else.
    response = await fetch(endpoint, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    answer = (await response.json().catch(() => ({}))) as ErrorBody;
  } catch (error) {
    const code = causeCode(error);
    const refused = code === 'ECONNREFUSED';
    const why = (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms (--timeout)` : (code ?? oneLine(error));
    throw new BridgeUnreachable(
      `could not reach the bridge at ${shown} (${why}). ${refused ? 'Nothing was sent: is the bridge running, and is this its listen address? When it is stopped, resolve with --file alone' : 'The resolve may or may not have been written: teamgames journal windows --all tells'}`,
      refused,
    );
  }
  if (response.ok) {
    // Checked like any record read back: what is printed is a resolved window.
    const problem = entryProblem(answer.window) ?? (answer.window?.state === 'resolved' ? undefined : 'not a resolved window');
    if (problem === undefined) return answer.window as JournalWindow;
    throw new CommandFailure(`the bridge at ${shown} answered ${response.status} without the resolved window (${problem}): not a bridge of this version? teamgames journal windows --all tells whether it was written`);
  }
  const error = answer.error ?? {};
  const said = typeof error.message === 'string' ? error.message : `HTTP ${response.status}`;
  if (response.status === 409 && error.code === 'WINDOW_ALREADY_RESOLVED') {
    const r = error.resolution ?? {};
    if (typeof error.windowId === 'string' && typeof error.playerName === 'string' && typeof r.by === 'string' && typeof r.at === 'number' && typeof r.note === 'string') {
      throw new WindowAlreadyResolvedError(error.windowId, error.playerName, { by: r.by, at: r.at, note: r.note });
    }
  }
  if (response.status === 401) throw new CommandFailure(`the bridge at ${shown} refused the token: give the one the bridge reads (TEAMGAMES_BRIDGE_TOKEN_FILE or TEAMGAMES_BRIDGE_TOKEN, as in its service file)`);
  if (response.status === 404) throw new CommandFailure(`the bridge at ${shown} has no route to resolve windows (a bridge older than this command, or not a bridge): upgrade it, or stop it and resolve with --file`);
  throw new CommandFailure(`the bridge at ${shown} did not resolve the window (HTTP ${response.status}): ${said}`);
}

function causeCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}
