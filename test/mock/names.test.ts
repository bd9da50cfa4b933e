/**
 * One name for each of the six endpoints, the client method that calls it: the SDK's
 * endpoint table, the errors' `operation`, the mock's operation table and its fault rules.
 * The tables stay apart (the mock checks the SDK's wire format independently); these tests
 * keep their names, and their paths, the same.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { ClaimOutcomeUnknownError, StorefrontClient, type Operation } from '../../src/index.js';
import { ENDPOINTS } from '../../src/endpoints.js';
import { FaultInjector } from '../../src/mock/adapters/faults.js';
import { OPERATIONS } from '../../src/mock/adapters/router.js';
import { createMockService, exampleSeed, type DeprecatedMockOperationName, type MockOperationName } from '../../src/mock/index.js';

describe('endpoint names', () => {
  it('the SDK table, the mock table and the fault rules name the same six endpoints', () => {
    expectTypeOf<keyof typeof ENDPOINTS>().toEqualTypeOf<MockOperationName>();
    const names = OPERATIONS.map((operation) => operation.name);
    expect(names).toEqual(Object.keys(ENDPOINTS));
    const faults = new FaultInjector();
    for (const operation of names) expect(() => faults.add({ kind: 'delay', operation, times: 1 })).not.toThrow();
  });

  it('each name is the client method that calls the endpoint, and the operation its errors name', () => {
    expectTypeOf<MockOperationName>().toExtend<Operation & keyof StorefrontClient>();
    for (const [name, endpoint] of Object.entries(ENDPOINTS)) {
      expect(endpoint.operation).toBe(name);
      expect(typeof StorefrontClient.prototype[name as MockOperationName], name).toBe('function');
    }
  });

  it('under each name, the same path', () => {
    for (const operation of OPERATIONS) {
      expect(`/${ENDPOINTS[operation.name].path}`, operation.name).toBe(operation.path);
    }
  });
});

describe('the fault rules\' former operation names (deprecated aliases)', () => {
  const FORMER: ReadonlyArray<readonly [DeprecatedMockOperationName, MockOperationName]> = [
    ['catalog', 'getCatalog'],
    ['claimV4', 'claim'],
    ['claimV3', 'claimLegacy'],
    ['storeClaim', 'claimStoreTransactions'],
    ['voteClaim', 'claimVoteReward'],
  ];

  it.each(FORMER)('%s is still accepted, and read as %s', (former, current) => {
    const faults = new FaultInjector();
    expect(faults.add({ kind: 'delay', operation: former, times: 1 }).rule.operation).toBe(current);
    expect(faults.add({ kind: 'delay', operation: [former, 'checkout'], times: 1 }).rule.operation).toEqual([current, 'checkout']);
    expect(faults.pick(current)).toBeDefined();
    expect(faults.list().map((state) => state.fired)).toEqual([1, 0]);
  });

  it('mock.faults.add and POST /__mock/faults take them, and the fault fires on the renamed operation', async () => {
    const KEY = 'demo-key-3f9c2a';
    const mock = createMockService({ seed: exampleSeed, now: Date.parse('2026-01-01T00:00:00Z') });
    const client = new StorefrontClient({ apiKey: KEY, fetch: mock.fetch, now: mock.clock.now });
    mock.addPurchase(KEY, { playerName: 'Player123', id: 302 });
    mock.faults.add({ operation: 'claimV4', kind: 'dropAfter', times: 1 });
    await expect(client.claim('Player123')).rejects.toBeInstanceOf(ClaimOutcomeUnknownError);

    const added = await mock.fetch('http://mock/__mock/faults', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ operation: ['voteClaim', 'storeClaim'], kind: 'status', status: 502, times: 1 }),
    });
    expect(added.status).toBe(200);
    expect(((await added.json()) as { rule: { operation: unknown } }).rule.operation).toEqual(['claimVoteReward', 'claimStoreTransactions']);
    expect(mock.faults.list().map((state) => state.rule.operation)).toEqual(['claim', ['claimVoteReward', 'claimStoreTransactions']]);
  });

  it('an unknown name is still refused', () => {
    expect(() => new FaultInjector().add({ kind: 'delay', operation: 'claimV5' as MockOperationName, times: 1 })).toThrow(/rule\.operation/);
  });
});
