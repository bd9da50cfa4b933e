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
import { JournalError, isStorefrontError, NotReconciledError, type StorefrontError } from '../errors.js';
import { unusableAnswer } from '../internal/to-error.js';
import type { StorefrontEvent } from '../types.js';
import { CLAIM_WINDOW_MS, type ClaimOptions, type ClaimResult, type Transaction } from '../wire/claim.js';
import { FileJournal } from '../journals/file/journal.js';
import { DEFAULT_JOURNAL_PATH, entryProblem, type DeliveryJournal, type JournalClaimMark, type JournalEntry, type JournalLine, type JournalWindow, type WindowCause } from '../journals/contract.js';
import { checkDeliverOptions, checkGrant, checkResumeOptions, pause, type Control } from './options.js';
import { PlayerLocks } from './player-locks.js';
import { deliveryReport, failed, journalOutcome, linesOf, mergedWindows, newRun, outcomeOf, ERROR_MESSAGE, type Run, type RunVia, type StepOutcome } from './report.js';
import { GrantTimeoutError, type DeliveredItem, type DeliveryMode, type DeliveryReport, type GrantFunction, type ResumeReport, type UnverifiedWindow } from './types.js';
import { fail } from '../internal/validate.js';

// One FileJournal per path in the process: a file journal refuses a second owner.
const defaultJournals = new Map<string, FileJournal>();

/** What the engine needs from the clients that share it. @internal */
export interface DeliveryEngineConfig {
  /** Epoch ms, for the timestamps written to the journal and reported. */
  now: () => number;
  /** A monotonic clock for intervals (default: `now` when injected, `performance.now()` otherwise). */
  monotonic?: () => number;
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
}

const shared = new WeakMap<DeliveryJournal, Shared>();

function sharedOf(journal: DeliveryJournal): Shared {
  let state = shared.get(journal);
  if (state === undefined) shared.set(journal, (state = { locks: new PlayerLocks(), unjournaled: new Map(), granting: new Set() }));
  return state;
}

/** The per-player order every client of `journal` shares; vote rewards queue in it too. @internal */
export function playerLocksOf(journal: DeliveryJournal): PlayerLocks {
  return sharedOf(journal).locks;
}

/** Returned by a cross-node lock's work that found its call aborted before it started. */
const NOT_STARTED = Symbol('not started');

/** What a preview found: the lines still pending, and the open intents the journal held (those a lost claim took are granted by then). */
type Reconciled =
  | { ok: true; pending: Map<string, Transaction>; intents: JournalLine[]; sentAt: number; answeredAt: number; outcome: StepOutcome }
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
    // Stryker disable next-line all: the client always passes its monotonic clock; this fallback, for other callers of an internal class, picks the same one
    this.#monotonic = config.monotonic ?? (config.now === Date.now ? () => performance.now() : config.now);
    this.#journal = config.journal;
  }

  /** What every user of this engine's journal shares. */
  get #shared(): Shared {
    return sharedOf(this.journal);
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

  async deliver(via: RunVia, playerName: unknown, grant: unknown, options: unknown): Promise<DeliveryReport> {
    const { player, mode, control } = checkDeliverOptions(playerName, options);
    const grantFn = checkGrant(grant, 'deliver');
    const { locks } = this.#shared;
    refuseReentry(locks, player, 'deliver');
    return locks.run(player, control.signal, async () => {
      const run = newRun('deliver', via);
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
    // Stryker disable next-line MethodExpression: a player with only windows or settled intents has nothing to resume; visiting one grants, claims and reports nothing
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
    if (orphans.length > 0) await this.#reportUnverified(run, player, Math.min(...orphans.map((m) => m.recordedAt)), 'claimMark');
    // A window staff have not resolved yet: the player's texts say staff are checking.
    if (entries.some((e) => e.state === 'unverified')) run.windowOpen = true;
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
    const mark: JournalClaimMark = { deliveryId: `claim:${globalThis.crypto.randomUUID()}`, playerName: player, state: 'claiming', recordedAt: this.#config.now() };
    // The mark is the durable record that comes first: a full disk stops the claim here.
    if (!(await this.#write(run, player, (journal) => journal.append([mark])))) return journalOutcome(run);
    let result: ClaimResult;
    try {
      result = await this.#claim(run, player, {}, control);
    } catch (error) {
      if (isStorefrontError(error, 'CLAIM_OUTCOME_UNKNOWN')) await this.#reportUnverified(run, player, mark.recordedAt, 'claimMark');
      await this.#write(run, player, (journal) => journal.acknowledge([mark.deliveryId]));
      return failed(error);
    }
    if (result.code !== 'SUCCESS') {
      await this.#write(run, player, (journal) => journal.acknowledge([mark.deliveryId]));
      return outcomeOf(result);
    }
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
      .map(([invoice, item]) => ({ ...this.#line(`invoice:${invoice}`, player, 'intended', item, invoice), previewedAt: reconciled.sentAt, ...(node === undefined ? {} : { node }) }));
    if (!(await this.#write(run, player, (journal) => journal.append(intents)))) return journalOutcome(run);
    // The service opened the window when the preview arrived, which is before its answer
    // was back here: timing from the answer never claims too early. Measured on the
    // monotonic clock, and never longer than the window, whatever the wall clock does.
    const wait = Math.min(CLAIM_WINDOW_MS, CLAIM_WINDOW_MS - (this.#monotonic() - reconciled.answeredAt));
    if (wait > 0) await pause(control, wait);

    let result: ClaimResult;
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
    // Stryker disable next-line ConditionalExpression,EqualityOperator: acknowledging no id changes nothing (the condition only saves the call)
    const settledSome = gone.length > 0;
    if (recorded && settledSome) await this.#write(run, player, (journal) => journal.acknowledge(gone.map((e) => e.deliveryId)));
    await this.#grantAll(run, claimed, grant, control);
    return { code: 'SUCCESS', message: result.message };
  }

  /**
   * Previews with the raw rows and settles the intents an earlier run left: the ones no
   * longer pending were delivered by a claim whose answer was lost, so they are granted
   * from the journal now, and the time that claim could have taken more is reported.
   */
  async #reconcile(run: Run, player: string, grant: GrantFunction, control: Control): Promise<Reconciled> {
    const sentAt = this.#config.now();
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
    // Stryker disable next-line StringLiteral: an intent without an invoice matches no pending line, whatever text stands in for it
    const lost = intents.filter((e) => !covered.has(e.deliveryId) && !pending.has(e.invoice ?? ''));
    if (lost.length > 0) {
      // Reported before the intents, which carry the window's start, leave the journal.
      await this.#reportUnverified(run, player, Math.min(...lost.map((e) => e.previewedAt ?? e.recordedAt)), 'lostClaim');
      delivered.push(...lost.map(({ previewedAt: _, settled: __, ...e }) => ({ ...e, state: 'claimed' as const, recordedAt: this.#config.now() })));
    }
    if (delivered.length > 0) {
      await this.#record(run, player, delivered);
      await this.#grantAll(run, delivered, grant, control);
    }
    return { ok: true, pending, intents, sentAt, answeredAt, outcome: outcomeOf(preview) };
  }

  /**
   * Grants each line, acknowledging it right after; a throwing grant leaves its line
   * pending, and so does one that outlives `grantTimeoutMs` (acknowledged if it still
   * succeeds; never granted again while it runs).
   */
  async #grantAll(run: Run, lines: readonly JournalLine[], grant: GrantFunction, control: Control): Promise<void> {
    const { unjournaled, granting } = this.#shared;
    for (const line of lines) {
      if (granting.has(line.deliveryId)) continue;
      const item: DeliveredItem = { ...line.item, deliveryId: line.deliveryId };
      const error = await this.#grantWithin(run, item, grant, control.grantTimeoutMs);
      if (error !== undefined) {
        run.failed.push({ item, error: error.thrown });
        if (!(error.thrown instanceof GrantTimeoutError)) await this.#noteFailure(run, line, error.thrown);
        continue;
      }
      run.granted.push(item);
      unjournaled.delete(line.deliveryId);
      await this.#write(run, line.playerName, (journal) => journal.acknowledge([line.deliveryId]));
    }
  }

  /** Keeps the grant's failure on the line, for staff (`teamgames journal pending`). */
  async #noteFailure(run: Run, line: JournalLine, thrown: unknown): Promise<void> {
    const message = String((thrown as Error | undefined)?.message ?? thrown).slice(0, 300);
    const updated: JournalLine = { ...line, lastError: { message, at: this.#config.now(), attempts: (line.lastError?.attempts ?? 0) + 1 } };
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
    attempt.then(
      async () => {
        granting.delete(item.deliveryId);
        unjournaled.delete(item.deliveryId);
        await journal.acknowledge([item.deliveryId]).catch(() => undefined); // else granted again later: the game's dedupe check
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
    const journalError = isStorefrontError(error, 'JOURNAL_FAILED')
      ? (error as JournalError)
      : new JournalError(`${run.operation}: the delivery journal failed (${String((error as Error | undefined)?.message ?? error).slice(0, 200)})`, { operation: run.operation, cause: error });
    run.journalError ??= journalError;
    if (player !== undefined) this.#emit(run, { type: 'journalError', operation: run.operation, playerName: player, error: journalError });
    return journalError;
  }

  /**
   * Writes the window to the journal (kept until staff resolve it), then reports it. A
   * window the journal could not take is kept in memory and written on the next call; it
   * is reported all the same.
   */
  async #reportUnverified(run: Run, player: string, from: number, cause: WindowCause): Promise<void> {
    const to = this.#config.now();
    const node = this.journal.nodeId;
    const record: JournalWindow = { deliveryId: `window:${globalThis.crypto.randomUUID()}`, playerName: player, state: 'unverified', from, to, cause, recordedAt: to, ...(node === undefined ? {} : { node }) };
    await this.#record(run, player, [record]);
    // Stryker disable next-line BooleanLiteral: the window just reported is on run.unverified, which already makes the texts say staff are checking
    run.windowOpen = true;
    const window: UnverifiedWindow = { playerName: player, from, to };
    run.unverified.push(window);
    this.#emit(run, { type: 'unverified', operation: run.operation, window });
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
    // Stryker disable next-line ConditionalExpression: a signal of undefined and no signal are the same claim option
    const claimOptions: ClaimOptions = control.signal === undefined ? options : { ...options, signal: control.signal };
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
   * the lock is abortable; once the work has started, it settles on its own.
   */
  async #acrossNodes<T>(run: Run, player: string, control: Control, work: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: JournalError }> {
    const journal = this.journal;
    if (journal.withPlayerLock === undefined) return { ok: true, value: await work() };
    const signal = control.signal;
    let started = false;
    const locked = journal.withPlayerLock<T | typeof NOT_STARTED>(player, () => {
      if (signal?.aborted) return Promise.resolve(NOT_STARTED);
      started = true;
      return work();
    });
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        // Stryker disable next-line OptionalChaining: only a signal calls this listener
        if (!started) reject(signal?.reason);
      };
      // Stryker disable next-line ObjectLiteral,BooleanLiteral: the listener is removed when the lock's promise settles, and an abort fires once
      signal?.addEventListener('abort', onAbort, { once: true });
      locked.then(
        (value) => {
          signal?.removeEventListener('abort', onAbort);
          // Stryker disable next-line ConditionalExpression: NOT_STARTED comes only after an abort, whose listener rejected first
          if (value !== NOT_STARTED) resolve({ ok: true, value: value as T });
        },
        (error: unknown) => {
          signal?.removeEventListener('abort', onAbort);
          if (started) reject(error);
          else if (!signal?.aborted) resolve({ ok: false, error: this.#journalFailed(run, player, error) });
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
