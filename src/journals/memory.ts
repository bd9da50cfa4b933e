/**
 * The journal in memory, for tests.
 *
 * @module
 */
import { checkIds, checkResolution, copyEntries, resolvedWindow, unresolvedOutcome, type DeliveryJournal, type JournalEntry, type WindowResolution, type WindowResolveOutcome } from './contract.js';
import { entryChecks } from './lazy-checks.js';
import { checkSharedHintArguments, HINT_LIMIT, type CheckoutHint, type SharedCheckoutHint } from './checkout-hints.js';

/** A checkout hint as the memory journal keeps it: its times on the process's monotonic clock. */
interface KeptHint {
  playerName: string;
  transactionId: string | undefined;
  createdAt: number;
  expiresAt: number;
}

/**
 * A journal in memory: for tests and for games whose own state is not durable either.
 * It does not survive the process; use {@link FileJournal} (or a database) in production.
 *
 * @example
 * ```ts
 * const client = new StorefrontClient({ apiKey: 'test-key', journal: new MemoryJournal() });
 * ```
 * @see [Delivering purchases in game: the journals](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/delivering-purchases.md#the-journals)
 */
export class MemoryJournal implements DeliveryJournal {
  // Every call waits once for the entries' checks to load (at hand after the first): calls
  // take effect in the order they were made.
  readonly #entries = new Map<string, JournalEntry>();
  /** The checkout hints, by player and transaction, oldest first; at most `HINT_LIMIT`. */
  readonly #hints = new Map<string, KeptHint>();

  /**
   * Records entries (copies); an entry with a known `deliveryId` replaces it in place.
   *
   * @throws InvalidInputError when an entry is not a {@link JournalEntry}; nothing was recorded.
   */
  async append(entries: readonly JournalEntry[]): Promise<void> {
    const copies = copyEntries(entries);
    const { checkEntries } = await entryChecks();
    for (const entry of checkEntries(copies)) this.#entries.set(entry.deliveryId, entry);
  }

  /** The entries not acknowledged (copies), oldest first. */
  async pending(playerName?: string): Promise<JournalEntry[]> {
    await entryChecks();
    const out: JournalEntry[] = [];
    for (const entry of this.#entries.values()) {
      if (playerName === undefined || entry.playerName === playerName) out.push(structuredClone(entry));
    }
    return out;
  }

  /**
   * Removes entries. Unknown ids are ignored.
   *
   * @throws InvalidInputError when `deliveryIds` is not an array; nothing was removed.
   */
  async acknowledge(deliveryIds: readonly string[]): Promise<void> {
    const ids = checkIds(deliveryIds);
    await entryChecks();
    for (const id of ids) this.#entries.delete(id);
  }

  /**
   * Closes the window `windowId` only while it is open (compare-and-set: the check and the
   * change happen in one synchronous step); see {@link DeliveryJournal.resolveWindow}.
   *
   * @throws InvalidInputError when `resolution` is not `{ by, at, note }`; nothing was written.
   */
  async resolveWindow(windowId: string, resolution: WindowResolution): Promise<WindowResolveOutcome> {
    const checked = checkResolution(windowId, resolution);
    await entryChecks();
    const entry = this.#entries.get(windowId);
    const window = resolvedWindow(entry, checked);
    if (window === undefined) return structuredClone(unresolvedOutcome(entry));
    this.#entries.set(windowId, structuredClone(window));
    return { outcome: 'resolved', window };
  }

  /**
   * Records a checkout hint (see {@link DeliveryJournal.addCheckoutHint}), its times on the
   * process's monotonic clock: for tests, and for a shop and a game in one process. Holds
   * at most 10,000 hints, the oldest dropped first.
   *
   * @example
   * ```ts
   * await journal.addCheckoutHint('Player123', { transactionId: result.transactionId });
   * ```
   * @throws InvalidInputError when the player's name or the hint is not valid; nothing was written.
   */
  async addCheckoutHint(playerName: string, hint?: CheckoutHint): Promise<void> {
    const checked = checkSharedHintArguments(playerName, hint);
    const now = performance.now();
    const key = `${checked.playerName}\u0000${checked.transactionId ?? ''}`;
    const kept = this.#hints.get(key);
    // Written again while it lives, a hint changes nothing: it never extends itself.
    if (kept !== undefined && kept.expiresAt > now) return;
    this.#hints.delete(key);
    this.#hints.set(key, { playerName: checked.playerName, transactionId: checked.transactionId, createdAt: now, expiresAt: now + checked.expiresInMs });
    if (this.#hints.size > HINT_LIMIT) this.#hints.delete(this.#hints.keys().next().value as string);
  }

  /**
   * The checkout hints not expired, oldest first, each with its age and remaining life in
   * ms (see {@link DeliveryJournal.liveCheckoutHints}); the expired ones are dropped.
   *
   * @example
   * ```ts
   * const hints = await journal.liveCheckoutHints();
   * ```
   */
  async liveCheckoutHints(): Promise<SharedCheckoutHint[]> {
    const now = performance.now();
    const live: SharedCheckoutHint[] = [];
    for (const [key, hint] of this.#hints) {
      if (hint.expiresAt <= now) {
        this.#hints.delete(key);
        continue;
      }
      const times = { ageMs: now - hint.createdAt, remainingMs: hint.expiresAt - now };
      live.push(hint.transactionId === undefined ? { playerName: hint.playerName, ...times } : { playerName: hint.playerName, transactionId: hint.transactionId, ...times });
    }
    return live;
  }

  /**
   * Deletes the checkout hint of the player and transaction (`undefined`: the hint naming
   * none), once a delivery satisfied it (see {@link DeliveryJournal.endCheckoutHint}); a
   * hint that is not there is ignored.
   *
   * @example
   * ```ts
   * await journal.endCheckoutHint('Player123', transactionId);
   * ```
   */
  async endCheckoutHint(playerName: string, transactionId?: string): Promise<void> {
    this.#hints.delete(`${playerName}\u0000${transactionId ?? ''}`);
  }

  /** How many entries are pending, for tests and metrics. */
  get size(): number {
    return this.#entries.size;
  }
}
