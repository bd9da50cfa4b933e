/**
 * The delivery loop's option bounds at their edges, as the bridge's config reaches them
 * (issue #46 point 1): each bound taken at its edge and refused one past it, with the
 * option's name and range in the message; the defaults where the loop shows them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidInputError, MemoryJournal, StorefrontClient, type DeliveryLoop, type DeliveryLoopOptions } from 'teamgames-sdk';
import { createMockService } from 'teamgames-sdk/mock';
import { KEY, T0, storeSeed } from '../support/fixtures.js';

const started: DeliveryLoop[] = [];
afterEach(async () => {
  for (const loop of started.splice(0)) await loop.stop();
});

function client(): StorefrontClient {
  const mock = createMockService({ seed: storeSeed, now: T0 });
  return new StorefrontClient({ apiKey: KEY, fetch: mock.fetch, now: mock.clock.now, journal: new MemoryJournal() });
}
const give = () => undefined;
const start = (options: unknown) => {
  const loop = client().startDeliveryLoop(options as DeliveryLoopOptions);
  started.push(loop);
  return loop;
};
const refusal = (options: unknown): InvalidInputError => {
  let error: unknown;
  try {
    start(options);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(InvalidInputError);
  return error as InvalidInputError;
};

describe('the loop options at their edges', () => {
  it.each([
    ['pollIntervalMs', 10_000, 86_400_000, 'must be an integer from 10,000 to 86,400,000'],
    ['maxCallsPerSecond', 1, 1_000, 'must be an integer from 1 to 1,000'],
    ['staffAfterAttempts', 1, 1_000, 'must be an integer from 1 to 1,000'],
  ] as const)('%s: %d and %d taken, one past each refused, a fraction and a string refused', (option, min, max, rule) => {
    expect(start({ give, [option]: min })).toBeDefined();
    expect(start({ give, [option]: max })).toBeDefined();
    for (const value of [min - 1, max + 1, min + 0.5, String(min)]) {
      const error = refusal({ give, [option]: value });
      expect(error.argument).toBe(`options.${option}`);
      expect(error.rule).toBe(`${rule}, got ${typeof value === 'string' ? `"${value}"` : value}`);
      expect(error.message).toBe(`startDeliveryLoop: invalid options.${option}: ${error.rule}`);
    }
  });

  it('grantTimeoutMs: 1 taken, 0 refused', () => {
    expect(start({ give, grantTimeoutMs: 1 })).toBeDefined();
    expect(refusal({ give, grantTimeoutMs: 0 }).argument).toBe('options.grantTimeoutMs');
  });

  it('the defaults: a 30 s poll interval (the loop says it)', () => {
    expect(start({ give }).stats().intervalMs).toBe(30_000);
    expect(start({ give, pollIntervalMs: 60_000 }).stats().intervalMs).toBe(60_000);
  });

  it('options must be an object holding give, a function; giveVoteReward a function when set; claimMode one of two', () => {
    for (const options of [undefined, null]) {
      expect(refusal(options)).toMatchObject({ argument: 'options', rule: 'must be an object with at least { give }' });
    }
    expect(refusal({})).toMatchObject({ argument: 'options.give', rule: 'must be a function (item) => void | Promise<void>, got undefined' });
    expect(refusal({ give: 'x' }).argument).toBe('options.give');
    expect(refusal({ give, giveVoteReward: 1 })).toMatchObject({ argument: 'options.giveVoteReward', rule: 'must be a function (reward) => void | Promise<void>, got 1' });
    expect(start({ give, giveVoteReward: () => undefined })).toBeDefined();
    expect(refusal({ give, claimMode: 'slow' })).toMatchObject({ argument: 'options.claimMode', rule: "must be 'exactlyOnce' (the default) or 'fast', got \"slow\"" });
    expect(start({ give, claimMode: 'exactlyOnce' })).toBeDefined();
    expect(start({ give, claimMode: 'fast' })).toBeDefined();
    expect(refusal({ give, signal: 'x' }).argument).toBe('options.signal');
    expect(refusal({ give, nope: 1 }).argument).toBe('options.nope');
  });
});
