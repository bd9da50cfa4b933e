/**
 * Crash-safe vote rewards: {@link StorefrontClient.deliverVoteReward} and
 * {@link StorefrontClient.resumeVoteRewards}, over the same {@link DeliveryJournal} and the
 * same per-player order as purchases.
 *
 * The service spends the player's points when it answers. So: a mark of the call goes to
 * the journal before it is sent; the rows of its answer (with the player's counters) are
 * journaled, in one append that settles the mark, before the first give; each row is
 * acknowledged after its give returned. A give that throws leaves its row, given again by
 * the player's next call or by `resumeVoteRewards`. A mark left open (the answer was lost,
 * or the process died before its rows were journaled) is worked out by the player's next
 * answer: its counters tell what the lost call spent (`recovery.ts`).
 *
 * @module
 * @internal
 */
import { isStorefrontError, type JournalError, type Operation, type StorefrontError } from '../../errors.js';
import { checkNonBlank, checkOptionsObject, checkPlayerName, checkPositiveInteger, checkRequiredObject, checkSignal, describe, fail } from '../../internal/validate.js';
import type { DeliveryJournal, JournalEntry, JournalWindow } from '../../journals/contract.js';
import type { JournalVoteClaim, JournalVoteCounters, JournalVoteReward } from '../../journals/vote-entries.js';
import { voteMessageCode, type VoteRewardInput, type VoteRewardResult } from '../../wire/vote-reward.js';
import { acrossNodes, type PlayerLocks } from '../core/index.js';
import { account } from './recovery.js';
import { checked } from '../records/index.js';
import { checkGrantTimeout, giveWithin, journalErrorOf, notedFailure, settleGiven, sharedOf, type DeliveryEvent, type GiveFailure } from '../core/index.js';
import type { GivenVoteReward, VoteDeliveryCode, VoteDeliveryReport, VoteResumeReport, VoteRewardDeliveryOptions, VoteRewardFailure, VoteRewardGiveFunction, VoteUnverifiedWindow } from './types.js';

const TEXT = {
  given: 'Your vote reward has been given.',
  partial: 'Some of your vote rewards could not be given yet; they will be given on your next claim.',
  unknown: 'The vote store\'s answer was lost or could not be read. Your points are safe: your next reward claim checks what was spent.',
  error: 'Vote rewards are unavailable right now. Your points are safe; try again later.',
  window: 'We could not confirm every vote reward you claimed. If one is missing, staff can check it for you.',
} as const;

/** The client a vote delivery runs for: its vote claim, its `onEvent`, its redaction. */
export interface VoteVia {
  claimVoteReward: (input: VoteRewardInput, options: { signal?: AbortSignal }) => Promise<VoteRewardResult>;
  onEvent: ((event: DeliveryEvent) => void) | undefined;
  /** The key, in every form, out of a text (players' texts included). */
  redact: (text: string) => string;
}

/** What the vote engine needs of the purchase engine: its journal (opened on first use) and its per-player order. */
export interface VoteHost {
  readonly journal: DeliveryJournal;
  locks(journal: DeliveryJournal): PlayerLocks;
  now: () => number;
}

/** What the delivery loop adds to a vote call, beyond the public options. @internal */
export interface VoteExtras {
  /** Failed gives after which a row is marked for staff (`lastError.stuck`) and a `stuck` event is emitted. */
  staffAfterAttempts?: number;
  /** A row is left for later, untouched (no give, no failure noted), while this says so: the loop's give backoff, as the engine's `defer` for purchases. */
  defer?: (row: { deliveryId: string }) => boolean;
}

/** The options of a vote call once checked (where they entered: the client's method, or the loop's options). @internal */
export interface VoteControl {
  signal: AbortSignal | undefined;
  /** How long one give may run before the call moves on (the row stays pending). */
  grantTimeoutMs: number;
}

interface VoteRun {
  operation: Operation;
  via: VoteVia;
  /** How long one give may run before the call moves on (the row stays pending). */
  grantTimeoutMs: number;
  staffAfterAttempts: number | undefined;
  defer?: VoteExtras['defer'];
  granted: GivenVoteReward[];
  failed: VoteRewardFailure[];
  window?: VoteUnverifiedWindow;
  /** Rows whose give ended in a window it wrote (their outcome unknown): neither granted nor failed. */
  windowed?: number;
  journalError?: JournalError;
}

type Row = JournalVoteReward;

/** The vote records the journal failed to take, shared by every client of `journal` (shared.ts). */
function memoryOf(journal: DeliveryJournal): Map<string, JournalEntry> {
  return sharedOf(journal).unwrittenVotes;
}

/** The vote reward deliveries of one client (and the clients derived from it). */
export class VoteDeliveries {
  readonly #host: VoteHost;

  constructor(host: VoteHost) {
    this.#host = host;
  }

  /** Claims a vote reward for a player and gives its rows, journaled; see the module. */
  async deliver(via: VoteVia, input: unknown, give: unknown, options: unknown): Promise<VoteDeliveryReport> {
    const op: Operation = 'deliverVoteReward';
    const claim = checkVoteInput(input, op);
    const giveFn = checkGive(give, op);
    return this.deliverChecked(via, claim, giveFn, checkVoteOptions(options, op));
  }

  /** {@link deliver} with its options checked already (the delivery loop's, checked when it started); the input is checked here. */
  async deliverChecked(via: VoteVia, input: unknown, give: VoteRewardGiveFunction, control: VoteControl, extras: VoteExtras = {}): Promise<VoteDeliveryReport> {
    const op: Operation = 'deliverVoteReward';
    const claim = checkVoteInput(input, op);
    const { signal } = control;
    const giveFn = give;
    const journal = this.#host.journal;
    const locks = this.#host.locks(journal);
    refuseReentry(locks, claim.player, op);
    const run: VoteRun = { operation: op, via, grantTimeoutMs: control.grantTimeoutMs, staffAfterAttempts: extras.staffAfterAttempts, granted: [], failed: [] };
    return locks.run(claim.player, signal, async () => {
      const locked = await acrossNodes(journal, claim.player, { signal }, () => this.#deliver(run, journal, claim, giveFn, signal), (error) => this.#journalFailed(run, claim.player, error));
      if (locked.ok) return locked.value;
      return this.#report(run, journal, claim.player, { code: 'ERROR', message: TEXT.error });
    });
  }

  /**
   * Gives every vote row left pending in the journal (at startup), or only `player`'s (the
   * delivery loop, when they join); lost answers wait for the player's next claim.
   */
  async resume(via: VoteVia, give: unknown, options: unknown): Promise<VoteResumeReport> {
    const op: Operation = 'resumeVoteRewards';
    return this.resumeChecked(via, checkGive(give, op), checkVoteOptions(options, op));
  }

  /** {@link resume} with its options checked already (the delivery loop's, for `player` when they join). */
  async resumeChecked(via: VoteVia, give: VoteRewardGiveFunction, control: VoteControl, extras: VoteExtras = {}, player?: string): Promise<VoteResumeReport> {
    const op: Operation = 'resumeVoteRewards';
    const giveFn = give;
    const { signal } = control;
    const journal = this.#host.journal;
    const locks = this.#host.locks(journal);
    const run: VoteRun = { operation: op, via, grantTimeoutMs: control.grantTimeoutMs, staffAfterAttempts: extras.staffAfterAttempts, defer: extras.defer, granted: [], failed: [] };
    let all: JournalEntry[];
    try {
      all = checked(await journal.pending(player));
    } catch (error) {
      throw this.#journalFailed(run, player, error);
    }
    const rows = [...all, ...memoryOf(journal).values()].filter((e) => e.state === 'voteClaimed' && (player === undefined || e.playerName === player));
    // Nothing to give (every join of the delivery loop asks): what was read is the count.
    if (rows.length === 0) return { granted: [], failed: [], pending: all.filter(isVoteWork).length, errors: [] };
    const errors: VoteResumeReport['errors'] = [];
    for (const name of new Set(rows.map((e) => e.playerName))) {
      refuseReentry(locks, name, op);
      const left = await locks.run(name, signal, async () => {
        const locked = await acrossNodes(
          journal,
          name,
          { signal },
          async () => {
            const settled = await this.#settle(run, journal, name, giveFn);
            return settled.ok ? undefined : settled.error;
          },
          (error) => this.#journalFailed(run, name, error),
        );
        return locked.ok ? locked.value : locked.error;
      });
      if (left !== undefined) errors.push({ playerName: name, error: left });
    }
    const pending = (await this.#pendingOf(run, journal, player)) ?? 0;
    return { granted: run.granted, failed: run.failed, pending, errors, ...(run.journalError ? { journalError: run.journalError } : {}) };
  }

  async #deliver(run: VoteRun, journal: DeliveryJournal, input: VoteRewardInput & { player: string }, give: VoteRewardGiveFunction, signal: AbortSignal | undefined): Promise<VoteDeliveryReport> {
    const player = input.player;
    const settled = await this.#settle(run, journal, player, give);
    // The journal cannot record a claim now: claim nothing (rows already claimed were given above).
    if (!settled.ok) return this.#report(run, journal, player, { code: 'ERROR', message: TEXT.error, error: settled.error });
    const lost = settled.entries.filter((e): e is JournalVoteClaim => e.state === 'voteClaiming' && e.settled !== true);
    const before = settled.entries.find((e): e is JournalVoteCounters => e.state === 'voteCounters');
    const node = journal.nodeId;
    const mark: JournalVoteClaim = { deliveryId: `vote:${globalThis.crypto.randomUUID()}`, playerName: player, state: 'voteClaiming', reward: String(input.reward), amount: input.amount, recordedAt: this.#host.now(), ...(node === undefined ? {} : { node }) };
    // The mark is the durable record that comes first: a journal that cannot write stops the claim here.
    if (!(await this.#write(run, journal, player, (j) => j.append([mark])))) return this.#report(run, journal, player, { code: 'ERROR', message: TEXT.error });
    let result: VoteRewardResult;
    try {
      result = await run.via.claimVoteReward(input, signal === undefined ? {} : { signal });
    } catch (error) {
      // A lost answer keeps its mark: the next answer's counters tell what it spent.
      if (isStorefrontError(error, 'CLAIM_OUTCOME_UNKNOWN')) return this.#report(run, journal, player, { code: 'OUTCOME_UNKNOWN', message: TEXT.unknown, error: error as StorefrontError });
      // Not sent, or refused before anything was spent (a refused key, an abort before sending).
      await this.#write(run, journal, player, (j) => j.acknowledge([mark.deliveryId]));
      if (!isStorefrontError(error)) throw error;
      return this.#report(run, journal, player, { code: 'ERROR', message: TEXT.error, error });
    }
    return this.#answered(run, journal, { input, mark, lost, before, result }, give);
  }

  /** Journals what the answer (and the counters) tell, in one append, then gives the rows. */
  async #answered(
    run: VoteRun,
    journal: DeliveryJournal,
    call: { input: VoteRewardInput & { player: string }; mark: JournalVoteClaim; lost: JournalVoteClaim[]; before: JournalVoteCounters | undefined; result: VoteRewardResult },
    give: VoteRewardGiveFunction,
  ): Promise<VoteDeliveryReport> {
    const { input, mark, lost, result } = call;
    const player = input.player;
    const now = this.#host.now();
    const accounting = account(player, now, call.before, lost, input, result.rewards);
    const recovered: Row[] = accounting.recovered.map(({ mark: m, reward }) => ({ deliveryId: `${m.deliveryId}:0`, playerName: player, state: 'voteClaimed', reward, recordedAt: now, recovered: true }));
    const rows: Row[] = result.rewards.map((reward, i) => ({ deliveryId: `${mark.deliveryId}:${i}`, playerName: player, state: 'voteClaimed', reward, recordedAt: now }));
    const node = journal.nodeId;
    // A wall clock stepped back since the lost call still gives a window that runs forward.
    const unverified: VoteUnverifiedWindow | undefined =
      accounting.window === undefined ? undefined : { playerName: player, from: accounting.window.from, to: Math.max(now, accounting.window.from, accounting.window.until ?? 0), reward: accounting.window.reward, ...(accounting.window.points === undefined ? {} : { points: accounting.window.points }) };
    const window: JournalWindow | undefined = unverified === undefined ? undefined : { deliveryId: `window:${globalThis.crypto.randomUUID()}`, ...unverified, state: 'unverified', cause: 'lostVote', recordedAt: now, ...(node === undefined ? {} : { node }) };
    const open = new Set(accounting.open.map((m) => m.deliveryId));
    const marks = [mark, ...lost.filter((m) => !open.has(m.deliveryId))].map((m): JournalVoteClaim => ({ ...m, settled: true }));
    // A lost call the service could still carry out stays open; one a window names says so.
    const named = window === undefined ? [] : accounting.open.map((m): JournalVoteClaim => ({ ...m, window: m.window ?? window.deliveryId }));
    // One append, all or nothing: a settled mark had its rows (and its window) journaled with it.
    const entries: JournalEntry[] = [...recovered, ...rows, ...(window === undefined ? [] : [window]), accounting.counters, ...named, ...marks];
    if (await this.#write(run, journal, player, (j) => j.append(entries))) {
      await this.#write(run, journal, player, (j) => j.acknowledge(marks.map((m) => m.deliveryId)));
    } else {
      const memory = memoryOf(journal);
      for (const entry of entries) memory.set(entry.deliveryId, entry);
    }
    if (unverified !== undefined) {
      run.window = unverified;
      emit(run, { type: 'unverified', operation: run.operation, window: { playerName: player, from: unverified.from, to: unverified.to } });
    }
    await this.#giveAll(run, journal, [...recovered, ...rows], give);
    const first = result.messages[0];
    const outcome: { code: VoteDeliveryCode; message: string } =
      result.rewards.length > 0 ? { code: 'SUCCESS', message: result.rewards.find((r) => r.message !== undefined)?.message ?? TEXT.given } : first === undefined ? { code: 'UNKNOWN', message: TEXT.error } : { code: voteMessageCode(first), message: first };
    return this.#report(run, journal, player, outcome);
  }

  /**
   * Finishes what earlier calls left for the player: records memory holds are written
   * again, settled marks are dropped, rows are given. Returns the player's records, or
   * the journal's error (after giving what memory holds) when it cannot write or read.
   */
  async #settle(run: VoteRun, journal: DeliveryJournal, player: string, give: VoteRewardGiveFunction): Promise<{ ok: true; entries: JournalEntry[] } | { ok: false; error: JournalError }> {
    const memory = memoryOf(journal);
    const remembered = [...memory.values()].filter((e) => e.playerName === player);
    const memoryRows = remembered.filter((e): e is Row => e.state === 'voteClaimed');
    let entries: JournalEntry[] | undefined;
    if (remembered.length === 0 || (await this.#writeRemembered(run, journal, player, remembered))) {
      for (const entry of remembered) memory.delete(entry.deliveryId);
      try {
        entries = checked(await journal.pending(player));
      } catch (error) {
        this.#journalFailed(run, player, error);
      }
    }
    if (entries === undefined) {
      // Until what memory holds is written, its marks read as open: claim nothing, give what memory holds.
      await this.#giveAll(run, journal, memoryRows, give);
      return { ok: false, error: run.journalError as JournalError };
    }
    const done = entries.filter((e) => e.state === 'voteClaiming' && e.settled === true).map((e) => e.deliveryId);
    if (done.length > 0) await this.#write(run, journal, player, (j) => j.acknowledge(done));
    await this.#giveAll(run, journal, entries.filter((e): e is Row => e.state === 'voteClaimed'), give);
    return { ok: true, entries };
  }

  /**
   * Writes what memory holds for a player again. A journal that refuses a record itself
   * (its checks throw `INVALID_INPUT`: no retry will take it), not one that fails, must not
   * hold the player's other records, nor the player, forever: each is written alone, the
   * refused ones are dropped from memory (by the caller, once this returns true), and a
   * window names what they were (rows not given, lost calls not worked out) for staff.
   * True once nothing is left to write.
   */
  async #writeRemembered(run: VoteRun, journal: DeliveryJournal, player: string, remembered: readonly JournalEntry[]): Promise<boolean> {
    let failure: unknown;
    try {
      await journal.append([...remembered]);
      return true;
    } catch (error) {
      failure = error;
      this.#journalFailed(run, player, error);
    }
    if (!isStorefrontError(failure, 'INVALID_INPUT')) return false;
    const memory = memoryOf(journal);
    // What the journal refused of the work left (rows not given, lost calls not worked out).
    const lost: Array<Row | JournalVoteClaim> = [];
    for (const entry of remembered) {
      try {
        await journal.append([entry]);
        memory.delete(entry.deliveryId);
      } catch (error) {
        // A failing journal: what it refused stays in memory too, to be named once it takes the rest.
        if (!isStorefrontError(error, 'INVALID_INPUT')) {
          this.#journalFailed(run, player, error);
          return false;
        }
        if (isVoteWork(entry)) lost.push(entry);
      }
    }
    if (lost.length === 0) return true;
    const now = this.#host.now();
    const from = lost.reduce((least, e) => Math.min(least, e.recordedAt), now);
    const reward = [...new Set(lost.map((e) => (e.state === 'voteClaimed' ? String(e.reward.reward_id) : e.reward)))].join(',');
    const node = journal.nodeId;
    const window: JournalWindow = { deliveryId: `window:${globalThis.crypto.randomUUID()}`, playerName: player, from, to: Math.max(now, from), reward, state: 'unverified', cause: 'lostVote', recordedAt: now, ...(node === undefined ? {} : { node }) };
    run.window = { playerName: player, from: window.from, to: window.to, reward };
    emit(run, { type: 'unverified', operation: run.operation, window: { playerName: player, from: window.from, to: window.to } });
    // A window the journal cannot take now is written with the player's next records.
    if (!(await this.#write(run, journal, player, (j) => j.append([window])))) memory.set(window.deliveryId, window);
    return true;
  }

  /**
   * Gives each row through the delivery core (give.ts), acknowledging it right after; a
   * give that throws leaves it pending, its failure noted on it by the core's policy
   * (`stuck` after `staffAfterAttempts`), and so does one that outlives `grantTimeoutMs`
   * (acknowledged if it still returns; never given again while it runs).
   */
  async #giveAll(run: VoteRun, journal: DeliveryJournal, rows: readonly Row[], give: VoteRewardGiveFunction): Promise<void> {
    const { granting, given } = sharedOf(journal);
    for (const row of rows) {
      if (granting.has(row.deliveryId) || run.defer?.(row) === true) continue;
      // Given already by this process; only its acknowledgement is missing: never given twice.
      if (given.has(row.deliveryId)) {
        await this.#acknowledgeGiven(run, journal, row);
        continue;
      }
      const reward: GivenVoteReward = { ...row.reward, playerName: row.playerName, deliveryId: row.deliveryId, ...(row.recovered === true ? { recovered: true } : {}) };
      const failure = await giveWithin({ journal, deliveryId: row.deliveryId, operation: run.operation, timeoutMs: run.grantTimeoutMs, redact: run.via.redact }, () => give(reward));
      const span = failure?.window;
      if (span !== undefined) {
        // The give wrote a window (its outcome unknown): settled like a row given, never given again, reported as a window.
        await this.#acknowledgeGiven(run, journal, row);
        run.windowed = (run.windowed ?? 0) + 1;
        run.window ??= { playerName: row.playerName, from: span.from, to: span.to, reward: String(row.reward.reward_id) };
        emit(run, { type: 'unverified', operation: run.operation, window: { playerName: row.playerName, from: span.from, to: span.to } });
        continue;
      }
      if (failure !== undefined) {
        run.failed.push({ reward, error: failure.thrown });
        if (!failure.late) await this.#noteFailure(run, journal, row, reward, failure);
        continue;
      }
      run.granted.push(reward);
      await this.#acknowledgeGiven(run, journal, row);
    }
  }

  /** Acknowledges a row the game was given; until the journal takes it, the row is remembered as given. */
  async #acknowledgeGiven(run: VoteRun, journal: DeliveryJournal, row: Row): Promise<void> {
    await settleGiven(journal, row.deliveryId, () => this.#write(run, journal, row.playerName, (j) => j.acknowledge([row.deliveryId])));
  }

  /** The give's failure noted on the row by the core's policy (the `stuck` event once it is marked for staff). */
  async #noteFailure(run: VoteRun, journal: DeliveryJournal, row: Row, reward: GivenVoteReward, failure: GiveFailure): Promise<void> {
    const memory = memoryOf(journal);
    const noted = notedFailure(row, failure, this.#host.now(), run.staffAfterAttempts);
    if (noted.stuckNow) emit(run, { type: 'stuck', operation: run.operation, playerName: row.playerName, deliveryId: row.deliveryId, reward, attempts: noted.attempts, error: failure.thrown });
    if (memory.has(row.deliveryId)) memory.set(row.deliveryId, noted.record);
    else await this.#write(run, journal, row.playerName, (j) => j.append([noted.record]));
  }

  async #report(run: VoteRun, journal: DeliveryJournal, player: string, outcome: { code: VoteDeliveryCode; message: string; error?: StorefrontError }): Promise<VoteDeliveryReport> {
    const code: VoteDeliveryCode = run.failed.length > 0 || (run.windowed ?? 0) > 0 ? 'PARTIAL' : run.granted.length > 0 ? 'SUCCESS' : outcome.code;
    let message = code === 'PARTIAL' ? TEXT.partial : code === 'SUCCESS' && outcome.code !== 'SUCCESS' ? TEXT.given : outcome.message;
    if (run.window !== undefined) message = code === 'PARTIAL' && run.failed.length === 0 ? TEXT.window : `${message} ${TEXT.window}`;
    const pending = (await this.#pendingOf(run, journal, player)) ?? 0;
    const error = outcome.error ?? run.journalError;
    return {
      code,
      message: run.via.redact(message),
      granted: run.granted,
      failed: run.failed,
      pending,
      ...(error === undefined ? {} : { error }),
      ...(run.window === undefined ? {} : { unverified: run.window }),
      ...(run.journalError === undefined ? {} : { journalError: run.journalError }),
    };
  }

  /** Rows still to give and lost answers still to work out (journal and memory). */
  async #pendingOf(run: VoteRun, journal: DeliveryJournal, player: string | undefined): Promise<number | undefined> {
    const inMemory = [...memoryOf(journal).values()].filter((e) => e.state === 'voteClaimed' && (player === undefined || e.playerName === player));
    try {
      const listed = (await journal.pending(player)).filter(isVoteWork);
      return listed.length + inMemory.filter((e) => !listed.some((l) => l.deliveryId === e.deliveryId)).length;
    } catch (error) {
      this.#journalFailed(run, player, error);
      return inMemory.length;
    }
  }

  /** Runs one journal change; a failure is reported on the run, never thrown. */
  async #write(run: VoteRun, journal: DeliveryJournal, player: string, change: (journal: DeliveryJournal) => Promise<void>): Promise<boolean> {
    try {
      await change(journal);
      return true;
    } catch (error) {
      this.#journalFailed(run, player, error);
      return false;
    }
  }

  #journalFailed(run: VoteRun, player: string | undefined, error: unknown): JournalError {
    const journalError = journalErrorOf(run.operation, error, run.via.redact);
    run.journalError ??= journalError;
    if (player !== undefined) emit(run, { type: 'journalError', operation: run.operation, playerName: player, error: journalError });
    return journalError;
  }
}

/** Checks the input as `claimVoteReward` does; the reward is kept as text, as sent. */
function checkVoteInput(input: unknown, op: Operation): VoteRewardInput & { player: string } {
  const fields = checkRequiredObject(input as Record<string, unknown>, ['player', 'reward', 'amount'], 'player, reward and amount', 'input', op);
  const player = checkPlayerName(fields.player, 'input.player', op);
  const reward = typeof fields.reward === 'number' ? String(checkPositiveInteger(fields.reward, 'input.reward', op)) : checkNonBlank(fields.reward, 'input.reward', op);
  const amount = fields.amount === 'all' ? 'all' : checkPositiveInteger(fields.amount, 'input.amount', op);
  return { player, reward, amount };
}

function checkGive(value: unknown, op: Operation): VoteRewardGiveFunction {
  if (typeof value !== 'function') fail('give', `must be a function (reward) => void | Promise<void>, got ${describe(value)}`, op);
  return value as VoteRewardGiveFunction;
}

// The option names, derived from the interface: a new option cannot be left out of the allow-list.
const VOTE_OPTION_KEYS = Object.keys({ signal: 0, grantTimeoutMs: 0, giveTimeoutMs: 0 } satisfies Record<keyof VoteRewardDeliveryOptions, 0>);

/** Checks the options of `deliverVoteReward` / `resumeVoteRewards`: `giveTimeoutMs` is the deprecated name of `grantTimeoutMs`. */
function checkVoteOptions(options: unknown, op: Operation): VoteControl {
  const opts = checkOptionsObject(options as { [K in keyof VoteRewardDeliveryOptions]?: unknown } | undefined, VOTE_OPTION_KEYS, 'options', op);
  if (opts.grantTimeoutMs !== undefined && opts.giveTimeoutMs !== undefined) fail('options.giveTimeoutMs', 'must not be given with options.grantTimeoutMs (its new name): give grantTimeoutMs only', op);
  const grantTimeoutMs = opts.giveTimeoutMs === undefined ? checkGrantTimeout(opts.grantTimeoutMs, 'options.grantTimeoutMs', op) : checkGrantTimeout(opts.giveTimeoutMs, 'options.giveTimeoutMs', op);
  return { signal: checkSignal(opts.signal, op), grantTimeoutMs };
}

/** A give calling for its own player would wait for itself forever: refused. */
function refuseReentry(locks: PlayerLocks, player: string, op: Operation): void {
  if (locks.holds(player)) {
    fail('input.player', `must not be the player of a delivery this call runs inside (a give, grant or onEvent calling ${op} for ${JSON.stringify(player)} would wait for itself forever); give the reward and return`, op);
  }
}

/** A row still to give, or a lost answer still to work out. */
function isVoteWork(e: JournalEntry): e is Row | JournalVoteClaim {
  return e.state === 'voteClaimed' || (e.state === 'voteClaiming' && e.settled !== true);
}

function emit(run: VoteRun, event: DeliveryEvent): void {
  try {
    // Stryker disable next-line OptionalChaining: calling a missing listener throws inside the try that ignores listeners' failures: the same outcome
    run.via.onEvent?.(event);
  } catch {
    // A listener's failure must not change the outcome of a delivery.
  }
}
