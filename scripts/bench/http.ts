/**
 * Each operation timed three ways on the same server, interleaved in rounds: (a) raw
 * fetch with hand-built headers and bodies, (b) a bare ky call with the same request and
 * no validation, (c) the SDK (cache off, local guard off, a distinct player per call).
 * Sequential latency (p50/p99), this process's CPU time per sequential call, and
 * throughput at concurrency 32; the ratios are medians of ratios taken within each round,
 * where the three ways ran back to back. The CPU ratio (`cpuVsKy`) is what the client side
 * costs, which a busy machine (a neighbour's load, the mock's own turns) blurs far less
 * than the latencies.
 *
 * @module
 */
import ky from 'ky';
import { StorefrontClient } from 'teamgames-sdk';
import { median, percentile } from '../common/figures.js';
import { CONCURRENCY, CONCURRENT_CALLS, ITERATIONS, ROUNDS, WARMUP, type Operation } from './settings.js';
import { LARGE_KEY, SMALL_KEY, b64, player } from './service.js';

export type Way = 'raw' | 'ky' | 'sdk';
type Call = (i: number) => Promise<unknown>;
const WAYS = ['raw', 'ky', 'sdk'] as const;

function operations(url: string): Record<Operation, Record<Way, Call>> {
  const sdk = (apiKey: string) => new StorefrontClient({ apiKey, baseUrl: url, catalogCacheTtlMs: 0, rateLimit: false, retry: 0 });
  const small = sdk(SMALL_KEY);
  const large = sdk(LARGE_KEY);
  const bare = ky.create({ prefixUrl: url, retry: 0, timeout: 15_000 });
  const json = (key: string) => ({ authorization: b64(key), 'content-type': 'application/json', accept: 'application/json' });
  const form = { 'x-api-key': SMALL_KEY, 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8', accept: 'application/json' };
  const post = (path: string, headers: Record<string, string>, body: string) =>
    fetch(`${url}/${path}`, { method: 'POST', headers, body }).then((r) => r.json());
  const kyPost = (path: string, headers: Record<string, string>, body: string) => bare.post(path, { headers, body }).json();
  const cart = () => JSON.stringify({ username: player(), cartItems: JSON.stringify([{ id: 1, quantity: 1 }]) });

  const catalog = (key: string, client: StorefrontClient): Record<Way, Call> => ({
    raw: () => post('api/v2/client/global/products', json(key), '{}'),
    ky: () => kyPost('api/v2/client/global/products', json(key), '{}'),
    sdk: () => client.getCatalog(),
  });
  return {
    catalog: catalog(SMALL_KEY, small),
    catalog500: catalog(LARGE_KEY, large),
    checkout: {
      raw: () => post('api/v2/client/global/checkout/complete', json(SMALL_KEY), cart()),
      ky: () => kyPost('api/v2/client/global/checkout/complete', json(SMALL_KEY), cart()),
      sdk: () => small.checkout({ username: player(), items: [{ id: 1, quantity: 1 }] }),
    },
    claim: {
      raw: () => post('api/v4/store/transaction/update', json(SMALL_KEY), JSON.stringify({ playerName: player(), preview: false, includeRawTransactions: false })),
      ky: () => kyPost('api/v4/store/transaction/update', json(SMALL_KEY), JSON.stringify({ playerName: player(), preview: false, includeRawTransactions: false })),
      sdk: () => small.claim(player()),
    },
    claimLegacy: {
      raw: () => post('api/v3/store/transaction/update', { ...json(SMALL_KEY), authorization: '', 'x-api-key': SMALL_KEY }, JSON.stringify({ playerName: player() })),
      ky: () => kyPost('api/v3/store/transaction/update', { ...json(SMALL_KEY), authorization: '', 'x-api-key': SMALL_KEY }, JSON.stringify({ playerName: player() })),
      sdk: () => small.claimLegacy(player()),
    },
    vote: {
      raw: () => post('v3/vote/reward/claim', form, new URLSearchParams({ player: player(), reward: '1', amount: 'all' }).toString()),
      ky: () => kyPost('v3/vote/reward/claim', form, new URLSearchParams({ player: player(), reward: '1', amount: 'all' }).toString()),
      sdk: () => small.claimVoteReward({ player: player(), reward: '1', amount: 'all' }),
    },
  };
}

/** `n` calls one after the other, their latencies into `into`; resolves to this process's CPU µs per call. */
async function sequential(call: Call, n: number, into: number[]): Promise<number> {
  const cpu = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await call(i);
    into.push(performance.now() - start);
  }
  const { user, system } = process.cpuUsage(cpu);
  return (user + system) / n;
}

/** Calls per second with `CONCURRENCY` calls in flight. */
async function throughput(call: Call, total: number): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < total) {
        next++;
        await call(next);
      }
    }),
  );
  return total / ((performance.now() - start) / 1000);
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

export interface Figures {
  p50: number;
  p99: number;
  /** This process's CPU time per sequential call, µs (median over rounds). */
  cpuUs: number;
  rps: number;
}

/** Ratios of the SDK over raw fetch and over bare ky, each the median of per-round ratios. */
export interface Ratios {
  p50: number;
  p99: number;
  throughput: number;
  vsKy: number;
  /** The SDK's CPU time per call over bare ky's. */
  cpuVsKy: number;
}

export type HttpResults = Record<string, { figures: Record<Way, Figures>; ratios: Ratios }>;

/** One operation's rounds: latencies per way and round, calls per second per way and round. */
async function rounds(ways: Record<Way, Call>): Promise<{ latencies: Record<Way, number[][]>; cpu: Record<Way, number[]>; rates: Record<Way, number[]> }> {
  const latencies: Record<Way, number[][]> = { raw: [], ky: [], sdk: [] };
  const cpu: Record<Way, number[]> = { raw: [], ky: [], sdk: [] };
  const rates: Record<Way, number[]> = { raw: [], ky: [], sdk: [] };
  for (const way of WAYS) await sequential(ways[way], WARMUP, []);
  for (let round = 0; round < ROUNDS; round++) {
    for (const way of shuffle([...WAYS])) {
      const samples: number[] = [];
      cpu[way].push(await sequential(ways[way], ITERATIONS, samples));
      latencies[way].push(samples);
    }
    for (const way of shuffle([...WAYS])) rates[way].push(await throughput(ways[way], CONCURRENT_CALLS));
  }
  return { latencies, cpu, rates };
}

/**
 * Each round runs the three ways back to back (in a shuffled order), so a ratio taken
 * within a round compares calls made under the same machine conditions; the reported
 * ratio is the median over rounds. Absolute figures (the table) pool every round.
 */
export async function benchHttp(url: string, only?: Operation): Promise<HttpResults> {
  const results: HttpResults = {};
  for (const [name, ways] of Object.entries(operations(url))) {
    if (only !== undefined && name !== only) continue;
    const { latencies, cpu, rates } = await rounds(ways);
    const figures = Object.fromEntries(
      WAYS.map((way) => {
        const all = latencies[way].flat();
        return [way, { p50: percentile(all, 0.5), p99: percentile(all, 0.99), cpuUs: median(cpu[way]), rps: median(rates[way]) }];
      }),
    ) as Record<Way, Figures>;
    const perRound = (ratio: (round: number) => number) => median(Array.from({ length: ROUNDS }, (_, round) => ratio(round)));
    const p50 = (way: Way, round: number) => percentile(latencies[way][round]!, 0.5);
    results[name] = {
      figures,
      ratios: {
        p50: perRound((r) => p50('sdk', r) / p50('raw', r)),
        // One round holds too few calls for a p99 of its own: p99 compares the pooled calls.
        p99: figures.sdk.p99 / figures.raw.p99,
        throughput: perRound((r) => rates.sdk[r]! / rates.raw[r]!),
        vsKy: perRound((r) => p50('sdk', r) / p50('ky', r)),
        cpuVsKy: perRound((r) => cpu.sdk[r]! / cpu.ky[r]!),
      },
    };
  }
  return results;
}

/** The table of absolute figures, one line per operation and way. */
export function printHttp(http: HttpResults): void {
  const fmt = (n: number, digits = 2) => n.toFixed(digits).padStart(9);
  console.log(`\n${'operation'.padEnd(12)} ${'way'.padEnd(4)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)} ${'cpu µs'.padStart(9)} ${'req/s@32'.padStart(9)}`);
  for (const [name, { figures }] of Object.entries(http)) {
    for (const way of WAYS) {
      const f = figures[way];
      console.log(`${name.padEnd(12)} ${way.padEnd(4)} ${fmt(f.p50, 3)} ${fmt(f.p99, 3)} ${fmt(f.cpuUs, 0)} ${fmt(f.rps, 0)}`);
    }
  }
}

/** The summary lines: the SDK's ratios per operation. */
export const httpLines = (http: HttpResults): string[] =>
  Object.entries(http).map(([name, { ratios: r }]) => `bench ${name}: p50=${r.p50.toFixed(2)} p99=${r.p99.toFixed(2)} throughput=${r.throughput.toFixed(2)} vsKy=${r.vsKy.toFixed(2)} cpuVsKy=${r.cpuVsKy.toFixed(2)}`);
