/**
 * The loop's settings as a program reads them from a file (`checkDeliveryLoopSettings`, the
 * bridge's `loop` section), loaded afresh for each test (issue #46 point 2): the list of the
 * settings' names is module-level, and a module loaded once before the tests would hide a
 * change to it. Each name taken, the defaults, a name that is no setting (an option of the
 * loop's that is not a setting included) and a wrong hintClaimMode, named as the loop does.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Sdk from '../../src/index.js';
import type * as Mock from '../../src/mock/index.js';
import { KEY, T0, storeSeed } from '../support/fixtures.js';

let sdk: typeof Sdk;
let mock: typeof Mock;
beforeEach(async () => {
  vi.resetModules();
  sdk = await import('../../src/index.js');
  mock = await import('../../src/mock/index.js');
});

const refusal = (settings: unknown): Sdk.InvalidInputError => {
  let error: unknown;
  try {
    sdk.checkDeliveryLoopSettings(settings);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(sdk.InvalidInputError);
  return error as Sdk.InvalidInputError;
};

describe('checkDeliveryLoopSettings', () => {
  it('fills the defaults, and takes every setting by its name', () => {
    expect(sdk.checkDeliveryLoopSettings({})).toEqual(sdk.checkDeliveryLoopSettings(undefined));
    const defaults = sdk.checkDeliveryLoopSettings({});
    expect(defaults).toMatchObject({ pollIntervalMs: 30_000, maxCallsPerSecond: 10, claimMode: 'exactlyOnce', hintClaimMode: 'exactlyOnce', staffAfterAttempts: 5 });
    const set = { pollIntervalMs: 60_000, maxCallsPerSecond: 5, grantTimeoutMs: 7_000, claimMode: 'fast', hintClaimMode: 'exactlyOnce', staffAfterAttempts: 3 } as const;
    expect(sdk.checkDeliveryLoopSettings(set)).toEqual(set);
  });

  it("names what is not a setting (the loop's give included) as the loop's option, under startDeliveryLoop", () => {
    for (const name of ['give', 'signal', 'giveVoteReward', 'nope']) {
      const error = refusal({ [name]: 1 });
      expect(error.argument).toBe(`options.${name}`);
      expect(error.operation).toBe('startDeliveryLoop');
      expect(error.rule).toBe('unknown option; known: pollIntervalMs, maxCallsPerSecond, grantTimeoutMs, claimMode, hintClaimMode, staffAfterAttempts');
      expect(error.message).toBe(`startDeliveryLoop: invalid options.${name}: ${error.rule}`);
    }
    expect(refusal(7)).toMatchObject({ argument: 'options', operation: 'startDeliveryLoop' });
  });

  it('hintClaimMode: one of the two modes, by default claimMode', () => {
    expect(sdk.checkDeliveryLoopSettings({ claimMode: 'fast' }).hintClaimMode).toBe('fast');
    expect(sdk.checkDeliveryLoopSettings({ claimMode: 'fast', hintClaimMode: 'exactlyOnce' }).hintClaimMode).toBe('exactlyOnce');
    const error = refusal({ hintClaimMode: 'slow' });
    expect(error.argument).toBe('options.hintClaimMode');
    expect(error.rule).toBe('must be \'exactlyOnce\' or \'fast\' (default: claimMode), got "slow"');
  });
});

describe('startDeliveryLoop', () => {
  it("takes each of the loop's options by its name, and names what is not one under startDeliveryLoop", async () => {
    const service = mock.createMockService({ seed: storeSeed, now: T0 });
    const client = new sdk.StorefrontClient({ apiKey: KEY, fetch: service.fetch, now: service.clock.now, journal: new sdk.MemoryJournal() });
    const loop = client.startDeliveryLoop({ give: () => undefined, giveVoteReward: () => undefined, signal: new AbortController().signal, pollIntervalMs: 60_000, maxCallsPerSecond: 5, grantTimeoutMs: 7_000, claimMode: 'fast', hintClaimMode: 'fast', staffAfterAttempts: 3 });
    await loop.stop();
    let error: unknown;
    try {
      client.startDeliveryLoop(undefined as unknown as Sdk.DeliveryLoopOptions);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(sdk.InvalidInputError);
    expect(error).toMatchObject({ argument: 'options', operation: 'startDeliveryLoop', message: 'startDeliveryLoop: invalid options: must be an object with at least { give }' });
  });
});
