/**
 * Crash-safe delivery: {@link StorefrontClient.deliver} and
 * {@link StorefrontClient.resumeDeliveries}, over a {@link DeliveryJournal}.
 *
 * The service marks a purchase delivered when the claim call succeeds, not when the game
 * grants the item. `deliver` closes that gap: what it is about to claim, or has claimed,
 * is written to the journal (durably) before the first grant, and each line is
 * acknowledged after its grant returns. Whatever happens in between (a grant that throws,
 * a crash) leaves the line in the journal, and the next `deliver` for that player, or
 * `resumeDeliveries` at startup, grants it again. A line is never granted again once
 * acknowledged.
 *
 * Two modes:
 * - `exactlyOnce` (the default): preview first (with the raw rows, for their invoices),
 *   journal the intent, wait out the service's 10 s window, then claim. When the claim's
 *   answer is lost, the next run previews again: intended invoices no longer pending were
 *   delivered by the lost claim and are granted from the journal; those still pending are
 *   claimed normally. What the lost claim may have taken beyond the previewed lines is
 *   reported as an {@link UnverifiedWindow}.
 * - `fast`: journal a claim mark, claim, journal the lines, grant. One call; a claim whose
 *   answer is lost (or a crash before its lines reach the journal) loses what it
 *   delivered, reported as an {@link UnverifiedWindow} from the mark.
 *
 * Order is the whole design: the journal proves it can write before anything is claimed,
 * and once a claim succeeded its lines are granted from memory even when the journal
 * fails (reported as `journalError`, the write retried on the next call).
 *
 * @module
 */
import { resolve } from 'node:path';
import { ENDPOINTS } from '../endpoints.js';
import { JournalError, isStorefrontError, NotReconciledError, type Operation, type StorefrontError } from '../errors.js';
import { unusableAnswer } from '../internal/to-error.js';
import type { StorefrontEvent } from '../types.js';
import { CLAIM_WINDOW_MS, type ClaimOptions, type ClaimResult, type Transaction } from '../wire/claim.js';
import { FileJournal } from '../journals/file/journal.js';
import { DEFAULT_JOURNAL_PATH, entryProblem, type DeliveryJournal, type JournalClaimMark, type JournalEntry, type JournalLine, type JournalWindow, type WindowCause } from '../journals/contract.js';
import { checkDeliverOptions, checkGrant, checkResumeOptions, pause, type Control } from './options.js';
import { PlayerLocks } from './player-locks.js';
import { deliveryReport, failed, journalOutcome, linesOf, mergedWindows, newRun, outcomeOf, ERROR_MESSAGE, type Run, type RunExtras, type RunVia, type StepOutcome } from './report.js';
import { GrantTimeoutError, type DeliveredItem, type DeliveryMode, type DeliveryReport, type GrantFunction, type ResumeReport, type UnverifiedWindow } from './types.js';
import { fail } from '../internal/validate.js';

// One FileJournal per path in the process: a file journal refuses a second owner.
const defaultJournals = new Map<string, FileJournal>();

/** What the engine needs from the clients that share it. @internal */
export interface DeliveryEngineConfig {
  /** Epoch ms, for the timestamps written to the journal and reported. */
  now: () => number;
  /** A monotonic clock for intervals (the client's: `now` when injected, `performance.now()` otherwise). */
  monotonic: () => number;
  journal: DeliveryJournal | undefined;
}

/**
 * What every client on one journal shares, whichever engine it came from: two clients on
 * one journal must not interleave for a player, nor forget each other's unwritten lines.
 */
interface Shared {
  /** The per-player order. */
  locks: PlayerLocks;
  /** Claimed lines (and settled intents) the journal failed to record: granted from here, written again on the next call. */
  unjournaled: Map<string, JournalEntry>;
  /** Lines whose grant outlived `grantTimeoutMs` and still runs: never granted a second time meanwhile. */
  granting: Set<string>;
  /** Lines the game was given whose acknowledgement the journal has not taken yet: never given again by this process. */
  given: Set<string>;
  /** When each player's whole list of undelivered purchases was last seen (a preview's or a claim's answer). */
  seen: Map<string, SeenAt>;
  /** The delivery loop running on this journal, if any: one per journal in a process. */
  loop: object | undefined;
}

/** A moment on both clocks: the wall time to stamp, the monotonic time to measure from. */
interface SeenAt {
  wall: number;
  mono: number;
}

/** Players whose last-seen moment is remembered; the oldest are forgotten first (their next window starts at 0). */
const SEEN_LIMIT = 100_000;

const shared = new WeakMap<DeliveryJournal, Shared>();

function sharedOf(journal: DeliveryJournal): Shared {
  let state = shared.get(journal);
  if (state === undefined) shared.set(journal, (state = { locks: new PlayerLocks(), unjournaled: new Map(), granting: new Set(), given: new Set(), seen: new Map(), loop: undefined }));
  return state;
}

/** The per-player order every client of `journal` shares; vote rewards queue in it too. @internal */
export function playerLocksOf(journal: DeliveryJournal): PlayerLocks {
  return sharedOf(journal).locks;
}

/** What a preview found: the lines still pending, and the open intents the journal held (those a lost claim took are granted by then). */
type Reconciled =
  | { ok: true; pending: Map<string, Transaction>; intents: JournalLine[]; moment: SeenAt; answeredAt: number; outcome: StepOutcome }
  | { ok: false; outcome: StepOutcome };

/**
 * The engine behind `deliver` and `resumeDeliveries`: one per client and the clients
 * derived from it (`withOptions`), serializing the work per player so two calls for one
 * player never grant the same line concurrently. Each call names the client it runs for
 * (its claim and its `onEvent`).
 * @internal
 */
export class DeliveryEngine {
  readonly #config: DeliveryEngineConfig;
  readonly #monotonic: () => number;
  #journal: DeliveryJournal | undefined;

  constructor(config: DeliveryEngineConfig) {
    this.#config = config;
    this.#monotonic = config.monotonic;
    this.#journal = config.journal;
  }

  /** What every user of this engine's journal shares. */
  get #shared(): Shared {
    return sharedOf(this.journal);
  }

  /** True when the calling code runs inside a delivery of `player` on this journal (a grant, an `onEvent`). */
  holds(player: string): boolean {
    return this.#shared.locks.holds(player);
  }

  /**
   * Registers `loop` as the journal's one delivery loop in this process; returns the loop
   * already running, if any (then nothing is registered). `release` undoes it.
   */
  claimLoop(loop: object): object | undefined {
    const state = this.#shared;
    if (state.loop !== undefined && state.loop !== loop) return state.loop;
    state.loop = loop;
    return undefined;
  }

  releaseLoop(loop: object): void {
    const state = this.#shared;
    if (state.loop === loop) state.loop = undefined;
  }

  /** A journal's failure as a {@link JournalError} of the delivery loop. */
  journalErrorOf(error: unknown): JournalError {
    return journalErrorOf('startDeliveryLoop', error, undefined);
  }

  /** The wall clock the journal's timestamps are on (epoch ms). */
  wallNow(): number {
    return this.#config.now();
  }

  /**
   * What is still to do for `player`: the journal's entries and the claimed lines only memory
   * holds (the journal refused them). Rejects with the journal's failure, checked entries only.
   */
  async entriesOf(player: string): Promise<JournalEntry[]> {
    const entries = checked(await this.journal.pending(player));
    const inMemory = [...this.#shared.unjournaled.values()].filter((e) => e.playerName === player && !entries.some((j) => j.deliveryId === e.deliveryId));
    return [...entries, ...inMemory];
  }

  /** The claimed lines of `player` only memory holds (the journal refused them). */
  remembered(player: string): JournalEntry[] {
    return [...this.#shared.unjournaled.values()].filter((e) => e.playerName === player);
  }

  /** The journal; the default file journal is opened on first use, never at construction. */
  get journal(): DeliveryJournal {
    if (this.#journal === undefined) {
      const path = resolve(DEFAULT_JOURNAL_PATH);
      let journal = defaultJournals.get(path);
      if (journal === undefined) defaultJournals.set(path, (journal = new FileJournal(path)));
      this.#journal = journal;
    }
    return this.#journal;
  }

  async deliver(via: RunVia, playerName: unknown, grant: unknown, options: unknown, extras: RunExtras = {}): Promise<DeliveryReport> {
    const { player, mode, control } = checkDeliverOptions(playerName, options);
    const grantFn = checkGrant(grant, 'deliver');
    const { locks } = this.#shared;
    refuseReentry(locks, player, 'deliver');
    return locks.run(player, control.signal, async () => {
      const run = newRun('deliver', via, extras);
      const locked = await this.#acrossNodes(run, player, control, () => this.#deliver(run, player, grantFn, mode, control));
      return locked.ok ? locked.value : this.#report(run, player, journalOutcome(run), await this.#pendingCount(run, player));
    });
  }

  async resume(via: RunVia, grant: unknown, options: unknown): Promise<ResumeReport> {
    const grantFn = checkGrant(grant, 'resumeDeliveries');
    const control = checkResumeOptions(options);
    const run = newRun('resumeDeliveries', via);
    let all: JournalEntry[];
    try {
      all = checked(await this.journal.pending());
    } catch (error) {
      // Nothing can be resumed from a journal that cannot be read: say so at startup.
      throw this.#journalFailed(run, undefined, error);
    }
    const { locks, unjournaled } = this.#shared;
    // A player with only windows or settled intents has nothing to resume: never visited (nor locked).
    const players = new Set([...all, ...unjournaled.values()].filter(isWork).map((e) => e.playerName));
    const errors: ResumeReport['errors'] = [];
    for (const player of players) {
      refuseReentry(locks, player, 'resumeDeliveries');
      const left = await locks.run(player, control.signal, async () => {
        const locked = await this.#acrossNodes(run, player, control, async (): Promise<StorefrontError | undefined> => {
          const settled = await this.#settle(run, player, grantFn, control);
          if (!settled.ok) return settled.error;
          if (!settled.entries.some(isOpenIntent)) return undefined;
          const reconciled = await this.#reconcile(run, player, grantFn, control);
          if (reconciled.ok) return undefined;
          return reconciled.outcome.error ?? new NotReconciledError(run.operation, player, reconciled.outcome.code);
        });
        // The player's lock could not be had: nothing was done for them.
        return locked.ok ? locked.value : locked.error;
      });
      if (left !== undefined) errors.push({ playerName: player, error: left });
    }
    const pending = await this.#pendingCount(run, undefined);
    return { granted: run.granted, failed: run.failed, pending, errors, unverified: mergedWindows(run.unverified), ...(run.journalError ? { journalError: run.journalError } : {}) };
  }

  async #deliver(run: Run, player: string, grant: GrantFunction, mode: DeliveryMode, control: Control): Promise<DeliveryReport> {
    const settled = await this.#settle(run, player, grant, control);
    let outcome: StepOutcome;
    if (!settled.ok || run.journalError !== undefined) {
      // The journal cannot record a claim now: claim nothing (what was already claimed is granted above).
      outcome = journalOutcome(run);
    } else if (mode === 'exactlyOnce' || settled.entries.some(isOpenIntent)) {
      outcome = await this.#exactlyOnce(run, player, grant, control);
    } else {
      outcome = await this.#fast(run, player, grant, control);
    }
    return this.#report(run, player, outcome, await this.#pendingCount(run, player));
  }

  /** The run's report; the player's texts say staff are checking while a window is known. */
  #report(run: Run, player: string, outcome: StepOutcome, pending: number): DeliveryReport {
    const open = [...this.#shared.unjournaled.values()].some((e) => e.playerName === player && e.state === 'unverified');
    return deliveryReport(run, outcome, pending, run.windowOpen === true || open);
  }

  /**
   * Finishes what earlier calls left for this player: lines kept in memory are written
   * again, claim marks left by a crash or a lost answer are reported, settled intents are
   * dropped, claimed lines are granted. Returns the player's journal entries, or the
   * journal's error when it cannot be read.
   */
  async #settle(run: Run, player: string, grant: GrantFunction, control: Control): Promise<{ ok: true; entries: JournalEntry[] } | { ok: false; error: JournalError }> {
    const { unjournaled } = this.#shared;
    const remembered = [...unjournaled.values()].filter((e) => e.playerName === player);
    if (remembered.length > 0 && (await this.#write(run, player, (journal) => journal.append(remembered)))) {
      for (const entry of remembered) unjournaled.delete(entry.deliveryId);
    }
    let entries: JournalEntry[];
    try {
      entries = checked(await this.journal.pending(player));
    } catch (error) {
      const journalError = this.#journalFailed(run, player, error);
      await this.#grantAll(run, remembered.filter(isClaimed), grant, control);
      return { ok: false, error: journalError };
    }
    const marks = entries.filter((e): e is JournalClaimMark => e.state === 'claiming');
    // A mark whose lines only memory holds (the journal still refuses them) stays until they
    // are granted or written: dropped now, a crash would leave no trace of them.
    const held = marks.filter((mark) => linesInMemory(unjournaled, mark));
    const orphans = marks.filter((mark) => !held.includes(mark) && !entries.some((e) => e.deliveryId.startsWith(`${mark.deliveryId}:`)));
    // Each claim could take what was completed since the list it followed was seen (a mark
    // without that moment: since ever).
    if (orphans.length > 0) {
      const start = earliest(orphans.map((m) => m.since ?? 0));
      const known = this.#shared.seen.get(player);
      await this.#reportUnverified(run, player, known?.wall === start ? known : start, 'claimMark');
    }
    // A window staff have not resolved yet: the player's texts say staff are checking.
    // (A vote reward's window is about points, not purchases: the purchase texts stay as they are.)
    if (entries.some((e) => e.state === 'unverified' && e.cause !== 'lostVote')) run.windowOpen = true;
    // Intents a claim settled (its lines were journaled in the same append): nothing to reconcile.
    const done = [...marks.filter((mark) => !held.includes(mark)), ...entries.filter((e) => e.state === 'intended' && e.settled === true)];
    if (done.length > 0) await this.#write(run, player, (journal) => journal.acknowledge(done.map((e) => e.deliveryId)));
    const claimed = entries.filter(isClaimed);
    const inMemory = [...unjournaled.values()].filter((e) => e.playerName === player && isClaimed(e) && !claimed.some((c) => c.deliveryId === e.deliveryId));
    await this.#grantAll(run, [...claimed, ...(inMemory as JournalLine[])], grant, control);
    // Marks whose lines the game has now been given leave nothing to verify.
    const granted = held.filter((mark) => !linesInMemory(unjournaled, mark));
    if (granted.length > 0) await this.#write(run, player, (journal) => journal.acknowledge(granted.map((e) => e.deliveryId)));
    return { ok: true, entries };
  }

  /** Fast mode: mark → claim → journal the lines → drop the mark → grant → acknowledge. */
  async #fast(run: Run, player: string, grant: GrantFunction, control: Control): Promise<StepOutcome> {
    // What the claim can take unseen was completed after the player's list was last seen.
    const seen = this.#shared.seen.get(player);
    const mark: JournalClaimMark = { deliveryId: `claim:${globalThis.crypto.randomUUID()}`, playerName: player, state: 'claiming', recordedAt: this.#config.now(), ...(seen === undefined ? {} : { since: seen.wall }) };
    const sentAt = this.#moment();
    // The mark is the durable record that comes first: a full disk stops the claim here.
    if (!(await this.#write(run, player, (journal) => journal.append([mark])))) return journalOutcome(run);
    let result: ClaimResult;
    try {
      result = await this.#claim(run, player, {}, control);
    } catch (error) {
      if (isStorefrontError(error, 'CLAIM_OUTCOME_UNKNOWN')) await this.#reportUnverified(run, player, seen ?? 0, 'claimMark');
      await this.#write(run, player, (journal) => journal.acknowledge([mark.deliveryId]));
      return failed(error);
    }
    if (result.code !== 'SUCCESS') {
      await this.#write(run, player, (journal) => journal.acknowledge([mark.deliveryId]));
      return outcomeOf(result);
    }
    this.#seen(player, sentAt);
    const lines = result.claims.map((item, index) => this.#line(`${mark.deliveryId}:${index}`, player, 'claimed', item));
    // One append, all or nothing: a mark with any line of its claim had all of them journaled.
    const journaled = await this.#record(run, player, lines);
    if (journaled) await this.#write(run, player, (journal) => journal.acknowledge([mark.deliveryId]));
    await this.#grantAll(run, lines, grant, control);
    // Lines the journal could not take but the game granted leave nothing to verify.
    const { unjournaled } = this.#shared;
    if (!journaled && lines.every((line) => !unjournaled.has(line.deliveryId))) {
      await this.#write(run, player, (journal) => journal.acknowledge([mark.deliveryId]));
    }
    return { code: 'SUCCESS', message: result.message };
  }

  /** Exactly-once mode: preview → reconcile → journal the intent → wait → claim → grant. */
  async #exactlyOnce(run: Run, player: string, grant: GrantFunction, control: Control): Promise<StepOutcome> {
    const reconciled = await this.#reconcile(run, player, grant, control);
    if (!reconciled.ok || reconciled.pending.size === 0) return reconciled.outcome;
    if (run.journalError !== undefined) return journalOutcome(run);

    // An intent another node journaled stays that node's: never overwritten, so a claim of
    // ours that finds nothing cannot settle it (its lost claim may have taken the line).
    const node = this.journal.nodeId;
    const foreign = new Set(reconciled.intents.filter((e) => e.node !== node).map((e) => e.invoice));
    const intents = [...reconciled.pending]
      .filter(([invoice]) => !foreign.has(invoice))
      .map(([invoice, item]) => ({ ...this.#line(`invoice:${invoice}`, player, 'intended', item, invoice), previewedAt: reconciled.moment.wall, ...(node === undefined ? {} : { node }) }));
    if (!(await this.#write(run, player, (journal) => journal.append(intents)))) return journalOutcome(run);
    this.#seen(player, reconciled.moment);
    // The service opened the window when the preview arrived, which is before its answer
    // was back here: timing from the answer never claims too early. Measured on the
    // monotonic clock, and never longer than the window, whatever the wall clock does.
    const wait = Math.min(CLAIM_WINDOW_MS, CLAIM_WINDOW_MS - (this.#monotonic() - reconciled.answeredAt));
    if (wait > 0) await pause(control, wait);

    let result: ClaimResult;
    const claimSentAt = this.#moment();
    try {
      result = await this.#claim(run, player, { includeRawTransactions: true }, control);
    } catch (error) {
      // The intents stay: the next run's preview tells what the lost claim did.
      return failed(error);
    }
    if (result.code === 'NO_ITEMS' || result.code === 'ALREADY_CLAIMED') {
      // We hold this player's lock, so the previewed lines went to another claimer.
      await this.#write(run, player, (journal) => journal.acknowledge(intents.map((e) => e.deliveryId)));
      return outcomeOf(result);
    }
    if (result.code !== 'SUCCESS') return outcomeOf(result);
    this.#seen(player, claimSentAt);

    const claimed = this.#claimedLines(player, result);
    // The claimed lines replace the intents in one append, all or nothing: an intent of the
    // same invoice is overwritten in place, the others (the answer had no usable invoices,
    // or another claimer took them) are written again as settled. A crash before the
    // append leaves every intent open, so the next preview finds them delivered and grants
    // them (reporting the window); a crash after it leaves the lines to grant and the
    // settled intents to drop. Never one without the other.
    const ids = new Set(claimed.map((e) => e.deliveryId));
    const gone = intents.filter((e) => !ids.has(e.deliveryId));
    const recorded = await this.#record(run, player, [...claimed, ...gone.map((e) => ({ ...e, settled: true }))]);
    // Acknowledging no id changes nothing: no count check before it.
    if (recorded) await this.#write(run, player, (journal) => journal.acknowledge(gone.map((e) => e.deliveryId)));
    await this.#grantAll(run, claimed, grant, control);
    return { code: 'SUCCESS', message: result.message };
  }

  /**
   * Previews with the raw rows and settles the intents an earlier run left: the ones no
   * longer pending were delivered by a claim whose answer was lost, so they are granted
   * from the journal now, and the time that claim could have taken more is reported.
   */
  async #reconcile(run: Run, player: string, grant: GrantFunction, control: Control): Promise<Reconciled> {
    const moment = this.#moment();
    let preview: ClaimResult;
    try {
      preview = await this.#claim(run, player, { preview: true, includeRawTransactions: true }, control);
    } catch (error) {
      return { ok: false, outcome: failed(error) };
    }
    const answeredAt = this.#monotonic();
    let pending = new Map<string, Transaction>();
    const delivered: JournalLine[] = [];
    if (preview.code === 'PREVIEW') {
      const rows = linesOf(preview);
      if (rows === undefined) {
        const error = unusableAnswer(ENDPOINTS.claim, player, 'the preview did not list an invoice for every line (rawTransactions), so exactly-once delivery cannot track them');
        return { ok: false, outcome: { code: 'ERROR', message: ERROR_MESSAGE, error } };
      }
      pending = rows;
    } else if (preview.code === 'SUCCESS') {
      // A preview answered like a claim (a misbehaving service or proxy): the service says
      // it delivered these lines, so they are journaled and granted like a claim's.
      delivered.push(...this.#claimedLines(player, preview));
      run.error ??= unusableAnswer(ENDPOINTS.claim, player, `the preview answered SUCCESS with ${preview.claims.length} item(s); they were treated as delivered, journaled and granted`);
    } else if (preview.code !== 'NO_ITEMS' && preview.code !== 'ALREADY_CLAIMED') {
      return { ok: false, outcome: outcomeOf(preview) };
    }

    let intents: JournalLine[];
    try {
      intents = checked(await this.journal.pending(player)).filter(isOpenIntent);
    } catch (error) {
      this.#journalFailed(run, player, error);
      intents = [];
    }
    const covered = new Set(delivered.map((e) => e.deliveryId));
    // An intent without an invoice matches no pending line (Map.has(undefined) is false).
    const lost = intents.filter((e) => !covered.has(e.deliveryId) && !pending.has(e.invoice as string));
    if (lost.length > 0) {
      // Reported before the intents, which carry the window's start, leave the journal.
      const start = earliest(lost.map((e) => e.previewedAt ?? e.recordedAt));
      // The preview this process saw itself is measured on the monotonic clock.
      const known = this.#shared.seen.get(player);
      await this.#reportUnverified(run, player, known?.wall === start ? known : start, 'lostClaim');
      delivered.push(...lost.map(({ previewedAt: _, settled: __, ...e }) => ({ ...e, state: 'claimed' as const, recordedAt: this.#config.now() })));
    }
    if (delivered.length > 0) {
      await this.#record(run, player, delivered);
      await this.#grantAll(run, delivered, grant, control);
    }
    // The answer listed everything still undelivered when the preview was sent: with nothing
    // listed, a later lost claim can only take what came after (with lines listed, once
    // their intents are journaled).
    if (pending.size === 0) this.#seen(player, moment);
    return { ok: true, pending, intents, moment, answeredAt, outcome: outcomeOf(preview) };
  }

  /**
   * Grants each line, acknowledging it right after; a throwing grant leaves its line
   * pending, and so does one that outlives `grantTimeoutMs` (acknowledged if it still
   * succeeds; never granted again while it runs).
   */
  async #grantAll(run: Run, lines: readonly JournalLine[], grant: GrantFunction, control: Control): Promise<void> {
    const { unjournaled, granting, given } = this.#shared;
    for (const line of lines) {
      if (granting.has(line.deliveryId) || run.extras.defer?.(line) === true) continue;
      // Given already by this process; only its acknowledgement is missing: never given twice.
      if (given.has(line.deliveryId)) {
        await this.#acknowledgeGiven(run, line.playerName, line.deliveryId);
        continue;
      }
      const item: DeliveredItem = { ...line.item, deliveryId: line.deliveryId };
      const error = await this.#grantWithin(run, item, grant, control.grantTimeoutMs);
      if (error !== undefined) {
        run.failed.push({ item, error: error.thrown });
        if (!(error.thrown instanceof GrantTimeoutError)) await this.#noteFailure(run, line, error.thrown);
        continue;
      }
      run.granted.push(item);
      unjournaled.delete(line.deliveryId);
      given.add(line.deliveryId);
      await this.#acknowledgeGiven(run, line.playerName, line.deliveryId);
    }
  }

  /** Acknowledges a line the game was given; until the journal takes it, the line is remembered as given. */
  async #acknowledgeGiven(run: Run, player: string, deliveryId: string): Promise<void> {
    if (await this.#write(run, player, (journal) => journal.acknowledge([deliveryId]))) this.#shared.given.delete(deliveryId);
  }

  /** Keeps the grant's failure on the line, for staff (`teamgames journal pending`). */
  async #noteFailure(run: Run, line: JournalLine, thrown: unknown): Promise<void> {
    const message = String((thrown as Error | undefined)?.message ?? thrown).slice(0, 300);
    const attempts = (line.lastError?.attempts ?? 0) + 1;
    const limit = run.extras.staffAfterAttempts;
    const stuck = line.lastError?.stuck === true || (limit !== undefined && attempts >= limit);
    const updated: JournalLine = { ...line, lastError: { message, at: this.#config.now(), attempts, ...(stuck ? { stuck } : {}) } };
    if (stuck && line.lastError?.stuck !== true) {
      this.#emit(run, { type: 'stuck', operation: run.operation, playerName: line.playerName, item: { ...line.item, deliveryId: line.deliveryId }, attempts, error: thrown });
    }
    const { unjournaled } = this.#shared;
    if (unjournaled.has(line.deliveryId)) unjournaled.set(line.deliveryId, updated);
    else await this.#write(run, line.playerName, (journal) => journal.append([updated]));
  }

  /** One grant, bounded: what it threw, its timeout, or `undefined` once it returned. */
  async #grantWithin(run: Run, item: DeliveredItem, grant: GrantFunction, ms: number): Promise<{ thrown: unknown } | undefined> {
    let attempt: Promise<unknown>;
    try {
      attempt = Promise.resolve(grant(item));
    } catch (thrown) {
      return { thrown };
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
    try {
      if ((await Promise.race([attempt, late])) !== 'late') return undefined;
    } catch (thrown) {
      return { thrown };
    } finally {
      clearTimeout(timer);
    }
    // Still running: the player's other calls go on, and this line waits for it.
    const { granting, unjournaled } = this.#shared;
    const journal = this.journal;
    granting.add(item.deliveryId);
    const { given } = this.#shared;
    attempt.then(
      async () => {
        granting.delete(item.deliveryId);
        unjournaled.delete(item.deliveryId);
        given.add(item.deliveryId);
        // Not acknowledged now: the next call for the player acknowledges it, never gives it again.
        await journal.acknowledge([item.deliveryId]).then(() => given.delete(item.deliveryId), () => undefined);
      },
      () => granting.delete(item.deliveryId),
    );
    return { thrown: new GrantTimeoutError(run.operation, item.deliveryId, ms) };
  }

  /**
   * Journals claimed lines (and the intents they settle). When the journal fails they are
   * kept in memory (the lines granted from there, everything written again on the next
   * call) and the failure is reported: once the service delivered them, a failed write
   * must not drop them.
   */
  async #record(run: Run, player: string, entries: readonly JournalEntry[]): Promise<boolean> {
    if (await this.#write(run, player, (journal) => journal.append(entries))) return true;
    const { unjournaled } = this.#shared;
    for (const entry of entries) unjournaled.set(entry.deliveryId, entry);
    return false;
  }

  /** Runs one journal change; a failure is reported on the run, never thrown. */
  async #write(run: Run, player: string, change: (journal: DeliveryJournal) => Promise<void>): Promise<boolean> {
    try {
      await change(this.journal);
      return true;
    } catch (error) {
      this.#journalFailed(run, player, error);
      return false;
    }
  }

  #journalFailed(run: Run, player: string | undefined, error: unknown): JournalError {
    const journalError = journalErrorOf(run.operation, error, run.via.redact);
    run.journalError ??= journalError;
    if (player !== undefined) this.#emit(run, { type: 'journalError', operation: run.operation, playerName: player, error: journalError });
    return journalError;
  }

  /**
   * Writes the window to the journal (kept until staff resolve it), then reports it. A
   * window the journal could not take is kept in memory and written on the next call; it
   * is reported all the same.
   */
  async #reportUnverified(run: Run, player: string, start: number | SeenAt, cause: WindowCause): Promise<void> {
    // Stamped with the wall clock once; a start this process saw is measured back from it
    // on the monotonic clock, a start read from the journal is kept (never after `to`, even
    // when the wall clock stepped back since).
    const to = this.#config.now();
    const from = typeof start === 'number' ? Math.min(start, to) : to - Math.max(0, this.#monotonic() - start.mono);
    const node = this.journal.nodeId;
    const record: JournalWindow = { deliveryId: `window:${globalThis.crypto.randomUUID()}`, playerName: player, state: 'unverified', from, to, cause, recordedAt: to, ...(node === undefined ? {} : { node }) };
    await this.#record(run, player, [record]);
    const window: UnverifiedWindow = { playerName: player, from, to };
    run.unverified.push(window);
    this.#emit(run, { type: 'unverified', operation: run.operation, window });
  }

  /** Now, on both clocks. */
  #moment(): SeenAt {
    return { wall: this.#config.now(), mono: this.#monotonic() };
  }

  /** The player's whole list was seen at `at`: a later lost claim can only have taken what came after. */
  #seen(player: string, at: SeenAt): void {
    const { seen } = this.#shared;
    seen.delete(player);
    seen.set(player, at);
    if (seen.size > SEEN_LIMIT) seen.delete(seen.keys().next().value as string);
  }

  #emit(run: Run, event: StorefrontEvent): void {
    try {
      // Stryker disable next-line OptionalChaining: calling a missing listener throws inside the try that ignores listeners' failures: the same outcome
      run.via.onEvent?.(event);
    } catch {
      // A listener's failure must not change the outcome of a delivery.
    }
  }

  async #pendingCount(run: Run, player: string | undefined): Promise<number> {
    const inMemory = [...this.#shared.unjournaled.values()].filter((e) => isClaimed(e) && (player === undefined || e.playerName === player)).length;
    try {
      return (await this.journal.pending(player)).filter(isWork).length + inMemory;
    } catch (error) {
      this.#journalFailed(run, player, error);
      return inMemory;
    }
  }

  /** The lines of a claim answer: by invoice when the raw rows line up, else by claim and index. */
  #claimedLines(player: string, result: ClaimResult): JournalLine[] {
    const rows = linesOf(result);
    if (rows === undefined) {
      const batch = `claim:${globalThis.crypto.randomUUID()}`;
      return result.claims.map((item, index) => this.#line(`${batch}:${index}`, player, 'claimed', item));
    }
    return [...rows].map(([invoice, item]) => this.#line(`invoice:${invoice}`, player, 'claimed', item, invoice));
  }

  /** A claim that waits out `RATE_LIMIT` (the local guard's or the service's) a few times. */
  async #claim(run: Run, player: string, options: ClaimOptions, control: Control): Promise<ClaimResult> {
    // The client takes `signal: undefined` as no signal (as every option left undefined).
    const claimOptions = { ...options, signal: control.signal } as ClaimOptions;
    for (let waits = 0; ; waits++) {
      const result = await run.via.claim(player, claimOptions);
      if (result.code !== 'RATE_LIMIT' || waits >= control.maxWaits) return result;
      // Never longer than the service's window, whatever a clock or a proxy says.
      await pause(control, Math.min(Math.max(0, result.retryAfterMs), CLAIM_WINDOW_MS));
    }
  }

  #line(deliveryId: string, playerName: string, state: JournalLine['state'], item: Transaction, invoice?: string): JournalLine {
    return { deliveryId, playerName, state, item, ...(invoice === undefined ? {} : { invoice }), recordedAt: this.#config.now() };
  }

  /**
   * Runs `work` under the journal's cross-node lock on the player, when it has one. A lock
   * that cannot be had is reported on the run and returned: nothing was done. Waiting for
   * the lock is abortable: a call aborted before its work starts (before the lock is asked
   * for, while it waits, or as it answers) rejects with `signal.reason`, and the lock, once
   * it answers, is released without running the work. Once the work has started, it
   * settles on its own.
   */
  async #acrossNodes<T>(run: Run, player: string, control: Control, work: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: JournalError }> {
    const journal = this.journal;
    const withPlayerLock = journal.withPlayerLock?.bind(journal);
    if (withPlayerLock === undefined) return { ok: true, value: await work() };
    // Aborted between the player's turn and here (a microtask apart): the lock is not asked for.
    control.signal?.throwIfAborted();
    // Without a signal of the call's own, one that never aborts: the same path, no `?.`.
    const signal = control.signal ?? new AbortController().signal;
    // `aborted` only once the abort listener has rejected: the work then never starts.
    let state: 'waiting' | 'started' | 'aborted' = 'waiting';
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        if (state !== 'waiting') return;
        state = 'aborted';
        reject(signal.reason);
      };
      // Listening before the lock is asked for: an abort from inside that call is seen too.
      signal.addEventListener('abort', onAbort);
      // A lock that throws synchronously, or returns no promise, is taken as one that answered so.
      const locked = new Promise<T | undefined>((settle) =>
        settle(
          withPlayerLock<T | undefined>(player, async () => {
            // The call has rejected already: the lock is given back unused.
            if (state === 'aborted') return undefined;
            state = 'started';
            return work();
          }),
        ),
      );
      locked.then(
        (value) => {
          signal.removeEventListener('abort', onAbort);
          // After an abort the promise has rejected already, and this changes nothing.
          resolve({ ok: true, value: value as T });
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          if (state === 'started') reject(error);
          // Waiting still: the lock could not be had (after an abort, nothing is reported).
          else if (state === 'waiting') resolve({ ok: false, error: this.#journalFailed(run, player, error) });
        },
      );
    });
  }
}

/** A grant calling `deliver` for its own player would wait for itself forever: refused. */
function refuseReentry(locks: PlayerLocks, player: string, operation: 'deliver' | 'resumeDeliveries'): void {
  if (locks.holds(player)) {
    fail('playerName', `must not be the player of a delivery this call runs inside (a grant or onEvent calling ${operation} for ${JSON.stringify(player)} would wait for itself forever); grant the item and return`, operation);
  }
}

/** Every record a journal returns is validated like an answer from the network. */
function checked(entries: JournalEntry[]): JournalEntry[] {
  if (!Array.isArray(entries)) throw new Error(`pending() did not return an array (${typeof entries})`);
  for (const entry of entries) {
    const problem = entryProblem(entry);
    if (problem !== undefined) throw new Error(`the journal holds a record that is not a journal entry (${problem}); it is damaged or was changed outside the SDK`);
  }
  return entries;
}

/** A journal's failure as a {@link JournalError} (as it is when it is one already). */
function journalErrorOf(operation: Operation, error: unknown, redact: ((text: string) => string) | undefined): JournalError {
  if (isStorefrontError(error, 'JOURNAL_FAILED')) return error;
  const text = String((error as Error | undefined)?.message ?? error).slice(0, 200);
  return new JournalError(`${operation}: the delivery journal failed (${redact === undefined ? text : redact(text)})`, { operation, cause: error });
}

/** The earliest of the starts (each from the journal or this process's memory). */
function earliest(starts: ReadonlyArray<number>): number {
  let min = Number.POSITIVE_INFINITY;
  for (const start of starts) if (start < min) min = start;
  return min;
}

/** Whether memory holds lines of the claim that `mark` marks (the journal refused them). */
function linesInMemory(unjournaled: ReadonlyMap<string, JournalEntry>, mark: JournalClaimMark): boolean {
  for (const id of unjournaled.keys()) if (id.startsWith(`${mark.deliveryId}:`)) return true;
  return false;
}

/** An entry that is work still to do (not a window kept for staff, not a settled intent). */
function isWork(entry: JournalEntry): boolean {
  return entry.state === 'claimed' || entry.state === 'claiming' || isOpenIntent(entry);
}

function isClaimed(entry: JournalEntry): entry is JournalLine {
  return entry.state === 'claimed';
}

/** An intent still to reconcile (not settled by a claim whose lines were journaled). */
function isOpenIntent(entry: JournalEntry): entry is JournalLine {
  return entry.state === 'intended' && entry.settled !== true;
}
