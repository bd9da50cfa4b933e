/**
 * `npm run bridge-rss`: what a bridge costs in memory (#35 point 4, on `teamgames bridge`
 * as shipped). The built `teamgames bridge` runs as a process of its own (webhook, file
 * journal) against the mock over HTTP and a webhook game, both in this process, so the
 * figure is the bridge's alone. It starts idle, then the game says `--players` are online
 * (`PUT /v1/online`), a tenth of them with a purchase; the bridge's RSS (VmRSS, from
 * /proc) is sampled every second for `--seconds`.
 *
 *   bridge rss players=10000 seconds=60 node=v20…: node_floor_mb=… rss_idle_mb=… rss_max_mb=…
 *   rss_end_mb=… growth_mb=… calls=… given=…
 *
 * `node_floor_mb`: Node itself with one ES module package loaded (ky), idle, measured the
 * same way in the same run: what no bridge goes under. `growth_mb`: end minus idle, what
 * the players cost.
 *
 * A figure, not a test (run it after `npm run build`; Linux only, for /proc).
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createMockService } from '../src/mock/index.js';
import { commandLine } from './common/command-line.js';

const cli = commandLine('bridge-rss', 'usage: npm run bridge-rss -- [--players 10000] [--seconds 60] [--node-flags=--max-semi-space-size=2]', {
  players: { type: 'string', default: '10000' },
  seconds: { type: 'string', default: '60' },
  'node-flags': { type: 'string' },
});
const PLAYERS = cli.integer('players', 1, 100_000);
/** Node's flags for the bridge (e.g. `--max-semi-space-size=2`), space-separated. */
const NODE_FLAGS = (cli.values['node-flags'] ?? '').split(' ').filter(Boolean);
const SECONDS = cli.integer('seconds', 1, 3_600);
const KEY = 'bridge-rss-key';
const TOKEN = 'bridge-rss-token-0123456789abcdef0123456789';

/** The floor under any bridge: Node with one ES module package (ky) loaded and idle, measured the same way. */
async function floorMb(): Promise<number> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', "await import('ky'); setInterval(() => {}, 1000);"], { stdio: 'ignore' });
  await sleep(2_000);
  const rss = rssMb(child.pid as number);
  child.kill();
  return rss;
}

const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN) / 1024;

async function main(): Promise<void> {
  const floor = await floorMb();
  const mock = createMockService({ seed: { servers: [{ apiKey: KEY, name: 'RSS store', products: [{ id: 1, productId: '42', name: 'Whip', price: 10 }] }] } });
  const names = Array.from({ length: PLAYERS }, (_, i) => `Player${i + 1}`);
  for (const name of names.filter((_, i) => i % 10 === 0)) mock.addPurchase(KEY, { playerName: name, id: 1, quantity: 1 });
  const store = await mock.listen({ port: 0 });
  const given = new Set<string>();
  const game = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      given.add((JSON.parse(body) as { deliveryId: string }).deliveryId);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((ok) => game.listen(0, '127.0.0.1', ok));
  const dir = mkdtempSync(join(tmpdir(), 'bridge-rss-'));
  const config = join(dir, 'bridge.json');
  writeFileSync(config, JSON.stringify({ listen: { port: 0 }, baseUrl: store.url, journal: { file: 'journal.jsonl' }, give: { webhook: { url: `http://127.0.0.1:${(game.address() as AddressInfo).port}/give` } }, log: { level: 'info' } }));
  const child = spawn(process.execPath, [...NODE_FLAGS, 'dist/cli/index.js', 'bridge', '--config', config], {
    env: { PATH: process.env.PATH, TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const api = await new Promise<string>((ok, fail) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        const found = /"api":"(http:[^"]+)"/.exec(out);
        if (found !== null) ok(found[1] as string);
      });
      child.once('exit', (code) => fail(new Error(`the bridge exited ${code}`)));
    });
    const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    await sleep(2_000);
    const idle = rssMb(child.pid as number);
    const online = await fetch(`${api}/v1/online`, { method: 'PUT', headers, body: JSON.stringify({ players: names }) });
    if (!online.ok) throw new Error(`PUT /v1/online answered ${online.status}: ${await online.text()}`);
    let max = idle;
    let end = idle;
    for (let s = 0; s < SECONDS; s++) {
      await sleep(1_000);
      end = rssMb(child.pid as number);
      max = Math.max(max, end);
    }
    const metrics = await (await fetch(`${api}/metrics`, { headers })).text();
    const calls = /^teamgames_bridge_calls_total (\d+)$/m.exec(metrics)?.[1] ?? '?';
    console.log(
      `bridge rss players=${PLAYERS} seconds=${SECONDS} node=${process.version}${NODE_FLAGS.length > 0 ? ` node_flags=${NODE_FLAGS.join(',')}` : ''}: node_floor_mb=${floor.toFixed(1)} rss_idle_mb=${idle.toFixed(1)} rss_max_mb=${max.toFixed(1)} rss_end_mb=${end.toFixed(1)} growth_mb=${(end - idle).toFixed(1)} calls=${calls} given=${given.size}`,
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((ok) => child.once('exit', ok));
    game.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
