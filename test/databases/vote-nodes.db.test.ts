/**
 * Two game servers (two StorefrontClients, a pool and a journal object each, on ONE table)
 * claim vote rewards for the same players at the same moment, while a fifth of the vote
 * answers are lost. The player's lock across nodes orders them, so the counters of each
 * answer follow the one before: every point the service spent is given once in game, or
 * named in a window for staff. Never silent, never twice.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { StorefrontClient, inspectJournal, type GivenVoteReward } from 'teamgames-sdk';
import { createMockService } from 'teamgames-sdk/mock';
import { KEY, T0, storeSeed } from '../support/fixtures.js';
import { uniqueName } from '../support/databases.js';
import { engineKits, type EngineKit } from './kits.js';

const mock = createMockService({ seed: storeSeed, now: T0 });
afterEach(() => mock.reset());

const PLAYERS = ['Ann', 'Bob'];
const ROUNDS = 10;
// storeSeed's reward 2 "Scroll": 5 points per unit, 2 given per unit. One unit, then two,
// in turn: a lost call is proven only by an answer whose own units cannot explain what the
// counters moved (the rule of docs/delivering-purchases.md), so equal asks never recover.
const ASK = { reward: 2, amount: 1 } as const;
const askOf = (round: number) => ({ reward: 2, amount: round % 2 === 0 ? 1 : 2 }) as const;

describe.each(engineKits())('$label', (kit: EngineKit) => {
  it.skipIf(kit.url === undefined)('two nodes claim vote rewards for the same players at once, answers lost: every point spent is given once or in a window', async () => {
    const names = { table: uniqueName('journal'), grantedTable: uniqueName('granted') };
    await kit.journal(kit.pool(2), names).createTables();
    const given = new Map<string, GivenVoteReward>();
    let repeats = 0;
    const give = (reward: GivenVoteReward) => {
      if (given.has(reward.deliveryId)) repeats += 1;
      else given.set(reward.deliveryId, reward);
    };
    const nodes = ['a', 'b'].map((name) => {
      const journal = kit.journal(kit.pool(3), { ...names, nodeId: `node-${name}` });
      return { journal, client: new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: mock.fetch, now: mock.clock.now, journal, retry: 0 }) };
    });
    for (const player of PLAYERS) {
      mock.recordVote(KEY, player, 500);
      // The first answers give each player's counters and the reward's price.
      for (const node of nodes) await node.client.deliverVoteReward({ player, ...ASK }, give);
    }

    mock.faults.seed(11);
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropAfter', probability: 0.2 });
    const codes: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const player of PLAYERS) {
        const reports = await Promise.all(nodes.map((node, i) => node.client.deliverVoteReward({ player, ...askOf(round + i) }, give)));
        codes.push(...reports.map((r) => r.code));
      }
    }
    // The network heals: each player's next answer settles what was lost.
    mock.faults.clear();
    for (const player of PLAYERS) await nodes[1]!.client.deliverVoteReward({ player, ...ASK }, give);

    const windows = (await inspectJournal(nodes[0]!.journal)).openWindows;
    for (const player of PLAYERS) {
      const votes = mock.state().servers[0]?.votes.find((v) => v.playerName === player);
      const spent = (votes?.total_points ?? 0) - (votes?.vote_points ?? 0);
      const givenPoints = ([...given.values()].filter((r) => r.playerName === player).reduce((sum, r) => sum + r.give_amount, 0) / 2) * 5;
      // A window's points are the most its lost call can have spent (a window without points
      // is the last word on a call another window already counts).
      const windowPoints = windows.filter((w) => w.playerName === player).reduce((sum, w) => sum + (w.points ?? 0), 0);
      expect(givenPoints, `${player}: ${spent} points spent, none given unpaid`).toBeLessThanOrEqual(spent);
      expect(givenPoints + windowPoints, `${player}: ${spent} points spent, each given or in a window`).toBeGreaterThanOrEqual(spent);
    }
    expect(codes).toContain('OUTCOME_UNKNOWN');
    expect(repeats).toBe(0);
    // (Whether a lost call is recovered here depends on how the two nodes interleave: the rule
    // recovers only what the counters prove, and vote-recovery's own tests show which do.)
    // Nothing left to do but the counters (and the windows, kept for staff), seen from either node.
    const left = (await nodes[1]!.journal.pending()).filter((e) => e.state !== 'voteCounters' && e.state !== 'unverified');
    expect(left).toEqual([]);
  });

  it.skipIf(kit.url === undefined)('two nodes resume the same players\' reward rows at once (as two loops do when a player joins both): each row given once', async () => {
    const names = { table: uniqueName('journal'), grantedTable: uniqueName('granted') };
    await kit.journal(kit.pool(2), names).createTables();
    const nodes = ['a', 'b'].map((name) => {
      const journal = kit.journal(kit.pool(3), { ...names, nodeId: `node-${name}` });
      return { journal, client: new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: mock.fetch, now: mock.clock.now, journal, retry: 0 }) };
    });
    // Rows left by claims whose give failed (the game was busy): claimed, spent, not given.
    const busy = () => {
      throw new Error('the game is busy');
    };
    for (const player of PLAYERS) {
      mock.recordVote(KEY, player, 500);
      for (let round = 0; round < 3; round++) expect((await nodes[round % 2]!.client.deliverVoteReward({ player, ...ASK }, busy)).code).toBe('PARTIAL');
    }
    const rows = (await nodes[0]!.journal.pending()).filter((e) => e.state === 'voteClaimed').map((e) => e.deliveryId);
    expect(rows).toHaveLength(PLAYERS.length * 3);

    const given: string[] = [];
    const give = async (reward: GivenVoteReward) => {
      given.push(reward.deliveryId);
      // A give that takes a moment, so the other node's resume runs while it is out.
      await new Promise((resolve) => setImmediate(resolve));
    };
    const reports = await Promise.all([...nodes, ...nodes].map((node) => node.client.resumeVoteRewards(give)));
    expect(reports.flatMap((r) => r.errors)).toEqual([]);
    expect([...given].sort()).toEqual([...rows].sort());
    expect((await nodes[1]!.journal.pending()).filter((e) => e.state === 'voteClaimed')).toEqual([]);
  });
});
