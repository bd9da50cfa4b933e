/**
 * One set of names for the six endpoints: the SDK's endpoint table, the mock's operation
 * table and its fault rules. The tables stay apart (the mock checks the SDK's wire format
 * independently); these tests keep their names, and their paths, the same.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { ENDPOINTS } from '../../src/endpoints.js';
import { FaultInjector } from '../../src/mock/adapters/faults.js';
import { OPERATIONS } from '../../src/mock/adapters/router.js';
import type { MockOperationName } from '../../src/mock/index.js';

describe('endpoint names', () => {
  it('the SDK table, the mock table and the fault rules name the same six endpoints', () => {
    expectTypeOf<keyof typeof ENDPOINTS>().toEqualTypeOf<MockOperationName>();
    const names = OPERATIONS.map((operation) => operation.name);
    expect(names).toEqual(Object.keys(ENDPOINTS));
    const faults = new FaultInjector();
    for (const operation of names) expect(() => faults.add({ kind: 'delay', operation, times: 1 })).not.toThrow();
  });

  it('under each name, the same path', () => {
    for (const operation of OPERATIONS) {
      expect(`/${ENDPOINTS[operation.name].path}`, operation.name).toBe(operation.path);
    }
  });
});
