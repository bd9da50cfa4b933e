/**
 * The webhook sink: each item is one POST to the game's URL, with the bridge's token. A 2xx
 * means given; anything else (another status, a redirect, a timeout, a refused connection)
 * is not given: the item stays pending and the loop gives it again with its backoff. The
 * game dedupes on `deliveryId`, which makes a repeat after a crash harmless: exactly once
 * end to end.
 *
 * @module
 */
import type { DeliveredItem, GivenVoteReward } from '../../index.js';
import type { WebhookGiveConfig } from '../config.js';
import type { BridgeLogger } from '../log.js';
import type { ItemSink } from '../sink.js';

/** What the game receives for a purchase item. */
export interface WebhookPurchase {
  kind: 'purchase';
  deliveryId: string;
  player: string;
  productId: string;
  productName: string;
  quantity: number;
  item: DeliveredItem;
}

/** What the game receives for a vote reward. */
export interface WebhookVote {
  kind: 'vote';
  deliveryId: string;
  player: string;
  rewardId: string;
  rewardName: string;
  amount: number;
  reward: GivenVoteReward;
}

/** What the webhook sink needs besides its config. */
export interface WebhookDeps {
  /** The bridge's token, sent as `Authorization: Bearer …`. */
  token: string;
  log: BridgeLogger;
  /** Default: the global fetch. */
  fetch?: typeof globalThis.fetch;
}

/** A failure of one POST, said shortly (the loop keeps it as the item's last error). */
class WebhookError extends Error {
  override name = 'WebhookError';
}

/** The most of an answer's body read away (so its connection is reused); a longer body is cancelled, its connection closed. */
export const WEBHOOK_BODY_LIMIT = 1024 * 1024;

/**
 * Reads the answer's body away, at most {@link WEBHOOK_BODY_LIMIT} bytes (the sink never
 * needs it; unread, it would hold its connection): a game answering 256 MB must not take
 * the bridge's memory with it. Bounded in time by the call's signal too.
 */
async function readAway(response: Response): Promise<void> {
  let size = 0;
  try {
    // Leaving the loop early cancels the body (its connection is closed, not reused). A web
    // ReadableStream is async iterable in Node 18+, Bun and Deno; the DOM types say not yet.
    for await (const chunk of (response.body ?? []) as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      // Stryker disable next-line EqualityOperator: a body of exactly the limit is whole when its last chunk is counted; cancelled then or not, its connection is reused (test: "a body of exactly WEBHOOK_BODY_LIMIT bytes")
      if (size > WEBHOOK_BODY_LIMIT) break;
    }
  } catch {
    // A body cut or aborted: the status already said what happened.
  }
}

/** The webhook sink. */
export function createWebhookSink(config: WebhookGiveConfig, deps: WebhookDeps): ItemSink {
  const fetcher = deps.fetch ?? globalThis.fetch;
  const where = new URL(config.url);
  const shown = `${where.origin}${where.pathname}`;
  const closing = new AbortController();

  async function post(body: WebhookPurchase | WebhookVote): Promise<void> {
    if (closing.signal.aborted) throw new WebhookError("the game's webhook could not be reached (the bridge is stopping)");
    // Combined by hand: Node 20's AbortSignal.any would keep a listener on the long-lived
    // closing signal for every item ever given.
    const call = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      call.abort();
    }, config.timeoutMs);
    const onClose = () => call.abort();
    closing.signal.addEventListener('abort', onClose);
    const signal = call.signal;
    let response: Response;
    try {
      response = await fetcher(config.url, {
        method: 'POST',
        headers: { authorization: `Bearer ${deps.token}`, 'content-type': 'application/json', 'user-agent': 'teamgames-bridge' },
        body: JSON.stringify(body),
        // A redirect could carry the token to another host: never followed, not given.
        redirect: 'manual',
        signal,
      });
    } catch (error) {
      clearTimeout(timer);
      closing.signal.removeEventListener('abort', onClose);
      const name = (error as { name?: unknown }).name;
      if (timedOut) throw new WebhookError(`the game's webhook did not answer within ${config.timeoutMs} ms`);
      const cause = (error as { cause?: { code?: unknown } }).cause?.code;
      throw new WebhookError(`the game's webhook could not be reached (${typeof cause === 'string' ? cause : name === 'AbortError' ? 'the bridge is stopping' : 'network error'})`);
    }
    try {
      await readAway(response);
    } finally {
      clearTimeout(timer);
      closing.signal.removeEventListener('abort', onClose);
    }
    if (response.status >= 200 && response.status < 300) {
      deps.log.debug('given through the webhook', { kind: body.kind, deliveryId: body.deliveryId, player: body.player, status: response.status });
      return;
    }
    const what = response.status >= 300 && response.status < 400 ? ' (redirects are not followed)' : response.type === 'opaqueredirect' ? ' (a redirect, not followed)' : '';
    throw new WebhookError(`the game's webhook answered HTTP ${response.status || 'redirect'}${what}`);
  }

  return {
    give: (item) =>
      post({ kind: 'purchase', deliveryId: item.deliveryId, player: item.player_name, productId: item.product_id_string, productName: item.product_name, quantity: item.quantity_to_grant, item }),
    giveVoteReward: (reward) =>
      post({ kind: 'vote', deliveryId: reward.deliveryId, player: reward.playerName, rewardId: String(reward.reward_id), rewardName: reward.reward_name, amount: reward.give_amount, reward }),
    close: async () => {
      closing.abort();
      deps.log.debug('webhook sink closed', { url: shown });
    },
  };
}
