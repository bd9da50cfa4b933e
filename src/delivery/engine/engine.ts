/**
 * The delivery engine a client holds from its construction, and the delivery loop with
 * it: small, so a program that never delivers does not carry delivery. What it answers at
 * once (the journal, the per-player order, the one loop per journal, what memory holds)
 * comes from `shared.ts`; the modes (`modes.ts`: reconcile, intents, claim, grants,
 * journal writes) are loaded by `import()` on the first delivery, so a bundler leaves
 * them out of a program that never calls `deliver`, `resumeDeliveries` or the loop.
 *
 * @module
 * @internal
 */
import type { JournalError } from '../../errors.js';
import type { DeliveryJournal, JournalEntry } from '../../journals/contract.js';
import type { DeliveryModes } from './modes.js';
import type { DeliveryEngineConfig } from './records.js';
import type { RunExtras, RunVia } from './report.js';
import { claimLoop, defaultJournal, journalErrorOf, loadedModes, releaseLoop, rememberedOf, sharedOf } from '../core/index.js';
import type { Control } from './options.js';
import type { DeliveryMode, DeliveryReport, GrantFunction, ResumeReport } from '../core/index.js';

export type { DeliveryEngineConfig } from './records.js';

/**
 * The engine behind `deliver`, `resumeDeliveries` and the delivery loop: one per client
 * and the clients derived from it (`withOptions`). Each call names the client it runs for
 * (its claim and its `onEvent`).
 * @internal
 */
export class DeliveryEngine {
  readonly #config: DeliveryEngineConfig;
  #journal: DeliveryJournal | undefined;
  #modes: DeliveryModes | undefined;

  constructor(config: DeliveryEngineConfig) {
    this.#config = config;
    this.#journal = config.journal;
  }

  /** The journal; the default file journal is opened on first use, never at construction. */
  get journal(): DeliveryJournal {
    return (this.#journal ??= defaultJournal());
  }

  /** True when the calling code runs inside a delivery of `player` on this journal (a grant, an `onEvent`). */
  holds(player: string): boolean {
    return sharedOf(this.journal).locks.holds(player);
  }

  /**
   * Registers `loop` as the journal's one delivery loop in this process; returns the loop
   * already running, if any (then nothing is registered). `release` undoes it.
   */
  claimLoop(loop: object): object | undefined {
    return claimLoop(this.journal, loop);
  }

  releaseLoop(loop: object): void {
    releaseLoop(this.journal, loop);
  }

  /** A journal's failure as a {@link JournalError} of the delivery loop, its text redacted by the client's `redact`. */
  journalErrorOf(error: unknown, redact: ((text: string) => string) | undefined): JournalError {
    return journalErrorOf('startDeliveryLoop', error, redact);
  }

  /** The wall clock the journal's timestamps are on (epoch ms). */
  wallNow(): number {
    return this.#config.now();
  }

  /** What only memory holds for `player` (the journal refused it), purchases and vote rewards alike. */
  remembered(player: string): JournalEntry[] {
    return rememberedOf(sharedOf(this.journal), player);
  }

  /**
   * What is still to do for `player`: the journal's entries and the claimed lines only memory
   * holds (the journal refused them). Rejects with the journal's failure, checked entries only.
   */
  entriesOf(player: string): Promise<JournalEntry[]> {
    return this.#use((modes) => modes.entriesOf(player));
  }

  deliver(via: RunVia, playerName: unknown, grant: unknown, options: unknown): Promise<DeliveryReport> {
    return this.#use((modes) => modes.deliver(via, playerName, grant, options));
  }

  /** `deliver` for the delivery loop: its player, grant and control checked when they entered the loop, carried as they are. */
  deliverChecked(via: RunVia, player: string, grant: GrantFunction, mode: DeliveryMode, control: Control, extras: RunExtras = {}): Promise<DeliveryReport> {
    return this.#use((modes) => modes.deliverChecked(via, player, grant, mode, control, extras));
  }

  resume(via: RunVia, grant: unknown, options: unknown): Promise<ResumeReport> {
    return this.#use((modes) => modes.resume(via, grant, options));
  }

  /**
   * Runs `work` on the modes: at once when their module is loaded already (no turn waited,
   * so a delivery takes its place in the player's order in the caller's turn), else once
   * `import()` has loaded it. A vote reward asked in the same turn queues the same way
   * (`deliverVoteReward`), so the player's items are given in the order they were asked.
   */
  #use<T>(work: (modes: DeliveryModes) => Promise<T>): Promise<T> {
    const modes = this.#ready();
    return modes === undefined ? this.#loaded().then(work) : work(modes);
  }

  /** The modes when their module is loaded already (made now if this engine has none yet): no turn waited. */
  #ready(): DeliveryModes | undefined {
    const Modes = loadedModes.DeliveryModes as typeof DeliveryModes | undefined;
    if (Modes !== undefined) this.#modes ??= new Modes({ ...this.#config, journal: this.journal });
    return this.#modes;
  }

  /** The modes, their module loaded by `import()` on the first delivery, over this engine's journal. */
  async #loaded(): Promise<DeliveryModes> {
    await import('./modes.js');
    return this.#ready() as DeliveryModes;
  }
}
