import fc from 'fast-check';
import { describe, it } from 'vitest';
import { INPUT_CALLS, OPERATIONS, inputProperty, responseProperty } from '../support/fuzz-properties.js';

// `npm run fuzz` runs the same properties with ≥ 10,000 cases per operation.
const RUNS = 200;
const SEED = 20260101;

describe('fuzz: arbitrary responses resolve a typed value or reject with a StorefrontError', () => {
  for (const op of OPERATIONS) {
    it(op.name, async () => {
      await fc.assert(responseProperty(op), { numRuns: RUNS, seed: SEED });
    }, 60_000);
  }
});

describe('fuzz: arbitrary inputs reject with InvalidInputError or send a request within the contract', () => {
  for (const call of INPUT_CALLS) {
    it(call.name, async () => {
      await fc.assert(inputProperty(call), { numRuns: RUNS, seed: SEED });
    }, 60_000);
  }
});
