/**
 * bridge.json: read, checked (every wrong field named with its rule, all at once, never a
 * value that could be a secret echoed), and turned into the bridge's settings. Secrets are
 * refused here: a field named like one, or a database URL written inline, is named with the
 * environment variable or file to use instead.
 *
 * @module
 */
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { UsageError } from '../common/command-line.js';
import { readSmallFile } from '../host/secrets.js';
import { InvalidInputError, checkDeliveryLoopSettings, type DeliveryLoopSettings } from '../index.js';
import { checkBaseUrl, isLoopbackHost } from '../internal/validate.js';
import type { LogLevel } from './log.js';
import { GAMES, PURCHASE_PLACEHOLDERS, VOTE_PLACEHOLDERS, patternProblem, templateProblem, type Game, type ReplyPatterns } from './rcon/index.js';
import { staffConfigOf, staffSection, type StaffPageConfig } from './staff-page/index.js';

/** How items reach a game with an HTTP endpoint: one POST per item, a 2xx means given. */
export interface WebhookGiveConfig {
  /** The game's endpoint (http or https, no credentials in it). */
  url: string;
  /** How long the game may take to answer, in ms. Default `10000`. */
  timeoutMs: number;
  /** `true` lets `url` be plain http on another host than loopback (the token then crosses the network in clear). */
  allowPlainHttp?: boolean;
}

/** How items reach a game over Source RCON (the sink is `src/bridge/rcon/`). */
export interface RconGiveConfig {
  host: string;
  port: number;
  /** The environment variable holding the RCON password (or `passwordFile`). */
  passwordEnv?: string;
  /** A file whose first line is the RCON password, resolved against the config's folder. */
  passwordFile?: string;
  /** How long a command's reply may take, in ms. Default `5000`. */
  timeoutMs: number;
  /** Commands per merchant product id (`"*"`: any other product), templates with `{player}`, `{quantity}`, `{productId}`, `{productName}`, `{deliveryId}`. */
  commands: Record<string, string[]>;
  /** Commands per vote reward id (`"*"`: any other), with `{player}`, `{amount}`, `{rewardId}`, `{rewardName}`, `{deliveryId}`. */
  voteCommands: Record<string, string[]>;
  /** Who is online: the game over the HTTP API (`game`), or the bridge polling `listCommand` (`list`). */
  players: { source: 'game' | 'list'; listCommand?: string; intervalMs: number };
  /** Whose replies the preset patterns read. Default `minecraft` (vanilla, Paper, Spigot). */
  game: Game;
  /** The game's reply patterns, tried before the preset's. */
  replies?: ReplyPatterns;
  /** Reply patterns per product id (`"*"`: any other product), tried before the game's. */
  productReplies?: Record<string, ReplyPatterns>;
  /** Check the player is online before an item's first command. Default: `true` where the game has a list command. */
  checkOnline?: boolean;
}

/** Where the journal lives. */
export type BridgeJournalConfig =
  | { kind: 'file'; path: string }
  | { kind: 'postgres' | 'mysql'; urlEnv?: string; urlFile?: string; table?: string };

/** The loop's settings the config may set, checked by the SDK's own validator ({@link checkDeliveryLoopSettings}). */
export type BridgeLoopConfig = DeliveryLoopSettings;

/** The bridge's settings, once checked; paths are absolute. */
export interface BridgeConfig {
  listen: { host: string; port: number };
  baseUrl?: string;
  journal: BridgeJournalConfig;
  loop: BridgeLoopConfig;
  give: { webhook: WebhookGiveConfig; rcon?: undefined } | { rcon: RconGiveConfig; webhook?: undefined };
  log: { level: LogLevel };
  /** The staff page (issue #48), when the config has a `staff` section. */
  staff?: StaffPageConfig;
}

/**
 * A rule across an object's fields, checked even when one of its fields has the wrong type
 * (zod skips a refinement after such an issue by default: its mistake surfaced only on the
 * next run), as long as the value is an object at all.
 */
const acrossFields = { when: (payload: z.core.ParsePayload) => payload.value !== null && typeof payload.value === 'object' && !Array.isArray(payload.value) };

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const envName = z.string({ error: 'must be the name of an environment variable' }).regex(ENV_NAME, 'must be the name of an environment variable (letters, digits, _)');
const path = z.string({ error: 'must be a file path (a string)' }).trim().min(1, 'must not be blank').max(4096, 'must be at most 4096 characters');
// The schema's own error says every one of its issues (a wrong type, a fraction, a bound).
const int = (min: number, max: number) => z.number({ error: `must be an integer from ${min} to ${max}` }).int().min(min).max(max);
const httpUrl = z.string({ error: 'must be an http or https URL' }).refine((text) => {
  const url = URL.parse(text);
  return url !== null && (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '';
}, 'must be an http or https URL without credentials in it');

const urlSource = z
  .strictObject({ urlEnv: envName.optional(), urlFile: path.optional(), table: z.string({ error: 'must be a table name' }).optional() })
  .refine((o) => (o.urlEnv === undefined) !== (o.urlFile === undefined), { message: 'needs exactly one of "urlEnv" (an environment variable holding the URL) or "urlFile" (a file holding it)', ...acrossFields });

const journal = z
  .strictObject({ file: path.optional(), postgres: urlSource.optional(), mysql: urlSource.optional() })
  .refine((o) => [o.file, o.postgres, o.mysql].filter((v) => v !== undefined).length === 1, { message: 'needs exactly one of "file", "postgres" or "mysql"', ...acrossFields });

const LOOP_KEYS = Object.keys({ pollIntervalMs: 0, maxCallsPerSecond: 0, claimMode: 0, hintClaimMode: 0, staffAfterAttempts: 0, grantTimeoutMs: 0 } satisfies Record<keyof DeliveryLoopSettings, 0>) as Array<keyof DeliveryLoopSettings>;
const loop = z.strictObject(Object.fromEntries(LOOP_KEYS.map((k) => [k, z.unknown().optional()])) as Record<(typeof LOOP_KEYS)[number], z.ZodOptional<z.ZodUnknown>>).superRefine((values, ctx) => {
  // The SDK's own validator, one setting at a time so every wrong one is named.
  for (const key of LOOP_KEYS) {
    try {
      checkDeliveryLoopSettings({ [key]: values[key] });
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      ctx.addIssue({ code: 'custom', path: [key], message: error.rule });
    }
  }
});

// The sink's own rule (rcon/template.ts), so a template the config accepts is one the sink
// accepts: `{{` and `}}` are literal braces (a tellraw's JSON text).
const template = (fields: readonly string[]) =>
  z
    .string({ error: 'must be a command (a string)' })
    .min(1, 'must not be empty')
    .max(1000, 'must be at most 1000 characters')
    .superRefine((t, ctx) => {
      const problem = templateProblem(t, fields);
      if (problem !== undefined) ctx.addIssue(problem);
    });
const commands = (fields: readonly string[]) =>
  z.record(z.string().regex(/^(\*|[^\s{}]{1,64})$/, 'must be a product or reward id (1 to 64 characters, no spaces) or "*"'), z.array(template(fields), { error: 'must be a list of commands' }).min(1, 'must list at least one command').max(20, 'must list at most 20 commands'), { error: 'must be an object: id → list of commands' });

const pattern = z.string({ error: 'must be a regular expression (a string)' }).max(500, 'must be at most 500 characters').superRefine((p, ctx) => {
  const problem = patternProblem(p);
  if (problem !== undefined) ctx.addIssue(problem);
});
const patterns = z.array(pattern, { error: 'must be a list of regular expressions' }).max(100, 'must list at most 100 patterns').optional();
const replies = z.strictObject(
  { done: patterns, absent: patterns, refused: patterns, unknown: patterns, informative: z.boolean({ error: 'must be true or false' }).optional() },
  { error: 'must be an object of reply patterns: done, absent, refused, unknown (lists), informative (true or false)' },
);

const rcon = z
  .strictObject({
    host: z.string({ error: 'must be a host name or address' }).min(1, 'must not be blank').default('127.0.0.1'),
    port: int(1, 65535).default(25575),
    passwordEnv: envName.optional(),
    passwordFile: path.optional(),
    timeoutMs: int(1, 600_000).default(5000),
    commands: commands(PURCHASE_PLACEHOLDERS),
    voteCommands: commands(VOTE_PLACEHOLDERS).default({}),
    players: z
      .strictObject({
        source: z.enum(['game', 'list'], { error: 'must be "game" (the game calls the HTTP API) or "list" (the bridge polls the RCON list command)' }).default('game'),
        // Absent: the game's own (list, ListPlayers, status; list for a custom game).
        listCommand: template([]).optional(),
        intervalMs: int(1000, 3_600_000).default(10_000),
      })
      .default({ source: 'game', intervalMs: 10_000 }),
    game: z.enum(GAMES, { error: `must be one of ${GAMES.join(', ')}` }).default('minecraft'),
    replies: replies.optional(),
    productReplies: z.record(z.string().regex(/^(\*|[^\s{}]{1,64})$/, 'must be a product id (1 to 64 characters, no spaces) or "*"'), replies, { error: 'must be an object: product id → reply patterns' }).optional(),
    checkOnline: z.boolean({ error: 'must be true or false' }).optional(),
  })
  .refine((o) => (o.passwordEnv === undefined) !== (o.passwordFile === undefined), { message: 'needs exactly one of "passwordEnv" (an environment variable holding the RCON password) or "passwordFile" (a file holding it)', ...acrossFields });

const webhook = z
  .strictObject({
    url: httpUrl,
    timeoutMs: int(1, 600_000).default(10_000),
    allowPlainHttp: z.boolean({ error: 'must be true or false' }).optional(),
  })
  .superRefine((o, ctx) => {
    // The bridge's token goes with every item: in clear, anyone on the path could take it.
    const url = URL.parse(o.url);
    if (url?.protocol === 'http:' && !isLoopbackHost(url.hostname) && o.allowPlainHttp !== true) {
      ctx.addIssue({ code: 'custom', path: ['url'], message: `is plain http to another host (${url.hostname}): the bridge's token would cross the network in clear; use https, or set "allowPlainHttp": true when that network is yours alone` });
    }
  });

const schema = z.strictObject({
  listen: z.strictObject({ host: z.string({ error: 'must be a host name or address' }).min(1, 'must not be blank').default('127.0.0.1'), port: int(0, 65535).default(8787) }).default({ host: '127.0.0.1', port: 8787 }),
  // The client's own rule (plain http only on loopback, no query), named with the rest.
  baseUrl: z
    .string({ error: 'must be an http or https URL' })
    .superRefine((text, ctx) => {
      try {
        checkBaseUrl(text, 'baseUrl');
      } catch (error) {
        if (!(error instanceof InvalidInputError)) throw error;
        ctx.addIssue(error.rule);
      }
    })
    .optional(),
  journal: journal.optional(),
  loop: loop.default({}),
  give: z
    .strictObject({ webhook: webhook.optional(), rcon: rcon.optional() }, { error: 'must be an object with "webhook" or "rcon"' })
    .refine((o) => (o.webhook === undefined) !== (o.rcon === undefined), { message: 'needs exactly one of "webhook" or "rcon"', ...acrossFields }),
  log: z.strictObject({ level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { error: 'must be one of fatal, error, warn, info, debug, trace, silent' }).default('info') }).default({ level: 'info' }),
  staff: staffSection.optional(),
});

const SECRET_NAME = /^(api_?key|key|token|password|passwd|pwd|secret)$|(apikey|token|password|secret)$/i;
const DATABASE_URL = /^\s*(postgres|postgresql|mysql|mariadb):\/\//i;

/** Where a secret goes instead of the config, for the field at `at`. */
function secretHint(at: string[]): string {
  const name = (at[at.length - 1] ?? '').toLowerCase();
  if (at[0] === 'journal') return 'name an environment variable with "urlEnv" or a file with "urlFile"';
  if (at[0] === 'give' && at[1] === 'rcon') return 'name an environment variable with "passwordEnv" or a file with "passwordFile"';
  if (name.includes('token')) return 'set TEAMGAMES_BRIDGE_TOKEN or TEAMGAMES_BRIDGE_TOKEN_FILE';
  if (name.includes('key')) return 'set TEAMGAMES_API_KEY or TEAMGAMES_API_KEY_FILE';
  return 'keep it in an environment variable or a file';
}

/** Fields that hold (or are named like) a secret, each a problem; they are removed from `value` so no other rule echoes them. */
function secretProblems(value: unknown, at: string[] = []): string[] {
  const problems: string[] = [];
  if (value === null || typeof value !== 'object') return problems;
  for (const [name, inner] of Object.entries(value)) {
    const here = [...at, name];
    const field = here.join('.');
    if (SECRET_NAME.test(name)) {
      problems.push(`${field}: secrets are never read from the config file (nor the command line); ${secretHint(here)}`);
      delete (value as Record<string, unknown>)[name];
    } else if (typeof inner === 'string' && DATABASE_URL.test(inner)) {
      problems.push(`${field}: a database URL is never written in the config file; ${secretHint(['journal'])}`);
      delete (value as Record<string, unknown>)[name];
    } else {
      problems.push(...secretProblems(inner, here));
    }
  }
  return problems;
}

function issueText(issue: z.core.$ZodIssue): string[] {
  const at = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') return issue.keys.map((k) => `${at === '' ? '' : `${at}.`}${k}: unknown field`);
  // A record's key: the key's own rule, not the record's.
  if (issue.code === 'invalid_key') return [`${at}: ${issue.issues[0]?.message ?? issue.message}`];
  // Every other issue has a path: the file is an object (checked first), and no rule sits on it whole.
  return [`${at}: ${issue.message}`];
}

/**
 * Checks the parsed bridge.json; relative paths are resolved against `dir`.
 * @throws UsageError listing every problem, one per line.
 */
export function checkBridgeConfig(raw: unknown, dir: string): BridgeConfig {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new UsageError('the config must be a JSON object');
  const problems = secretProblems(raw);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) problems.push(...parsed.error.issues.flatMap(issueText));
  if (problems.length > 0 || !parsed.success) throw new UsageError(`the config has ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n  ${problems.join('\n  ')}`);
  const c = parsed.data;
  const journalConfig = journalOf(c.journal ?? { file: '.teamgames-journal.jsonl' }, dir);
  const give = c.give.webhook !== undefined ? { webhook: c.give.webhook as WebhookGiveConfig } : { rcon: withFile(c.give.rcon as z.infer<typeof rcon>, 'passwordFile', dir) as RconGiveConfig };
  return {
    listen: c.listen,
    ...(c.baseUrl === undefined ? {} : { baseUrl: c.baseUrl }),
    journal: journalConfig,
    loop: c.loop as BridgeLoopConfig,
    give,
    log: c.log,
    ...(c.staff === undefined ? {} : { staff: staffConfigOf(c.staff, dir) }),
  };
}

function journalOf(j: z.infer<typeof journal>, dir: string): BridgeJournalConfig {
  if (j.file !== undefined) return { kind: 'file', path: resolve(dir, j.file) };
  const source = (j.postgres ?? j.mysql) as z.infer<typeof urlSource>;
  return {
    kind: j.postgres === undefined ? 'mysql' : 'postgres',
    ...(source.urlEnv === undefined ? {} : { urlEnv: source.urlEnv }),
    ...(source.urlFile === undefined ? {} : { urlFile: resolve(dir, source.urlFile) }),
    ...(source.table === undefined ? {} : { table: source.table }),
  };
}

function withFile<T extends object>(value: T, field: string, dir: string): T {
  const file = (value as Record<string, unknown>)[field];
  return typeof file === 'string' ? { ...value, [field]: resolve(dir, file) } : value;
}

const END_OF_INPUT = 'Unexpected end of JSON input';
const AT_POSITION = / in JSON at position (\d+)/;

/** Where JSON.parse failed on `text`: the fault's offset, and V8's words for it when they quote nothing of the text. */
function faultOf(text: string, error: unknown): { at: number; why: string } {
  // JSON.parse throws a SyntaxError, always.
  const message = (error as SyntaxError).message;
  if (message === END_OF_INPUT) return { at: text.length, why: 'the text ends too early' };
  const positioned = AT_POSITION.exec(message);
  // V8's words before the position quote JSON's own punctuation only, never the text.
  if (positioned !== null) return { at: Number(positioned[1]), why: message.slice(0, positioned.index).replace(/^\w/, (c) => c.toLowerCase()) };
  // "Unexpected token 'x', "…" is not valid JSON" says no position: the fault is where the
  // shortest prefix of the text stops failing only for ending early.
  const failsBefore = (end: number): boolean => {
    try {
      JSON.parse(text.slice(0, end));
      return false;
    } catch (inner) {
      const words = (inner as SyntaxError).message;
      const at = AT_POSITION.exec(words);
      return words !== END_OF_INPUT && (at === null || Number(at[1]) < end);
    }
  };
  let [low, high] = [0, text.length];
  while (low < high) {
    const middle = (low + high) >> 1;
    if (failsBefore(middle)) high = middle;
    else low = middle + 1;
  }
  return { at: Math.max(0, low - 1), why: 'unexpected character' };
}

/** A JSON syntax error said by line and column (1-based), never quoting the text: a secret could be there. */
function jsonFault(text: string, error: unknown): string {
  const { at, why } = faultOf(text, error);
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  const column = at - (before.lastIndexOf('\n') + 1) + 1;
  return `line ${line}, column ${column}: ${why}`;
}

/** The largest config file read: a config is a few kilobytes. */
const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * The config file's text: a regular file only (a FIFO would hang the start, a device never
 * end), opened without blocking, of at most {@link MAX_CONFIG_BYTES} (read as a secret's file is,
 * by host/secrets.ts).
 */
async function configText(file: string): Promise<string> {
  return readSmallFile(file, {
    refuse: (why) => new UsageError(`--config: cannot read ${file} (${why})`),
    maxBytes: MAX_CONFIG_BYTES,
    check: (stats) => (stats.size > MAX_CONFIG_BYTES ? `${stats.size} bytes; a config is at most ${MAX_CONFIG_BYTES}` : undefined),
  });
}

/**
 * Reads and checks the config file.
 * @throws UsageError when it cannot be read, is not JSON, or breaks a rule.
 */
export async function readBridgeConfig(file: string): Promise<BridgeConfig> {
  let text = await configText(file);
  // A byte order mark, as some Windows editors write: not part of the JSON.
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--config: ${file} is not valid JSON: ${jsonFault(text, error)}`);
  }
  return checkBridgeConfig(raw, dirname(resolve(file)));
}
