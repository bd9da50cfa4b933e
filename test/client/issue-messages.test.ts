/**
 * The answers are read with `zod/mini`, which, unlike classic zod, sets no locale of its
 * own: the SDK sets zod's English messages when it builds its first schema, unless the
 * program chose a locale first. Nothing in this file loads classic zod (the mock does),
 * so the English messages below can only come from the SDK.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import * as z from 'zod/mini';

/** The issues of reading a catalog with a product priced `'free'`, through a fresh copy of the SDK. */
async function catalogIssues(): Promise<unknown> {
  const { StorefrontClient } = await import('../../src/index.js');
  const fetch = async () => Response.json({ message: 'SUCCESS', products: [{ id: 1, productId: 'a', name: 'Gem', price: 'free' }] });
  const client = new StorefrontClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9', fetch, catalogCacheTtlMs: 0, retry: 0 });
  const error = await client.getCatalog().then(
    () => expect.unreachable('the catalog was accepted'),
    (e: unknown) => e,
  );
  // A fresh copy of the SDK has classes of its own: compare the stable code, not the class.
  expect(error).toMatchObject({ code: 'RESPONSE_VALIDATION_FAILED' });
  return (error as { issues: unknown }).issues;
}

afterAll(() => {
  z.config(z.locales.en());
});

describe("the issues of an answer the SDK refuses read in zod's English", () => {
  it('when the program set no locale', async () => {
    expect(z.config().localeError, 'zod/mini starts without a locale').toBeUndefined();
    expect(await catalogIssues()).toEqual([{ path: ['products', 0, 'price'], message: 'Invalid input: expected number, received string' }]);
  });

  it("and in the program's own locale when it chose one before the SDK's first answer", async () => {
    vi.resetModules();
    z.config(z.locales.de());
    expect(await catalogIssues()).toEqual([{ path: ['products', 0, 'price'], message: 'Ungültige Eingabe: erwartet Zahl, erhalten string' }]);
  });
});
