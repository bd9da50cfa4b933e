/**
 * How the transport reads a body (src/internal/transport.ts, readBounded): the chunks
 * fetch hands over are joined and decoded once, so a character whose bytes arrive in
 * different chunks is read whole, whatever the chunking.
 */
import { describe, expect, it } from 'vitest';
import { StorefrontClient } from '../../src/index.js';
import { KEY } from '../support/fixtures.js';

const NAME = 'Épée du dragon 龍 🐉';
const body = new TextEncoder().encode(JSON.stringify({ message: 'SUCCESS', products: [{ id: 1, productId: 'p1', name: NAME, price: 2 }] }));

/** A client whose fetch answers `body` in chunks of `size` bytes. */
function clientWithChunks(size: number): StorefrontClient {
  const fetch = async () => {
    let offset = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= body.length) return controller.close();
        controller.enqueue(body.slice(offset, offset + size));
        offset += size;
      },
    });
    return new Response(stream, { headers: { 'content-type': 'application/json' } });
  };
  return new StorefrontClient({ apiKey: KEY, baseUrl: 'http://127.0.0.1:9', fetch, rateLimit: false, catalogCacheTtlMs: 0, retry: 0 });
}

describe('reading a body', () => {
  it.each([1, 2, 3, 7, body.length])('reads multi-byte characters whole, in chunks of %i bytes', async (size) => {
    const { products } = await clientWithChunks(size).getCatalog();
    expect(products[0]!.name).toBe(NAME);
  });
});
