/**
 * The errors' brand (src/errors/base.ts), a module-level decision: the SDK is loaded afresh
 * for each test, so a change to the brand made before a test runs is seen by it (issue #46).
 * The brand is the global `Symbol.for('teamgames-sdk.StorefrontError')`, set to `true` on the
 * errors' prototype: another copy of the SDK recognises the errors, and it stays out of an
 * error's own keys and its JSON.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Sdk from '../../src/index.js';

let sdk: typeof Sdk;
beforeEach(async () => {
  vi.resetModules();
  sdk = await import('../../src/index.js');
});

describe('the brand', () => {
  it("is the global symbol set to true: another copy's error is recognised, and this copy's errors carry it", () => {
    const brand = Symbol.for('teamgames-sdk.StorefrontError');
    expect(sdk.isStorefrontError({ [brand]: true, code: 'TIMEOUT' }, 'TIMEOUT')).toBe(true);
    const error = new sdk.InvalidInputError('playerName', 'must not be blank', 'claim');
    expect((error as unknown as Record<symbol, unknown>)[brand]).toBe(true);
    expect(sdk.isStorefrontError(error, 'INVALID_INPUT')).toBe(true);
  });

  it("stays out of an error's own keys and its JSON", () => {
    const error = new sdk.InvalidInputError('playerName', 'must not be blank', 'claim');
    expect(Object.getOwnPropertySymbols(error)).toEqual([]);
    expect(JSON.stringify(error)).not.toContain('teamgames-sdk');
  });
});
