/**
 * The crash campaign's scenarios (#21 points 1–5), chosen per worker run by the
 * orchestrator and played by the worker (scripts/crash/worker/sabotage.ts):
 *
 * - `plain`: one client on one FileJournal; the orchestrator's random SIGKILLs only.
 * - `two-clients`: two `StorefrontClient`s on one journal in one worker (one FileJournal
 *   instance, or in a lone worker a third of the time both on the default journal, the
 *   worker's working directory being the journal's), delivering for the same players at
 *   once: the per-player order must belong to the journal, or a lost claim answer of one
 *   is acknowledged away by the other's ALREADY_CLAIMED. The run also opens the journal
 *   under a second name (a symlink, a hard link) and expects a refusal (point 2).
 * - `torn-append`: the worker cuts the `at`-th append of several entries after a random
 *   share of its bytes and SIGKILLs itself; the next start must drop the torn line, and
 *   the engine grant or report what it held (point 3).
 * - `no-raw-rows`: claim answers lose `rawTransactions` half of the time, and after 40%
 *   of the claim answers the worker SIGKILLs itself before one of the next 1–3 journal
 *   writes: in the window between the claim and the journaling of its lines (point 5).
 *
 * `mix` (the default) picks one of the four for each run, uniformly.
 *
 * @module
 */

export const SCENARIOS = ['plain', 'two-clients', 'torn-append', 'no-raw-rows'] as const;
export type Scenario = (typeof SCENARIOS)[number];
/** The `--scenario` values: one scenario, or `mix`. */
export type ScenarioChoice = Scenario | 'mix';

/** What a worker run gets for its scenario (part of WorkerConfig). */
export interface ScenarioConfig {
  scenario: Scenario;
  /** `two-clients`: both clients on the default journal (no `journal` option) rather than one FileJournal instance. */
  defaultJournal?: boolean;
  /** `torn-append`: which append of several entries is torn (1-based), after which share of its bytes. */
  tear?: { at: number; fraction: number };
  /** `no-raw-rows`: share of claim answers stripped of rawTransactions; share after which the worker kills itself. */
  stripRaw?: number;
  dieAfterClaim?: number;
}

/** The scenario of one worker run. `lone`: the only worker on its journal (the default journal is for it only). */
export function scenarioFor(choice: ScenarioChoice, random: () => number, lone: boolean): ScenarioConfig {
  const scenario = choice === 'mix' ? (SCENARIOS[Math.floor(random() * SCENARIOS.length)] as Scenario) : choice;
  switch (scenario) {
    case 'plain':
      return { scenario };
    case 'two-clients':
      return { scenario, defaultJournal: lone && random() < 1 / 3 };
    case 'torn-append':
      return { scenario, tear: { at: 1 + Math.floor(random() * 3), fraction: random() } };
    case 'no-raw-rows':
      return { scenario, stripRaw: 0.5, dieAfterClaim: 0.4 };
  }
}

/** The kill delay of a run: a torn append waits for its moment longer than the usual kill. */
export function killDelayFor(scenario: Scenario, usual: readonly [number, number]): readonly [number, number] {
  return scenario === 'torn-append' ? [usual[0] * 4, usual[1] * 3] : usual;
}
