/**
 * Secrets as both command-line programs read them: from the environment or from a small
 * file of their own (never from the command line, which `ps` shows), a file another local
 * user could read, plant or change refused before it is read. `teamgames` reads the API
 * key and the database URLs; `teamgames bridge` its key, token, database URL and RCON
 * password; `teamgames journal resolve --bridge` the bridge's token, as the bridge does.
 *
 * @module
 * @internal
 */
import { constants, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { UsageError } from '../common/command-line.js';
import type { TeamgamesEnv } from './io.js';

/** How {@link readSmallFile} opens, checks and reads a file. @internal */
export interface SmallFileRules {
  /** The error for a file it cannot use, saying why (never the file's content). */
  refuse: (why: string) => UsageError;
  /** How many bytes are read at the most. */
  maxBytes: number;
  /** Refuse a symbolic link (the file itself must be named). */
  noFollow?: boolean;
  /** What is wrong with the opened regular file (its owner, its mode, its size), or `undefined`. */
  check?: (stat: Stats) => string | undefined;
}

/**
 * The text (UTF-8) of the first `maxBytes` of a regular file the rules accept: a FIFO, a
 * device (`/dev/zero`) or a directory is refused without blocking (opened non-blocking,
 * checked on the open handle, so what is read is what was checked).
 * @throws UsageError from `rules.refuse`, with the reason (an errno code, the check's).
 * @internal
 */
export async function readSmallFile(path: string, rules: SmallFileRules): Promise<string> {
  const codeOf = (error: unknown) => {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? code : 'unreadable';
  };
  let file: FileHandle;
  try {
    file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | (rules.noFollow === true ? constants.O_NOFOLLOW : 0));
  } catch (error) {
    const code = codeOf(error);
    throw rules.refuse(rules.noFollow === true && code === 'ELOOP' ? 'a symbolic link: name the file itself' : code);
  }
  try {
    const stat = await file.stat();
    if (!stat.isFile()) throw rules.refuse('not a regular file');
    const problem = rules.check?.(stat);
    if (problem !== undefined) throw rules.refuse(problem);
    const buffer = Buffer.alloc(rules.maxBytes);
    const { bytesRead } = await file.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw rules.refuse(codeOf(error));
  } finally {
    await file.close().catch(() => undefined);
  }
}

// A key or a URL is short: a larger file is not one, and is never read whole.
const MAX_SECRET_FILE_BYTES = 64 * 1024;

/**
 * The first non-blank line of a small regular file, trimmed (`''` when there is none),
 * for a secret kept out of the command line. A FIFO, a device (`/dev/zero`) or a
 * directory is refused without blocking, and with `ownOnly` so is a file other users may
 * read or change, or its group may change (its group may read it: a game server in the
 * bridge's group reads the same token); with `ownerMustBeMe` also one another user than
 * this process's or root owns (the bridge's own secrets: that user could plant a token);
 * only the first 64 KiB are read.
 * @throws UsageError naming `what` and why the file cannot be read.
 * @internal
 */
export async function firstLineOf(path: string, what: string, ownOnly = false, ownerMustBeMe = false): Promise<string> {
  const check = (stat: Stats): string | undefined => {
    if (!ownOnly || process.platform === 'win32') return undefined;
    // Like ssh with a private key: a secret every local user may read (or replace) is not
    // one, nor one another user or the group may change (a token planted by them).
    const mode = (stat.mode & 0o777).toString(8).padStart(4, '0');
    const me = process.geteuid?.();
    if (ownerMustBeMe && me !== undefined && stat.uid !== me && stat.uid !== 0) return `owned by user ${stat.uid}, who may change it, not by this process's user (${me}) or root: chown ${me} ${path}`;
    if ((stat.mode & 0o007) !== 0) return `other users may read or change it, mode ${mode}: chmod o-rwx ${path}`;
    if ((stat.mode & 0o020) !== 0) return `its group may change it, mode ${mode}: chmod g-w ${path}`;
    return undefined;
  };
  const text = await readSmallFile(path, { refuse: (why) => new UsageError(`${what}: cannot read ${path} (${why})`), maxBytes: MAX_SECRET_FILE_BYTES, check });
  return (text.split(/\r?\n/).find((line) => line.trim() !== '') ?? '').trim();
}

/**
 * The API key: `TEAMGAMES_API_KEY`, else the first line of the file `TEAMGAMES_API_KEY_FILE`
 * names (a secrets manager's or systemd's credential file); `undefined` when neither is set.
 * @throws UsageError when the file cannot be read or holds no key.
 * @internal
 */
export async function apiKeyOf(env: TeamgamesEnv, ownerMustBeMe = false): Promise<string | undefined> {
  const key = env.TEAMGAMES_API_KEY?.trim() ?? '';
  if (key !== '') return key;
  const path = env.TEAMGAMES_API_KEY_FILE ?? '';
  if (path.trim() === '') return undefined;
  const first = await firstLineOf(path, 'TEAMGAMES_API_KEY_FILE', true, ownerMustBeMe);
  if (first === '') throw new UsageError(`TEAMGAMES_API_KEY_FILE: ${path} holds no key on its first line`);
  return first;
}

/**
 * A secret a bridge's config names by where it is: the environment variable `name`, else
 * the first line of `file` (one this process's user or root owns, that other users may
 * not read and its group may not change).
 * @throws UsageError naming `what` when the variable is not set, or the file is refused or empty (never a value).
 * @internal
 */
export async function secretOf(env: TeamgamesEnv, name: string | undefined, file: string | undefined, what: string): Promise<string> {
  if (name !== undefined) {
    const value = env[name]?.trim() ?? '';
    if (value === '') throw new UsageError(`${what}: the environment variable ${name} is not set`);
    return value;
  }
  const value = await firstLineOf(file as string, what, true, true);
  if (value === '') throw new UsageError(`${what}: ${file} holds nothing on its first line`);
  return value;
}

/** The shortest bridge token accepted: long enough that guessing it is hopeless. */
export const MIN_TOKEN_LENGTH = 32;

/**
 * The bridge's token: `TEAMGAMES_BRIDGE_TOKEN`, else the first line of the file
 * `TEAMGAMES_BRIDGE_TOKEN_FILE` names (one other users may not read). What the bridge
 * expects and what `teamgames journal resolve --bridge` sends, read the same way;
 * `ownerMustBeMe` (the bridge's own read) also refuses a file another user than this
 * process's or root owns.
 * @throws UsageError when neither is set, the file is refused, or the token is too short (never its value).
 * @internal
 */
export async function tokenOf(env: TeamgamesEnv, ownerMustBeMe = false): Promise<string> {
  const direct = env.TEAMGAMES_BRIDGE_TOKEN?.trim() ?? '';
  const file = env.TEAMGAMES_BRIDGE_TOKEN_FILE?.trim() ?? '';
  const token = direct !== '' ? direct : file !== '' ? await firstLineOf(file, 'TEAMGAMES_BRIDGE_TOKEN_FILE', true, ownerMustBeMe) : '';
  if (token === '') throw new UsageError('TEAMGAMES_BRIDGE_TOKEN is not set (the token the game sends on every request, at least 32 characters: openssl rand -hex 32; or TEAMGAMES_BRIDGE_TOKEN_FILE, a file holding it)');
  // The length, never the value.
  if (token.length < MIN_TOKEN_LENGTH) throw new UsageError(`TEAMGAMES_BRIDGE_TOKEN must be at least ${MIN_TOKEN_LENGTH} characters, got ${token.length} (openssl rand -hex 32 makes one)`);
  return token;
}
