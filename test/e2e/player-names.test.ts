/**
 * One player-name rule for the SDK and the mock (SPEC §6, the testing guide's I-13): the
 * mock takes a purchase for a name exactly when the SDK will claim for it, and a purchase
 * it took is claimable through the SDK.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from 'teamgames-sdk';
import { KEY } from '../support/fixtures.js';
import { transports, useMockSession } from '../support/mock-session.js';

// The store seed's free product: a checkout for it is paid at once, so it is claimable.
const FREE = { id: 5, quantity: 1 };

// What names are made of: ASCII, whitespace, controls, bidi formatting (and the bidi
// marks, which are allowed), astral letters (two UTF-16 units each), lone surrogate halves.
const NAME_CHARACTERS = fc.oneof(
  fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 3 }),
  fc.constantFrom(' ', '_', '\t', '\n', '\u00a0', '\u3000', '\ufeff'),
  fc.constantFrom('\u0000', '\u001f', '\u007f', '\u0085', '\u009f'),
  fc.constantFrom('\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069', '\u200e', '\u200f', '\u061c'),
  fc.constantFrom('\u{1d4d0}', '😀', '𝔘', 'é', 'Ω', '漢'),
  fc.constantFrom('\ud835', '\udcd0'),
);

// Names around the 64-character edge, counted either way.
const NAMES = fc.oneof(
  fc.array(NAME_CHARACTERS, { maxLength: 40 }).map((parts) => parts.join('')),
  fc.tuple(fc.integer({ min: 30, max: 70 }), fc.constantFrom('a', '\u{1d4d0}', '😀', ' ')).map(([n, c]) => `P${c.repeat(n - 1)}`),
  fc.string({ unit: 'binary', maxLength: 70 }),
);

/** Whether the SDK sends a claim for `name` (true), or refuses it before any request (false). */
async function sdkClaims(claim: (name: string) => Promise<unknown>, name: string): Promise<boolean> {
  try {
    await claim(name);
    return true;
  } catch (error) {
    if (error instanceof InvalidInputError) return false;
    throw error;
  }
}

describe.each(transports)('player names, over $name', (transport) => {
  const { mock, api, client } = useMockSession(transport);

  it('the mock takes a purchase for a name iff the SDK claims for it, and the purchase is then claimable', async () => {
    const sdk = client({ rateLimit: false });
    await fc.assert(
      fc.asyncProperty(NAMES, async (name) => {
        mock.reset();
        const checkout = await api.checkout(name, [FREE]);
        const bought = checkout.status === 200 && checkout.body.status === 'SUCCESS';
        let result: unknown;
        const claimed = await sdkClaims(async (n) => (result = await sdk.claim(n)), name);
        expect(claimed, JSON.stringify(name)).toBe(bought);
        if (bought) {
          expect(result, JSON.stringify(name)).toMatchObject({ code: 'SUCCESS', claims: [{ player_name: name }] });
          expect(mock.purchases(KEY, name).map((row) => row.deliverystatus)).toEqual(['Delivered']);
        } else {
          expect(checkout.status, JSON.stringify(checkout.body)).toBe(404);
        }
        // The mock's own claim applies the same rule (the name is checked before the rate limit).
        expect((await api.claim(name)).code === 'INVALID_PLAYER', JSON.stringify(name)).toBe(!claimed);
      }),
      { numRuns: transport.name.startsWith('real') ? 60 : 300, seed: 20261125 },
    );
  }, 60_000);

  it('a purchase the mock took is claimed by the SDK, every claim method', async () => {
    const sdk = client({ rateLimit: false });
    const names = ['P' + '\u{1d4d0}'.repeat(63), '😀'.repeat(64), 'Player\u200eName', '76561198000000000', 'Spaced name_1'];
    for (const name of names) {
      for (const method of ['claim', 'claimLegacy', 'claimStoreTransactions'] as const) {
        mock.reset();
        expect((await api.checkout(name, [FREE])).body.status, name).toBe('SUCCESS');
        const result = await sdk[method](name);
        expect(result.code, `${method} ${JSON.stringify(name)}`).toBe('SUCCESS');
        expect(result.claims.map((t) => t.player_name)).toEqual([name]);
      }
    }
  });
});

describe('the one rule, case by case', () => {
  const { mock, api, client } = useMockSession(transports[0]!);

  async function refusal(name: string): Promise<InvalidInputError> {
    const error = await client().claim(name).then(
      () => expect.unreachable(`${JSON.stringify(name)} was claimed`),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidInputError);
    return error as InvalidInputError;
  }

  it('counts characters as code points: 64 astral letters (128 UTF-16 units) are fine, 65 are not', async () => {
    const longest = '\u{1d4d0}'.repeat(64);
    expect(longest).toHaveLength(128);
    expect((await api.checkout(longest, [FREE])).body.status).toBe('SUCCESS');
    expect(await client().claim(longest)).toMatchObject({ code: 'SUCCESS', claims: [{ player_name: longest }] });

    const forty = '\u{1d4d0}'.repeat(40); // the case: was refused as "80 characters"
    mock.clock.advance(10_000);
    expect(await client().claim(forty)).toMatchObject({ code: 'NO_ITEMS' });

    expect((await refusal('\u{1d4d0}'.repeat(65))).rule).toBe('must be at most 64 characters, got 65');
    expect((await api.checkout('\u{1d4d0}'.repeat(65), [FREE])).status).toBe(404);
  });

  it.each([
    ['a right-to-left override', 'evil\u202egnp.exe'],
    ['a left-to-right isolate', '\u2066Admin\u2069'],
    ['a pop directional formatting', 'Player\u202c'],
  ])('refuses %s, in the SDK and the mock alike', async (_, name) => {
    expect((await refusal(name)).rule).toBe('must not contain control or bidi-override characters');
    const checkout = await api.checkout(name, [FREE]);
    expect(checkout).toMatchObject({ status: 404, body: { message: expect.stringContaining('must not contain control or bidi-override characters') } });
    expect((await api.claim(name)).code).toBe('INVALID_PLAYER');
    expect(() => mock.addPurchase(KEY, { playerName: name, id: 1 })).toThrow(/bidi-override/);
  });

  it('refuses a lone surrogate half (not text: UTF-8 would turn it into another name)', async () => {
    expect((await refusal('Player\ud835')).rule).toBe('must be valid Unicode text (it holds half of a surrogate pair)');
    expect((await api.checkout('Player\ud835', [FREE])).status).toBe(404);
  });

  it('names the rule the same way for blank and control characters', async () => {
    expect((await refusal(' \t ')).rule).toBe('must not be blank');
    expect((await refusal('tab\there')).rule).toBe('must not contain control or bidi-override characters');
    expect((await api.checkout(' ', [FREE])).body.message).toContain('must not be blank');
  });
});
