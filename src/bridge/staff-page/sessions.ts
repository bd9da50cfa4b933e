/**
 * The staff page's sessions and its brake on wrong passwords, in memory (a restart logs
 * everyone out). A session is a random id in an HttpOnly cookie, with the account, its role
 * and a CSRF token; it ends `ttlMs` after the login, measured on the monotonic clock, and is
 * forgotten then (a cookie copied before cannot come back). Wrong passwords are slowed per
 * account and per address: after each one, the next try of that account, and from that
 * address, waits twice as long as the last (1 s, 2 s, 4 s … at most 5 min), answered at once
 * with the time left and never checked meanwhile. Both maps are bounded.
 *
 * @module
 * @internal
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { StaffRole } from './accounts.js';

/** A logged-in staff member. */
export interface StaffSession {
  id: string;
  name: string;
  role: StaffRole;
  /** The token the resolve form carries back. */
  csrf: string;
  /** When it ends, on the monotonic clock (ms). */
  endsAt: number;
}

const MAX_SESSIONS = 1_000;
const MAX_TRACKED = 10_000;
const FIRST_DELAY_MS = 1_000;
const MAX_DELAY_MS = 5 * 60_000;

const token = () => randomBytes(32).toString('base64url');
const digest = (text: string) => createHash('sha256').update(text).digest();

/** Whether two secrets are equal, in a time that does not tell where they differ. */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/** The sessions of one page. `now` is a monotonic clock in ms. */
export class Sessions {
  readonly #byId = new Map<string, StaffSession>();
  constructor(
    readonly ttlMs: number,
    readonly now: () => number,
  ) {}

  /** A new session for the account (the oldest one is dropped past the bound). */
  open(name: string, role: StaffRole): StaffSession {
    this.#sweep();
    if (this.#byId.size >= MAX_SESSIONS) this.#byId.delete(this.#byId.keys().next().value as string);
    const session: StaffSession = { id: token(), name, role, csrf: token(), endsAt: this.now() + this.ttlMs };
    this.#byId.set(session.id, session);
    return session;
  }

  /** The live session of a cookie's id; an ended one is forgotten and not returned. */
  find(id: string | undefined): StaffSession | undefined {
    if (id === undefined) return undefined;
    const session = this.#byId.get(id);
    if (session === undefined) return undefined;
    if (this.now() >= session.endsAt) {
      this.#byId.delete(id);
      return undefined;
    }
    return session;
  }

  /** Ends a session (log out). */
  close(id: string): void {
    this.#byId.delete(id);
  }

  /** How many sessions are held (ended ones included until swept). */
  get size(): number {
    return this.#byId.size;
  }

  #sweep(): void {
    const now = this.now();
    for (const [id, s] of this.#byId) if (now >= s.endsAt) this.#byId.delete(id);
  }
}

interface Strikes {
  failures: number;
  /** No try before this, on the monotonic clock. */
  until: number;
}

/** The brake on wrong passwords, per account and per address. */
export class LoginBrake {
  readonly #strikes = new Map<string, Strikes>();
  constructor(readonly now: () => number) {}

  /** How long (ms) a try of `account` from `address` must still wait; `0`: it may go. */
  wait(account: string, address: string): number {
    const now = this.now();
    let longest = 0;
    for (const key of [`account:${account}`, `address:${address}`]) {
      const s = this.#strikes.get(key);
      if (s !== undefined) longest = Math.max(longest, s.until - now);
    }
    return longest;
  }

  /** A wrong password: the account and the address wait longer. Returns the wait set (ms). */
  failed(account: string, address: string): number {
    let longest = 0;
    for (const key of [`account:${account}`, `address:${address}`]) {
      const s = this.#strikes.get(key) ?? { failures: 0, until: 0 };
      s.failures += 1;
      const delay = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.min(s.failures - 1, 20));
      s.until = this.now() + delay;
      this.#strikes.delete(key);
      if (this.#strikes.size >= MAX_TRACKED) this.#strikes.delete(this.#strikes.keys().next().value as string);
      this.#strikes.set(key, s);
      longest = Math.max(longest, delay);
    }
    return longest;
  }

  /** A right password: the account's strikes are forgotten (the address keeps its own). */
  succeeded(account: string): void {
    this.#strikes.delete(`account:${account}`);
  }
}
