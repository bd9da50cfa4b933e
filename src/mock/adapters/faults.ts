/**
 * Fault injection for the mock: per operation, for the next N calls or with a probability
 * drawn from a seeded generator, answer with a delay, a 5xx HTML page, a dropped
 * connection (before or after the state change, or with the request carried out later) or
 * a malformed body.
 */
import { z } from 'zod';
import { describeIssues } from '../service/issues.js';
import { seededRandom } from '../service/random.js';

/**
 * The six service operations of the mock, each named after the client method that calls
 * it (the rows of the mock's operation table; the SDK's errors name the same methods in
 * `operation`).
 */
export type MockOperationName = 'getCatalog' | 'checkout' | 'claim' | 'claimLegacy' | 'claimStoreTransactions' | 'claimVoteReward';

/**
 * The operations' former names, still accepted in a fault rule's `operation` (by
 * {@link MockFaults.add} and `POST /__mock/faults`) and read as the current ones:
 * `catalog` → `getCatalog`, `claimV4` → `claim`, `claimV3` → `claimLegacy`, `storeClaim` →
 * `claimStoreTransactions`, `voteClaim` → `claimVoteReward`.
 *
 * @deprecated Name operations by their {@link MockOperationName} (the client method's name);
 *   the former names will be removed in a future major version.
 */
export type DeprecatedMockOperationName = 'catalog' | 'claimV4' | 'claimV3' | 'storeClaim' | 'voteClaim';

const OPERATION_NAMES = ['getCatalog', 'checkout', 'claim', 'claimLegacy', 'claimStoreTransactions', 'claimVoteReward'] as const satisfies readonly MockOperationName[];

const DEPRECATED_NAMES: Readonly<Record<DeprecatedMockOperationName, MockOperationName>> = {
  catalog: 'getCatalog',
  claimV4: 'claim',
  claimV3: 'claimLegacy',
  storeClaim: 'claimStoreTransactions',
  voteClaim: 'claimVoteReward',
};

/**
 * What a fault does to one request:
 * - `delay`: waits `delayMs` (real time), then answers normally;
 * - `status`: answers `status` (default 503) with an HTML page, like a proxy in front of
 *   the service; by default before the operation runs (nothing changed), with
 *   `phase: 'after'` once it ran (the change happened, the answer is an error page);
 * - `dropBefore`: the connection drops before the operation runs (nothing changed);
 * - `dropAfter`: the operation runs, then the connection drops (the lost answer);
 * - `malformed`: the body is cut in the middle of its JSON; by default after the
 *   operation ran (`phase: 'before'` to skip it);
 * - `landLate`: the connection drops before the operation runs, and the request is
 *   carried out **later**: after the next `landAfter` requests of the same operation were
 *   answered (default 1), or at {@link MockFaults.land}. The real service can do this
 *   **[interpretation]**: a request that sat in a proxy or a queue past the client's
 *   timeout is still carried out once it reaches the service.
 *
 * In process (`mock.fetch`, msw) a dropped connection is a network error; over HTTP
 * (`mock.listen`) the socket is destroyed.
 */
export type MockFaultKind = 'delay' | 'status' | 'dropBefore' | 'dropAfter' | 'malformed' | 'landLate';

/**
 * A fault rule, as given to {@link MockFaults.add} or `POST /__mock/faults`.
 *
 * @see [Testing your plugin with the mock: fault injection](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/testing-with-the-mock.md#fault-injection)
 */
export interface MockFaultRule {
  /** The fault to inject. */
  kind: MockFaultKind;
  /** The operations it applies to (one name or a list). Default: all six. */
  operation?: MockOperationName | readonly MockOperationName[];
  /** Fire for the next `times` matching calls (after `skip`), then retire. */
  times?: number;
  /** Let this many matching calls through untouched before the rule applies. Default 0. */
  skip?: number;
  /** Fire on each matching call with this probability (0…1), from the seeded generator. */
  probability?: number;
  /** HTTP status of a `status` fault (400…599). Default 503. */
  status?: number;
  /** Milliseconds of a `delay` fault. Default 100. */
  delayMs?: number;
  /** For `status` and `malformed`: whether the operation runs first (`after`) or not (`before`). */
  phase?: 'before' | 'after';
  /** For `landLate`: how many later requests of the same operation are answered before it is carried out (1…1000). Default 1. */
  landAfter?: number;
}

/**
 * A {@link MockFaultRule} whose `operation` may use the former names.
 *
 * @deprecated Use {@link MockFaultRule}, with the {@link MockOperationName}s.
 */
export interface MockFaultRuleWithDeprecatedNames extends Omit<MockFaultRule, 'operation'> {
  /** The operations it applies to, by current or former name (one name or a list). Default: all six. */
  operation?: MockOperationName | DeprecatedMockOperationName | ReadonlyArray<MockOperationName | DeprecatedMockOperationName>;
}

/** A rule as the mock holds it, with its counters. */
export interface MockFaultState {
  /** Position-independent id of the rule, for logs. */
  id: number;
  /** The rule as added (defaults filled in). */
  rule: Required<Pick<MockFaultRule, 'kind' | 'phase'>> & MockFaultRule;
  /** Calls left for a `times` rule; `null` for a probability rule. */
  remaining: number | null;
  /** Matching calls still to let through before the rule applies. */
  skipping: number;
  /** How many times it fired. */
  fired: number;
}

/** The fault that fires for one request (already resolved from the rules). */
export interface FiredFault {
  /** What it does. */
  kind: MockFaultKind;
  /** `status` and `malformed`: whether the operation runs first. */
  phase: 'before' | 'after';
  /** HTTP status of a `status` fault. */
  status: number;
  /** Delay of a `delay` fault. */
  delayMs: number;
  /** Requests of the operation answered before a `landLate` request is carried out. */
  landAfter: number;
}

/**
 * The fault-injection control of a mock (`mock.faults`). Rules are checked in the order
 * they were added; the first that fires decides. `reset()` of the mock clears them and
 * re-seeds the generator.
 *
 * @example
 * ```ts
 * mock.faults.add({ operation: 'claim', kind: 'dropAfter', times: 1 }); // the next claim's answer is lost
 * mock.faults.seed(42);
 * mock.faults.add({ operation: ['claim', 'checkout'], kind: 'status', status: 502, probability: 0.1 });
 * mock.faults.clear();
 * ```
 * @see [Testing your plugin with the mock: fault injection](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/testing-with-the-mock.md#fault-injection)
 */
export interface MockFaults {
  /**
   * Adds a rule; returns its state (counters update as it fires).
   *
   * @throws RangeError when the rule is invalid (unknown kind or operation, neither or
   *   both of `times` and `probability`, a status outside 400…599 …).
   */
  add(rule: MockFaultRule): MockFaultState;
  /**
   * Adds a rule that names operations by their former names, read as the current ones
   * (the state returned holds the current names).
   *
   * @deprecated Name operations by their {@link MockOperationName} (`claim` rather than
   *   `claimV4` …); see {@link DeprecatedMockOperationName}.
   * @throws RangeError when the rule is invalid.
   */
  add(rule: MockFaultRuleWithDeprecatedNames): MockFaultState;
  /** Removes every rule (the generator keeps its position). */
  clear(): void;
  /** Re-seeds the generator that decides probability rules. The default seed is 1. */
  seed(seed: number): void;
  /**
   * Carries out now every request a `landLate` fault still holds (their answers were lost
   * long ago); returns how many. `reset()` of the mock drops them instead.
   */
  land(): number;
  /** The rules with their counters. */
  list(): MockFaultState[];
}

/** An operation's name; a former name reads as the current one. */
const operationName = z.preprocess(
  (name) => (typeof name === 'string' && Object.hasOwn(DEPRECATED_NAMES, name) ? DEPRECATED_NAMES[name as DeprecatedMockOperationName] : name),
  z.enum(OPERATION_NAMES),
);

const ruleSchema = z.strictObject({
  kind: z.enum(['delay', 'status', 'dropBefore', 'dropAfter', 'malformed', 'landLate']),
  operation: z.union([operationName, z.array(operationName).min(1)]).optional(),
  times: z.number().int().min(1).optional(),
  skip: z.number().int().min(0).optional(),
  probability: z.number().min(0).max(1).optional(),
  status: z.number().int().min(400).max(599).optional(),
  delayMs: z.number().int().min(0).max(600_000).optional(),
  phase: z.enum(['before', 'after']).optional(),
  landAfter: z.number().int().min(1).max(1000).optional(),
});

/**
 * Parses a rule strictly, former operation names read as the current ones.
 * @throws RangeError naming the field at fault.
 */
export function parseFaultRule(value: unknown): MockFaultRule {
  const result = ruleSchema.safeParse(value);
  if (!result.success) throw new RangeError(`Invalid fault rule: ${describeIssues('rule', result.error.issues).join('; ')}`);
  const rule = result.data;
  if ((rule.times === undefined) === (rule.probability === undefined)) {
    throw new RangeError('Invalid fault rule: give exactly one of "times" (next N calls) or "probability" (0…1)');
  }
  return rule as MockFaultRule;
}

/** The seeded generator the fault rules draw from (also used by the soak and the campaigns). */
export { seededRandom };

/** The mock's fault table; {@link FaultInjector.pick} is called once per operation request. */
export class FaultInjector implements MockFaults {
  #rules: MockFaultState[] = [];
  #nextId = 1;
  #seed = 1;
  #random = seededRandom(1);
  // Requests a `landLate` fault holds: carried out once `left` more requests of their operation were answered.
  #held: Array<{ operation: MockOperationName; left: number; run: () => void }> = [];

  add(rule: MockFaultRule | MockFaultRuleWithDeprecatedNames): MockFaultState {
    const parsed = parseFaultRule(rule);
    const phase = parsed.phase ?? (parsed.kind === 'status' ? 'before' : 'after');
    const state: MockFaultState = {
      id: this.#nextId++,
      rule: { ...parsed, phase },
      remaining: parsed.times ?? null,
      skipping: parsed.skip ?? 0,
      fired: 0,
    };
    this.#rules.push(state);
    return state;
  }

  clear(): void {
    this.#rules = [];
  }

  seed(seed: number): void {
    if (!Number.isFinite(seed)) throw new RangeError(`faults.seed: expected a finite number, got ${String(seed)}`);
    this.#seed = seed;
    this.#random = seededRandom(seed);
  }

  list(): MockFaultState[] {
    return this.#rules.map((s) => ({ ...s, rule: { ...s.rule } }));
  }

  /** Clears the rules and the held requests, and restarts the generator from its seed. */
  reset(): void {
    this.clear();
    this.#held = [];
    this.#random = seededRandom(this.#seed);
  }

  land(): number {
    const held = this.#held;
    this.#held = [];
    for (const request of held) request.run();
    return held.length;
  }

  /** Holds a request a `landLate` fault dropped: `run` carries it out later. */
  hold(operation: MockOperationName, landAfter: number, run: () => void): void {
    this.#held.push({ operation, left: landAfter, run });
  }

  /** One request of `operation` was answered: carries out the held requests whose turn came, oldest first. */
  answered(operation: MockOperationName): void {
    const due = this.#held.filter((h) => h.operation === operation && --h.left <= 0);
    if (due.length === 0) return;
    this.#held = this.#held.filter((h) => !due.includes(h));
    for (const request of due) request.run();
  }

  /** The fault for one request of `operation`, or undefined. */
  pick(operation: MockOperationName): FiredFault | undefined {
    for (const state of this.#rules) {
      const { rule } = state;
      const ops = rule.operation === undefined ? undefined : typeof rule.operation === 'string' ? [rule.operation] : rule.operation;
      if (ops !== undefined && !ops.includes(operation)) continue;
      if (state.skipping > 0) {
        state.skipping -= 1;
        continue;
      }
      if (state.remaining !== null) {
        if (state.remaining <= 0) continue;
        state.remaining -= 1;
      } else if (this.#random() >= (rule.probability ?? 0)) {
        continue;
      }
      state.fired += 1;
      return { kind: rule.kind, phase: rule.phase, status: rule.status ?? 503, delayMs: rule.delayMs ?? 100, landAfter: rule.landAfter ?? 1 };
    }
    return undefined;
  }
}

/** The HTML page a `status` fault answers, like a proxy's error page. */
export function faultPage(status: number): string {
  return `<!DOCTYPE html><html><head><title>${status} Error</title></head><body><center><h1>${status} Error</h1></center><hr><center>mock-proxy</center></body></html>`;
}
