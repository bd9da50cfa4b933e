/**
 * The bridge's secrets, from the environment or files only (never the config, never the
 * command line, which `ps` shows): the API key, the bridge's own token, the database URL,
 * the RCON password, each read by src/host/secrets.ts (the rules both programs share).
 * Every missing or bad one is named at once.
 *
 * @module
 */
import { UsageError } from '../common/command-line.js';
import type { TeamgamesEnv } from '../host/io.js';
import { apiKeyOf, secretOf, tokenOf } from '../host/secrets.js';
import type { BridgeConfig, RconGiveConfig } from './config.js';

/** What the bridge holds secret. */
export interface BridgeSecrets {
  apiKey: string;
  /** The bridge's bearer token: the game sends it, the bridge sends it to the webhook. */
  token: string;
  /** The journal's database URL, for a PostgreSQL or MySQL journal. */
  databaseUrl?: string;
  /** The RCON password as read at start (the RCON sink reads it again by {@link rconPasswordOf} at each connection). */
  rconPassword?: string;
}

/**
 * The RCON password's reader: `give.rcon.passwordEnv`'s variable or `give.rcon.passwordFile`'s
 * first line, by the rules of every secret (host/secrets.ts), read again at each call so a
 * rotated file is picked up and still checked.
 * @throws UsageError (rejected) naming the variable or the file and why (never the value).
 */
export function rconPasswordOf(rcon: Pick<RconGiveConfig, 'passwordEnv' | 'passwordFile'>, env: TeamgamesEnv): () => Promise<string> {
  return () => secretOf(env, rcon.passwordEnv, rcon.passwordFile, `give.rcon.${rcon.passwordEnv === undefined ? 'passwordFile' : 'passwordEnv'}`);
}

async function apiKey(env: TeamgamesEnv): Promise<string> {
  // The bridge's own secret: a file another user owns could hold their key.
  const key = (await apiKeyOf(env, true)) ?? '';
  if (key === '') throw new UsageError('TEAMGAMES_API_KEY is not set (the raw key of the game server, from the TeamGames dashboard; or TEAMGAMES_API_KEY_FILE, a file holding it)');
  return key;
}

/**
 * `error` (the config's problems) with the problems of the secrets every bridge needs (the
 * API key, the token) added, so one run names them all; any other error as it is.
 */
export async function withSecretProblems(error: unknown, env: TeamgamesEnv): Promise<unknown> {
  if (!(error instanceof UsageError)) return error;
  const settled = await Promise.allSettled([apiKey(env), tokenOf(env, true)]);
  const problems = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason instanceof Error ? s.reason.message : String(s.reason)] : []));
  if (problems.length === 0) return error;
  return new UsageError(`${error.message}\nand ${problems.length === 1 ? '1 secret is' : `${problems.length} secrets are`} missing or bad:\n  ${problems.join('\n  ')}`);
}

/**
 * Reads every secret the config needs.
 * @throws UsageError naming every missing or bad one (never a value).
 */
export async function readSecrets(config: BridgeConfig, env: TeamgamesEnv): Promise<BridgeSecrets> {
  const j = config.journal;
  const rcon = config.give.rcon;
  const reads = [
    apiKey(env),
    tokenOf(env, true),
    j.kind === 'file' ? Promise.resolve(undefined) : secretOf(env, j.urlEnv, j.urlFile, `journal.${j.kind}.${j.urlEnv === undefined ? 'urlFile' : 'urlEnv'}`),
    rcon === undefined ? Promise.resolve(undefined) : rconPasswordOf(rcon, env)(),
  ] as const;
  const settled = await Promise.allSettled(reads);
  const problems = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason instanceof Error ? s.reason.message : String(s.reason)] : []));
  if (problems.length > 0) throw new UsageError(problems.length === 1 ? (problems[0] as string) : `${problems.length} secrets are missing or bad:\n  ${problems.join('\n  ')}`);
  // Every read fulfilled (none refused above): their values.
  const [key, token, databaseUrl, rconPassword] = await Promise.all(reads);
  return {
    apiKey: key,
    token,
    ...(databaseUrl === undefined ? {} : { databaseUrl }),
    ...(rconPassword === undefined ? {} : { rconPassword }),
  };
}
