/**
 * What validating an answer costs in process: the readers of a 500-product catalog and of
 * a claim of 200 purchases, JSON.parse reported apart.
 *
 * @module
 */
import { readCatalog } from '../../src/wire/catalog.js';
import { readClaim } from '../../src/wire/claim.js';
import { median } from '../common/figures.js';
import { mockAdmin } from '../common/mock-admin.js';
import { LARGE_KEY, SMALL_KEY, b64 } from './service.js';

/** µs per call: the median of several short windows, so one GC pause or a busy neighbour does not decide it. */
function microsPerCall(run: () => unknown, windows = 9, windowMs = 60): number {
  // Warm up for a while, not a few calls: V8 keeps optimizing zod's parsers for a few
  // hundred milliseconds, and the first figure measured in a process came out highest.
  for (const start = performance.now(); performance.now() - start < 300; ) run();
  const means: number[] = [];
  for (let w = 0; w < windows; w++) {
    let calls = 0;
    const start = performance.now();
    while (performance.now() - start < windowMs) {
      run();
      calls++;
    }
    means.push(((performance.now() - start) / calls) * 1000);
  }
  return median(means);
}

export interface ValidationBodies {
  catalogText: string;
  claimText: string;
}

/**
 * The bodies the validation figures parse: the mock's own answers (a 500-product catalog,
 * a claim preview of 200 purchases), so they have the shapes the HTTP rounds saw.
 */
export async function validationBodies(url: string): Promise<ValidationBodies> {
  const post = async (path: string, key: string, body: unknown) => {
    const response = await fetch(`${url}/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: b64(key) }, body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
    return response.text();
  };
  const admin = mockAdmin(url, 'bench');
  const playerName = 'bench_validation';
  for (let i = 0; i < 200; i++) await admin('POST', '/__mock/purchases', { apiKey: SMALL_KEY, playerName, id: 1 + (i % 8) });
  const catalogText = await post('api/v2/client/global/products', LARGE_KEY, {});
  const claimText = await post('api/v4/store/transaction/update', SMALL_KEY, { playerName, preview: true, includeRawTransactions: false });
  const claims = (JSON.parse(claimText) as { data?: { claims?: unknown[] } }).data?.claims?.length;
  if (claims !== 200) throw new Error(`the claim preview lists ${claims} purchases, not 200`);
  return { catalogText, claimText };
}

export type ValidationFigures = ReturnType<typeof validationCost>;

export function validationCost({ catalogText, claimText }: ValidationBodies) {
  // Bodies arrive as text: JSON.parse is part of the cost, reported apart as well.
  const claimParsed = JSON.parse(claimText) as unknown;
  // readCatalog completes the answer it is given in place (the transport's own JSON.parse
  // result), so it never reads the same object twice: its share is the difference.
  const catalog500Us = microsPerCall(() => readCatalog(JSON.parse(catalogText)));
  const catalog500JsonParseUs = microsPerCall(() => JSON.parse(catalogText));
  return {
    catalog500Us,
    catalog500JsonParseUs,
    catalog500ValidateUs: catalog500Us - catalog500JsonParseUs,
    claim200Us: microsPerCall(() => readClaim(JSON.parse(claimText))),
    claim200JsonParseUs: microsPerCall(() => JSON.parse(claimText)),
    claim200ValidateUs: microsPerCall(() => readClaim(claimParsed)),
  };
}

/** The validation line. */
export function printValidation(v: ValidationFigures): void {
  const us = (n: number) => n.toFixed(0);
  console.log(
    `\nvalidation: catalog of 500 products ${us(v.catalog500Us)} µs/call (JSON.parse ${us(v.catalog500JsonParseUs)} + zod and normalize ${us(v.catalog500ValidateUs)}); ` +
      `claim of 200 transactions ${us(v.claim200Us)} µs/call (JSON.parse ${us(v.claim200JsonParseUs)} + zod and normalize ${us(v.claim200ValidateUs)})`,
  );
}
