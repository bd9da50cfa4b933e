/**
 * The bridge's secrets, from the environment or files only (never the config, never the
 * command line, which `ps` shows): the API key, the bridge's own token, the database URL,
 * the RCON password. Every missing or bad one is named at once.
 *
 * @module
 */
import { UsageError } from '../common/command-line.js';
import { apiKeyOf, firstLineOf, type TeamgamesEnv } from '../cli/shared.js';
import type { BridgeConfig } from './config.js';

/** The shortest bridge token accepted: long enough that guessing it is hopeless. */
export const MIN_TOKEN_LENGTH = 32;

/** What the bridge holds secret. */
export interface BridgeSecrets {
  apiKey: string;
  /** The bridge's bearer token: the game sends it, the bridge sends it to the webhook. */
  token: string;
  /** The journal's database URL, for a PostgreSQL or MySQL journal. */
  databaseUrl?: string;
  /** The RCON password, read here only so that no log line can hold it (the RCON sink reads its own). */
  rconPassword?: string;
}

async function fromEnvOrFile(env: TeamgamesEnv, name: string | undefined, file: string | undefined, what: string): Promise<string> {
  if (name !== undefined) {
    const value = env[name]?.trim() ?? '';
    if (value === '') throw new UsageError(`${what}: the environment variable ${name} is not set`);
    return value;
  }
  const value = await firstLineOf(file as string, what, true, true);
  if (value === '') throw new UsageError(`${what}: ${file} holds nothing on its first line`);
  return value;
}

/**
 * The bridge's token: `TEAMGAMES_BRIDGE_TOKEN`, else the first line of the file
 * `TEAMGAMES_BRIDGE_TOKEN_FILE` names (one other users may not read). Also what
 * `teamgames journal resolve --bridge` sends, read the same way; `ownerMustBeMe` (the
 * bridge's own read) also refuses a file another user than this process's or root owns.
 * @throws UsageError when neither is set, the file is refused, or the token is too short (never its value).
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
    j.kind === 'file' ? Promise.resolve(undefined) : fromEnvOrFile(env, j.urlEnv, j.urlFile, `journal.${j.kind}.${j.urlEnv === undefined ? 'urlFile' : 'urlEnv'}`),
    rcon === undefined ? Promise.resolve(undefined) : fromEnvOrFile(env, rcon.passwordEnv, rcon.passwordFile, `give.rcon.${rcon.passwordEnv === undefined ? 'passwordFile' : 'passwordEnv'}`),
  ] as const;
  const settled = await Promise.allSettled(reads);
  const problems = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason instanceof Error ? s.reason.message : String(s.reason)] : []));
  if (problems.length > 0) throw new UsageError(problems.length === 1 ? (problems[0] as string) : `${problems.length} secrets are missing or bad:\n  ${problems.join('\n  ')}`);
  const [key, token, databaseUrl, rconPassword] = settled.map((s) => (s.status === 'fulfilled' ? s.value : undefined));
  return {
    apiKey: key as string,
    token: token as string,
    ...(databaseUrl === undefined ? {} : { databaseUrl }),
    ...(rconPassword === undefined ? {} : { rconPassword }),
  };
}
