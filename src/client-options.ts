/**
 * The client's options, checked: the allow-lists derived from the options' interfaces,
 * the key and base URL from the options or the environment, the settings `withOptions`
 * may change (timeout, retries, size bound, `fetch`, `User-Agent`, `onEvent`), the
 * options every call takes, and the transport a set of settings makes. What
 * `StorefrontClient`'s constructor and methods check before anything is sent.
 *
 * @module
 * @internal
 */
import type { Credentials } from './auth.js';
import type { Operation } from './errors.js';
import type { StorefrontClientOptions, StorefrontEvent } from './types.js';
import { VERSION } from './version.js';
import type { CatalogOptions } from './wire/catalog.js';
import type { ClaimOptions } from './wire/claim.js';
import type { RequestOptions } from './wire/options.js';
import type { VoteRewardInput } from './wire/vote-reward.js';
import { envDenied, readEnv, runtimeAgent } from './internal/runtime.js';
import { Transport, type SendContext } from './internal/transport.js';
import {
  checkBaseUrl,
  checkBoolean,
  checkFunction,
  checkHeaderValue,
  checkIntegerInRange,
  checkNonBlank,
  checkOptionsObject,
  checkPlayerName,
  checkPositiveInteger,
  checkRequiredObject,
  checkSignal,
  checkTimeout,
  fail,
  MAX_API_KEY_LENGTH,
} from './internal/validate.js';

/** The production base URL. */
export const DEFAULT_BASE_URL = 'https://api.teamgames.io';

/** The environment variable read for `apiKey` when the option is absent. */
export const API_KEY_ENV = 'TEAMGAMES_API_KEY';
/** The environment variable read for `baseUrl` when the option is absent. */
export const BASE_URL_ENV = 'TEAMGAMES_BASE_URL';

// Derived from the interface: a new option cannot be left out of the allow-list. Only the
// keys are read (the values are 0, which no mutant changes).
export const CLIENT_OPTIONS = Object.keys({
  apiKey: 0,
  baseUrl: 0,
  timeoutMs: 0,
  retry: 0,
  maxResponseBytes: 0,
  catalogCacheTtlMs: 0,
  rateLimit: 0,
  now: 0,
  fetch: 0,
  userAgent: 0,
  onEvent: 0,
  journal: 0,
} satisfies Record<keyof StorefrontClientOptions, 0>);
// What `withOptions` may change: how calls are sent and observed, never which service and
// key they reach, nor what the derived client shares (guard, cache, journal, clock).
export const DERIVABLE_OPTIONS = Object.keys({
  timeoutMs: 0,
  retry: 0,
  maxResponseBytes: 0,
  fetch: 0,
  userAgent: 0,
  onEvent: 0,
} satisfies Record<keyof DerivedClientOptions, 0>);

/**
 * The options {@link StorefrontClient.withOptions} may change: how calls are sent and
 * observed. The rest (key, base URL, cache, guard, clock, journal) is shared.
 */
export type DerivedClientOptions = Pick<StorefrontClientOptions, 'timeoutMs' | 'retry' | 'maxResponseBytes' | 'fetch' | 'userAgent' | 'onEvent'>;

const MAX_RETRY = 10;
// Far above a catalog of thousands of products (about 0.5 kB each), far below what hurts.
const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
const MAX_RESPONSE_BYTES_CEILING = 256 * 1024 * 1024;

/** How a client sends its calls: what `withOptions` may change. */
export interface Settings {
  readonly timeoutMs: number;
  readonly retry: number;
  readonly maxResponseBytes: number;
  readonly fetch: typeof globalThis.fetch | undefined;
  /** The caller's own part of the User-Agent, before the SDK's. */
  readonly userAgent: string | undefined;
  readonly onEvent: ((event: StorefrontEvent) => void) | undefined;
}

export const DEFAULT_SETTINGS: Settings = {
  timeoutMs: 15_000,
  retry: 2,
  maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES,
  fetch: undefined,
  userAgent: undefined,
  onEvent: undefined,
};


/** The settings given in `opts`, checked, over `base` for those not given. */
export function checkSettings(opts: Partial<StorefrontClientOptions>, base: Settings, operation?: Operation): Settings {
  const userAgent = opts.userAgent === undefined ? undefined : checkHeaderValue(opts.userAgent, 'options.userAgent');
  return {
    timeoutMs: opts.timeoutMs === undefined ? base.timeoutMs : checkTimeout(opts.timeoutMs, 'options.timeoutMs', operation),
    retry: opts.retry === undefined ? base.retry : checkIntegerInRange(opts.retry, 0, MAX_RETRY, 'options.retry', operation),
    maxResponseBytes:
      opts.maxResponseBytes === undefined
        ? base.maxResponseBytes
        : checkIntegerInRange(opts.maxResponseBytes, 1_024, MAX_RESPONSE_BYTES_CEILING, 'options.maxResponseBytes', operation),
    fetch: checkFunction<typeof globalThis.fetch>(opts.fetch, 'options.fetch') ?? base.fetch,
    userAgent: userAgent ?? base.userAgent,
    onEvent: checkFunction<NonNullable<StorefrontClientOptions['onEvent']>>(opts.onEvent, 'options.onEvent') ?? base.onEvent,
  };
}

export function transportOf(shared: { readonly baseUrl: string; readonly credentials: Credentials }, settings: Settings): Transport {
  const sdkAgent = `teamgames-sdk/${VERSION} ${runtimeAgent()}`;
  return new Transport({
    baseUrl: shared.baseUrl,
    timeoutMs: settings.timeoutMs,
    retry: settings.retry,
    maxResponseBytes: settings.maxResponseBytes,
    fetch: settings.fetch,
    userAgent: settings.userAgent === undefined ? sdkAgent : `${settings.userAgent} ${sdkAgent}`,
    onEvent: settings.onEvent,
    credentials: shared.credentials,
  });
}

/** `options.apiKey`, else `TEAMGAMES_API_KEY`; the error names whichever was read. */
export function resolveApiKey(option: unknown): string {
  // v3 endpoints carry the raw key in a header: refuse here what fetch would refuse mid-claim.
  if (option !== undefined) return checkHeaderValue(option, 'options.apiKey', MAX_API_KEY_LENGTH);
  const fromEnv = readEnv(API_KEY_ENV);
  if (fromEnv === undefined) {
    if (envDenied(API_KEY_ENV)) {
      // Deno without --allow-env: the variable may well be set; saying "set it" misleads.
      fail('options.apiKey', `is required, and the runtime denies reading the ${API_KEY_ENV} environment variable (set or not): run Deno with --allow-env (or --allow-env=${API_KEY_ENV},${BASE_URL_ENV}), or pass { apiKey }`);
    }
    fail('options.apiKey', `is required: pass { apiKey } (the raw key from the TeamGames dashboard) or set the ${API_KEY_ENV} environment variable`);
  }
  return checkHeaderValue(fromEnv, `${API_KEY_ENV} (environment variable)`, MAX_API_KEY_LENGTH);
}

/** `options.baseUrl`, else `TEAMGAMES_BASE_URL`, else production. */
export function resolveBaseUrl(option: unknown): string {
  if (option !== undefined) return checkBaseUrl(option);
  const fromEnv = readEnv(BASE_URL_ENV);
  return fromEnv === undefined ? DEFAULT_BASE_URL : checkBaseUrl(fromEnv, `${BASE_URL_ENV} (environment variable)`);
}

export const CALL_OPTIONS = ['signal', 'timeoutMs'] as const;

/** The options every call takes, checked. */
export function checkCall(opts: Partial<RequestOptions>, op: Operation): Pick<SendContext, 'signal' | 'timeoutMs'> {
  return {
    signal: checkSignal(opts.signal, op),
    timeoutMs: opts.timeoutMs === undefined ? undefined : checkTimeout(opts.timeoutMs, 'options.timeoutMs', op),
  };
}

/** A call's `RequestOptions`, checked (no other option names allowed). */
export function callOf(options: RequestOptions | undefined, op: Operation): Pick<SendContext, 'signal' | 'timeoutMs'> {
  return checkCall(checkOptionsObject(options, CALL_OPTIONS, 'options', op), op);
}

/** `getCatalog`'s options, checked. */
export function checkCatalog(options: CatalogOptions | undefined): { categoryId: number | undefined } & Pick<SendContext, 'signal' | 'timeoutMs'> {
  const opts = checkOptionsObject(options, ['categoryId', ...CALL_OPTIONS], 'options', 'getCatalog');
  const { signal, timeoutMs } = checkCall(opts, 'getCatalog');
  const categoryId = opts.categoryId === undefined ? undefined : checkPositiveInteger(opts.categoryId, 'options.categoryId', 'getCatalog');
  return { categoryId, signal, timeoutMs };
}

/** `claim`'s player and options, checked. */
export function checkClaim(playerName: string, options: ClaimOptions | undefined): { player: string; preview: boolean; includeRawTransactions: boolean } & Pick<SendContext, 'signal' | 'timeoutMs'> {
  const op: Operation = 'claim';
  const player = checkPlayerName(playerName, 'playerName', op);
  const opts = checkOptionsObject(options, ['preview', 'includeRawTransactions', ...CALL_OPTIONS], 'options', op);
  const { signal, timeoutMs } = checkCall(opts, op);
  const preview = checkBoolean(opts.preview, 'options.preview', op) ?? false;
  const includeRawTransactions = checkBoolean(opts.includeRawTransactions, 'options.includeRawTransactions', op) ?? false;
  return { player, signal, timeoutMs, preview, includeRawTransactions };
}

/** `claimVoteReward`'s input and options, checked: the body to send (reward and amount as the service's strings). */
export function checkVoteReward(
  input: VoteRewardInput,
  options: RequestOptions | undefined,
): { body: { player: string; reward: string; amount: string }; call: Pick<SendContext, 'signal' | 'timeoutMs'> } {
  const op: Operation = 'claimVoteReward';
  const fields = checkRequiredObject(input, ['player', 'reward', 'amount'], 'player, reward and amount', 'input', op);
  const call = callOf(options, op);
  const player = checkPlayerName(fields.player, 'input.player', op);
  const reward = typeof fields.reward === 'number' ? String(checkPositiveInteger(fields.reward, 'input.reward', op)) : checkNonBlank(fields.reward, 'input.reward', op);
  const amount = fields.amount === 'all' ? 'all' : String(checkPositiveInteger(fields.amount, 'input.amount', op));
  return { body: { player, reward, amount }, call };
}
