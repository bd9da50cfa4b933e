/**
 * The bridge's log: JSON lines on stdout through pino, one object per event. Every message
 * and every string of every field goes through one redaction first: the API key in every
 * form the SDK's redaction knows (raw, Base64, base64url, URL-encoded), the bridge's token,
 * the database URL and its password, the RCON password. Errors are logged as their name,
 * code and message (plain-error.ts: never a stack holding a request's headers). It imports
 * nothing else of the bridge, so every room may log through it.
 *
 * @module
 */
import { pino, stdTimeFunctions, type DestinationStream } from 'pino';
import { URL_PASSWORD, urlSecrets } from '../host/databases.js';
import { NO_SECRET, keyRedactor, redactValue, type Redact } from '../host/redact.js';
import { plainError } from './plain-error.js';

/** The log levels (pino's): how much the log says, `log.level` in bridge.json. */
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** The secrets {@link secretRedactor} removes: the bridge's (`BridgeSecrets`), any of them. */
export interface SecretsToHide {
  apiKey?: string;
  token?: string;
  databaseUrl?: string;
  rconPassword?: string;
}

/** Extra fields of a log line. */
export type LogFields = Record<string, unknown>;

/** The bridge's logger, as the sinks (webhook, RCON) receive it. */
export interface BridgeLogger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** Writes what is buffered (before the process exits). */
  flush(): void;
}

const REDACTED = '<redacted>';

/** Every form of every secret the bridge holds, replaced by `<redacted>`. */
export function secretRedactor(secrets: SecretsToHide): Redact {
  const words: string[] = [];
  const add = (secret: string | undefined) => {
    if (secret === undefined || secret.length < 4) return;
    for (const form of [secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64'), Buffer.from(secret).toString('base64url')]) words.push(form);
  };
  add(secrets.token);
  add(secrets.rconPassword);
  if (secrets.databaseUrl !== undefined) {
    add(secrets.databaseUrl);
    try {
      const url = new URL(secrets.databaseUrl);
      const found = urlSecrets(url);
      for (const s of found) {
        add(s);
        add(decodeURIComponent(s));
      }
      // A parameter's value as the URL spells it (`k3y%21`): the parsed one above is decoded.
      for (const pair of url.search.slice(1).split('&')) {
        const raw = pair.slice(pair.indexOf('=') + 1);
        // Never null: the parameter `v` is there.
        if (found.includes(String(new URLSearchParams(`v=${raw}`).get('v')))) add(raw);
      }
    } catch {
      // Not a URL: the whole text is masked above.
    }
  }
  // Longest first, so a secret inside a longer one (a password inside its URL) never leaves a piece behind.
  words.sort((a, b) => b.length - a.length);
  // No key (absent or blank): nothing of it to remove.
  const key = secrets.apiKey ? keyRedactor(secrets.apiKey) : NO_SECRET;
  return (text) => {
    let out = key(text);
    for (const w of words) out = out.split(w).join(REDACTED);
    return out.replace(URL_PASSWORD, '$1***@');
  };
}

/**
 * A logger writing JSON lines to `destination` (default stdout, written synchronously so
 * nothing is lost at exit).
 */
export function createLogger(level: LogLevel, redact: Redact, destination?: DestinationStream): BridgeLogger {
  const logger = pino(
    {
      level,
      base: { name: 'teamgames-bridge', pid: process.pid },
      timestamp: stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // A second net under the redaction of every string below: headers never logged.
      redact: { paths: ['*.authorization', '*.headers.authorization', '*.headers["x-api-key"]'], censor: REDACTED },
    },
    destination ?? pino.destination({ fd: 1, sync: true }),
  );
  const line = (method: 'debug' | 'info' | 'warn' | 'error') => (message: string, fields?: LogFields) => {
    if (!logger.isLevelEnabled(method)) return;
    const clean: LogFields = {};
    if (fields !== undefined) for (const [k, v] of Object.entries(fields)) clean[k] = plainError(v);
    logger[method](redactValue(clean, redact) as LogFields, redact(message));
  };
  return { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error'), flush: () => logger.flush() };
}
