import { http, HttpResponse, type JsonBodyType } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll } from 'vitest';

/** One request as the service would see it. */
export interface Recorded {
  method: string;
  url: URL;
  headers: Headers;
  body: string;
}

export const KEY = 'tg-test-key-7f3a9c';
export const KEY_BASE64 = Buffer.from(KEY, 'utf8').toString('base64');
export const BASE = 'https://api.teamgames.io';

/** Starts msw for the file: unhandled requests fail the test; handlers reset after each. */
export function useMsw() {
  const server = setupServer();
  beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
  afterEach(() => server.resetHandlers());
  afterAll(() => server.close());

  /** Answers every request with `reply`, recording each one. */
  function respond(reply: (request: Recorded, index: number) => Response | Promise<Response>): Recorded[] {
    const calls: Recorded[] = [];
    server.use(
      http.all('*', async ({ request }) => {
        const recorded = { method: request.method, url: new URL(request.url), headers: request.headers, body: await request.text() };
        calls.push(recorded);
        return reply(recorded, calls.length - 1);
      }),
    );
    return calls;
  }

  /** Answers every request with the same JSON body. */
  function json(body: unknown, init?: ResponseInit): Recorded[] {
    return respond(() => HttpResponse.json(body as JsonBodyType, init));
  }

  return { server, respond, json };
}

export const v4 = (code: string, claims: unknown[] = [], extra: Record<string, unknown> = {}) => ({
  status: code === 'SUCCESS' ? 'SUCCESS' : code === 'PREVIEW' ? 'PREVIEW' : 'ERROR',
  code,
  message: `message for ${code}`,
  data: { claims, ...extra },
});

export const v4Claim = {
  player_name: 'Player123',
  product_id: 42,
  product_id_string: '42',
  product_name: 'Dragon scimitar',
  product_price: 4.99,
  quantity_to_grant: 2,
  quantity_purchased: 2,
  product_amount: 2,
  amount_purchased: 2,
};

export const legacyRow = {
  player_name: 'Player123',
  product_id: 42,
  product_amount: 5,
  amount_purchased: 1,
  product_name: 'Dragon scimitar',
  product_price: 4.99,
};
