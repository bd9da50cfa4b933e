/**
 * The service under test: the mock CLI of the build (dist/mock/cli.js) over HTTP in a
 * child process, so client and server do not share a core, on a seed of two stores (8
 * products, and 500), and the players the bench invents (a distinct one per call, so the
 * service answers the same code every time).
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MockSeed } from 'teamgames-sdk/mock';
import { bannerUrl } from '../common/mock-admin.js';

export const SMALL_KEY = 'bench-small-key';
export const LARGE_KEY = 'bench-large-key';

function product(id: number) {
  return {
    id,
    productId: id % 3 === 0 ? `item_${id}` : 1000 + id,
    name: `Product ${id}`,
    price: 1 + (id % 50),
    quantity: 1 + (id % 5),
    description: `A benchmark product number ${id} with a description of ordinary length.`,
    image: `https://example.com/img/${id}.png`,
    categoryIds: [1],
    sales: id % 4 === 0 ? [{ saleType: 'percentage' as const, discountPercentage: 10 }] : [],
  };
}

const seed: MockSeed = {
  servers: [
    {
      apiKey: SMALL_KEY,
      name: 'Bench small',
      categories: [{ id: 1, name: 'All' }],
      products: Array.from({ length: 8 }, (_, i) => product(i + 1)),
      rewards: [{ id: 1, name: 'Box', cost: 1 }],
    },
    {
      apiKey: LARGE_KEY,
      name: 'Bench large',
      categories: [{ id: 1, name: 'All' }],
      products: Array.from({ length: 500 }, (_, i) => product(i + 1)),
    },
  ],
};

/** The mock started on a free port, with its temp dir (the seed, the file journals). */
export async function startMock(): Promise<{ url: string; child: ChildProcess; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'tg-bench-'));
  const seedFile = join(dir, 'seed.json');
  writeFileSync(seedFile, JSON.stringify(seed));
  const child = spawn(process.execPath, ['dist/mock/cli.js', '--port', '0', '--seed', seedFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = bannerUrl(out.slice(0, out.lastIndexOf('\n') + 1)); // whole lines: a chunk may end inside the URL
      if (found !== undefined) resolve(found);
    });
    child.once('exit', (code) => reject(new Error(`mock exited early (${code})`)));
  });
  return { url, child, dir };
}

/** The `authorization` header of v4: the key in Base64. */
export const b64 = (key: string) => Buffer.from(key).toString('base64');

let sequence = 0;
/** A player no call has used yet. */
export const player = () => `bench_${++sequence}`;
