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

export const BASE = 'https://api.teamgames.io';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export interface UseMswOptions {
  /**
   * Let requests to 127.0.0.1 reach the network, for tests that run their own
   * `node:http` server (see `./http-server.ts`). Every other unhandled request still
   * fails the test, exactly like `onUnhandledRequest: 'error'`.
   */
  loopbackPassthrough?: boolean;
}

/** Starts msw for the file: unhandled requests fail the test; handlers reset after each. */
export function useMsw(options: UseMswOptions = {}) {
  const server = setupServer();
  beforeAll(() =>
    server.listen({
      onUnhandledRequest: options.loopbackPassthrough
        ? (request, print) => {
            if (LOOPBACK.has(new URL(request.url).hostname)) return;
            print.error();
            // A custom callback only prints; throwing is what stops the request.
            throw new Error(`unhandled request to ${request.url}`);
          }
        : 'error',
    }),
  );
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
  function json(body: JsonBodyType, init?: ResponseInit): Recorded[] {
    return respond(() => HttpResponse.json(body, init));
  }

  /** Answers every request with the same text body (HTML pages, proxies' error pages …). */
  function text(body: string, init?: ResponseInit): Recorded[] {
    return respond(() => new HttpResponse(body, init));
  }

  /** Answers each request with the next reply of the list (the last one repeats). */
  function sequence(...replies: Array<() => Response>): Recorded[] {
    return respond((_, index) => (replies[Math.min(index, replies.length - 1)] as () => Response)());
  }

  return { server, respond, json, text, sequence };
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

export const product = {
  id: 12,
  productId: 'dragon_scimitar',
  name: 'Dragon scimitar',
  price: 10,
  priceOriginal: 10,
  priceWithSale: 8,
  quantity: 1,
  description: 'A sharp one.',
  image: 'https://cdn.example/dragon.png',
  disabled: false,
  sales: [{ saleType: 'percentage', discountPercentage: 20 }],
};

export const catalogBody = { message: 'SUCCESS', products: [product] };

export const voteRow = {
  message: 'Thanks for voting!',
  total_points: '42',
  vote_points: 3,
  votes_month: 7,
  give_amount: 2,
  reward_id: 995,
  reward_name: 'Coins',
};
