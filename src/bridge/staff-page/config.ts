/**
 * The `staff` section of bridge.json (the staff page): checked by the config's schema,
 * which includes {@link staffSection}; its path resolved against the config's folder.
 *
 * @module
 * @internal
 */
import { resolve } from 'node:path';
import { z } from 'zod';

/** The `staff` section of bridge.json, once checked (paths absolute). */
export interface StaffPageConfig {
  /** Where the page listens: loopback by default (reach it by an SSH tunnel or a TLS proxy). */
  listen: { host: string; port: number };
  /** The accounts file (`name role hash` lines from `teamgames bridge staff-hash`), owner-only. */
  accountsFile: string;
  /** How long a login lasts, in minutes. Default 480 (a shift). */
  sessionMinutes: number;
  /** Mark the cookie `Secure`: set when staff reach the page through HTTPS (a TLS reverse proxy). */
  secureCookie: boolean;
}

const int = (min: number, max: number) => z.number({ error: `must be an integer from ${min} to ${max}` }).int(`must be an integer from ${min} to ${max}`).min(min, `must be an integer from ${min} to ${max}`).max(max, `must be an integer from ${min} to ${max}`);

/** The section's schema (strict: an unknown field is named). */
export const staffSection = z.strictObject({
  listen: z.strictObject({ host: z.string({ error: 'must be a host name or address' }).min(1, 'must not be blank').default('127.0.0.1'), port: int(0, 65535).default(8788) }).default({ host: '127.0.0.1', port: 8788 }),
  accountsFile: z.string({ error: 'must be the path of the staff accounts file (made with teamgames bridge staff-hash)' }).trim().min(1, 'must not be blank').max(4096, 'must be at most 4096 characters'),
  sessionMinutes: int(1, 7 * 24 * 60).default(480),
  secureCookie: z.boolean({ error: 'must be true (staff reach the page through HTTPS) or false' }).default(false),
});

/** The checked section, its accounts file made absolute against `dir`. */
export function staffConfigOf(section: z.infer<typeof staffSection>, dir: string): StaffPageConfig {
  return { ...section, accountsFile: resolve(dir, section.accountsFile) };
}
