/**
 * The public types (checked by `tsc --noEmit`; `expectTypeOf` is a no-op at run time).
 * The unions narrow on their discriminant, and every zod schema's output is exactly
 * the documented interface.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import {
  ClaimOutcomeUnknownError,
  InvalidInputError,
  StorefrontClient,
  StorefrontError,
  isStorefrontError,
  type Catalog,
  type DerivedClientOptions,
  type StorefrontClientOptions,
  type CheckoutOutcome,
  type CheckoutResult,
  type ClaimCode,
  type ClaimResult,
  type OutcomeUnknownReason,
  type Product,
  type RawTransaction,
  type Sale,
  type StorefrontErrorCode,
  type StorefrontEvent,
  type Transaction,
  type VoteReward,
  type VoteRewardResult,
} from '../../src/index.js';
import { toProduct, toSale, type CatalogSchemas } from '../../src/wire/catalog.js';
import { toTransaction, type ClaimSchemas } from '../../src/wire/claim.js';
import { toVoteReward, type VoteRewardSchemas } from '../../src/wire/vote-reward.js';

describe('ClaimResult', () => {
  it('narrows on code', () => {
    const narrow = (result: ClaimResult) => {
      if (result.code === 'RATE_LIMIT') {
        expectTypeOf(result.retryAfterMs).toEqualTypeOf<number>();
        expectTypeOf(result.source).toEqualTypeOf<'local' | 'server'>();
      }
      if (result.code === 'UNKNOWN') {
        expectTypeOf(result.serverCode).toEqualTypeOf<string>();
        expectTypeOf(result.data).toEqualTypeOf<unknown>();
      }
      if (result.code === 'SUCCESS') expectTypeOf(result.claims).toEqualTypeOf<Transaction[]>();
    };
    expectTypeOf(narrow).toBeFunction();
  });

  it('retryAfterMs only on RATE_LIMIT, serverCode only on UNKNOWN', () => {
    expectTypeOf<Extract<ClaimResult, { code: 'RATE_LIMIT' }>>().toHaveProperty('retryAfterMs');
    expectTypeOf<Exclude<ClaimResult, { code: 'RATE_LIMIT' }>>().not.toHaveProperty('retryAfterMs');
    expectTypeOf<Extract<ClaimResult, { code: 'UNKNOWN' }>>().toHaveProperty('serverCode');
    expectTypeOf<Exclude<ClaimResult, { code: 'UNKNOWN' }>>().not.toHaveProperty('serverCode');
    expectTypeOf<ClaimResult>().not.toHaveProperty('retryAfterMs');
  });

  it('every branch has status, message, claims and optional rawTransactions', () => {
    expectTypeOf<ClaimResult['status']>().toEqualTypeOf<string>();
    expectTypeOf<ClaimResult['message']>().toEqualTypeOf<string>();
    expectTypeOf<ClaimResult['claims']>().toEqualTypeOf<Transaction[]>();
    expectTypeOf<ClaimResult['rawTransactions']>().toEqualTypeOf<RawTransaction[] | undefined>();
  });

  it('has the documented codes', () => {
    expectTypeOf<ClaimCode>().toEqualTypeOf<
      'SUCCESS' | 'PREVIEW' | 'NO_ITEMS' | 'RATE_LIMIT' | 'ALREADY_CLAIMED' | 'PRODUCT_NOT_FOUND' | 'INVALID_PLAYER' | 'UNKNOWN'
    >();
  });
});

describe('CheckoutResult', () => {
  it('narrows on outcome', () => {
    const narrow = (result: CheckoutResult) => {
      if (result.outcome === 'PAYMENT_REQUIRED') {
        expectTypeOf(result.redirect).toEqualTypeOf<string>();
        expectTypeOf(result.transactionId).toEqualTypeOf<string>();
        expectTypeOf(result.isFree).toEqualTypeOf<false>();
      }
      if (result.outcome === 'FREE') expectTypeOf(result.isFree).toEqualTypeOf<true>();
      if (result.outcome === 'COUPON_REJECTED') expectTypeOf(result.error).toEqualTypeOf<string>();
      if (result.outcome === 'INVALID_STOCK') expectTypeOf(result.productsAffected).toEqualTypeOf<unknown[]>();
      if (result.outcome === 'GATEWAY_ERROR') expectTypeOf(result.message).toEqualTypeOf<string>();
    };
    expectTypeOf(narrow).toBeFunction();
  });

  it('redirect is only known on PAYMENT_REQUIRED, error only on COUPON_REJECTED', () => {
    expectTypeOf<Extract<CheckoutResult, { outcome: 'PAYMENT_REQUIRED' }>['redirect']>().toEqualTypeOf<string>();
    expectTypeOf<Extract<CheckoutResult, { outcome: 'FREE' }>['redirect']>().toEqualTypeOf<unknown>();
    expectTypeOf<Extract<CheckoutResult, { outcome: 'COUPON_REJECTED' }>['error']>().toEqualTypeOf<string>();
    expectTypeOf<Extract<CheckoutResult, { outcome: 'BASKET_REJECTED' }>['error']>().toEqualTypeOf<unknown>();
  });

  it('has the documented outcomes', () => {
    expectTypeOf<CheckoutOutcome>().toEqualTypeOf<'PAYMENT_REQUIRED' | 'FREE' | 'INVALID_STOCK' | 'COUPON_REJECTED' | 'BASKET_REJECTED' | 'GATEWAY_ERROR' | 'UNKNOWN'>();
  });

  it('UNKNOWN keeps status, code and message as strings; every outcome may carry the wire code', () => {
    expectTypeOf<Extract<CheckoutResult, { outcome: 'UNKNOWN' }>['status']>().toEqualTypeOf<string>();
    expectTypeOf<Extract<CheckoutResult, { outcome: 'UNKNOWN' }>['code']>().toEqualTypeOf<string>();
    expectTypeOf<Extract<CheckoutResult, { outcome: 'UNKNOWN' }>['message']>().toEqualTypeOf<string>();
    expectTypeOf<Extract<CheckoutResult, { outcome: 'GATEWAY_ERROR' }>['code']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<Extract<CheckoutResult, { outcome: 'INVALID_STOCK' }>['code']>().toEqualTypeOf<string | undefined>();
  });
});

describe('wire objects', () => {
  it('Transaction has every v4 field, and the legacy twins', () => {
    expectTypeOf<Transaction>().toEqualTypeOf<{
      player_name: string;
      product_id: number;
      product_id_string: string;
      product_name: string;
      product_price: number;
      message?: string;
      quantity_to_grant: number;
      quantity_purchased: number;
      product_amount: number;
      amount_purchased: number;
    }>();
  });

  it('VoteReward keeps total_points a string', () => {
    expectTypeOf<VoteReward['total_points']>().toEqualTypeOf<string>();
    expectTypeOf<VoteRewardResult>().toEqualTypeOf<{ rewards: VoteReward[]; messages: string[]; insufficientPoints: boolean }>();
  });

  it('Product exposes productId as a string and keeps unknown fields', () => {
    expectTypeOf<Product['productId']>().toEqualTypeOf<string>();
    expectTypeOf<Product['sales']>().toEqualTypeOf<readonly Sale[]>();
    expectTypeOf<Product['anythingElse']>().toEqualTypeOf<unknown>();
  });

  it('a catalog is read-only all the way down: what is frozen is typed so', () => {
    expectTypeOf<Catalog['products']>().toEqualTypeOf<readonly Product[]>();
    const read = (catalog: Catalog) => {
      // @ts-expect-error sorting the (frozen, shared) cached catalog in place
      catalog.products.sort((a, b) => a.price - b.price);
      // @ts-expect-error changing a product of the cached catalog
      catalog.products[0]!.price = 0;
      // @ts-expect-error changing a sale
      catalog.products[0]!.sales[0]!.discountPercentage = 5;
      return [...catalog.products].sort((a, b) => a.price - b.price); // a copy is the user's own
    };
    expectTypeOf(read).returns.toEqualTypeOf<Product[]>();
  });
});

describe('each zod schema agrees with its interface', () => {
  // The schemas validate wire rows; the to… functions take exactly a schema's output and
  // return exactly the interface, so a drift on either side fails here.
  it('productSchema → toProduct → Product', () => {
    expectTypeOf<Parameters<typeof toProduct>[0]>().toEqualTypeOf<z.output<CatalogSchemas['product']>>();
    expectTypeOf<ReturnType<typeof toProduct>>().toEqualTypeOf<Product>();
  });
  it('saleSchema → toSale → Sale', () => {
    expectTypeOf<Parameters<typeof toSale>[0]>().toEqualTypeOf<z.output<CatalogSchemas['sale']>>();
    expectTypeOf<ReturnType<typeof toSale>>().toEqualTypeOf<Sale>();
  });
  it('transactionSchema → toTransaction → Transaction (or the problems)', () => {
    expectTypeOf<Parameters<typeof toTransaction>[0]>().toEqualTypeOf<z.output<ClaimSchemas['transaction']>>();
    expectTypeOf<ReturnType<typeof toTransaction>>().toEqualTypeOf<Transaction | string[]>();
  });
  it('voteRewardSchemas().voteReward → toVoteReward → VoteReward', () => {
    expectTypeOf<Parameters<typeof toVoteReward>[0]>().toEqualTypeOf<z.output<VoteRewardSchemas['voteReward']>>();
    expectTypeOf<ReturnType<typeof toVoteReward>>().toEqualTypeOf<VoteReward>();
  });
});

describe('StorefrontClient', () => {
  it('methods resolve to the documented types', () => {
    expectTypeOf<StorefrontClient['getCatalog']>().returns.toEqualTypeOf<Promise<Catalog>>();
    expectTypeOf<StorefrontClient['checkout']>().returns.toEqualTypeOf<Promise<CheckoutResult>>();
    expectTypeOf<StorefrontClient['claim']>().returns.toEqualTypeOf<Promise<ClaimResult>>();
    expectTypeOf<StorefrontClient['previewClaim']>().returns.toEqualTypeOf<Promise<ClaimResult>>();
    expectTypeOf<StorefrontClient['claimLegacy']>().returns.toEqualTypeOf<Promise<ClaimResult>>();
    expectTypeOf<StorefrontClient['claimStoreTransactions']>().returns.toEqualTypeOf<Promise<ClaimResult>>();
    expectTypeOf<StorefrontClient['claimVoteReward']>().returns.toEqualTypeOf<Promise<VoteRewardResult>>();
    expectTypeOf<StorefrontClient['clearCatalogCache']>().returns.toEqualTypeOf<void>();
  });

  it('takes the documented arguments', () => {
    expectTypeOf<StorefrontClient['claim']>().parameter(0).toEqualTypeOf<string>();
    expectTypeOf<StorefrontClient['claimVoteReward']>().parameter(0).toHaveProperty('amount').toEqualTypeOf<number | 'all'>();
    expectTypeOf<StorefrontClient['checkout']>().parameter(0).toHaveProperty('coupon').toEqualTypeOf<string | undefined>();
    // previewClaim sets preview itself.
    expectTypeOf<NonNullable<Parameters<StorefrontClient['previewClaim']>[1]>>().not.toHaveProperty('preview');
    expectTypeOf<NonNullable<Parameters<StorefrontClient['previewClaim']>[1]>>().toHaveProperty('includeRawTransactions');
  });

  it('takes no options (the key from TEAMGAMES_API_KEY), a per-call timeoutMs, and derives clients', () => {
    expectTypeOf<ConstructorParameters<typeof StorefrontClient>>().toEqualTypeOf<[options?: StorefrontClientOptions]>();
    expectTypeOf<NonNullable<Parameters<StorefrontClient['getCatalog']>[0]>>().toHaveProperty('timeoutMs').toEqualTypeOf<number | undefined>();
    expectTypeOf<NonNullable<Parameters<StorefrontClient['claim']>[1]>>().toHaveProperty('timeoutMs').toEqualTypeOf<number | undefined>();
    expectTypeOf<StorefrontClient['withOptions']>().returns.toEqualTypeOf<StorefrontClient>();
    expectTypeOf<keyof DerivedClientOptions>().toEqualTypeOf<'timeoutMs' | 'retry' | 'maxResponseBytes' | 'fetch' | 'userAgent' | 'onEvent'>();
    const client = new StorefrontClient();
    // @ts-expect-error the key is shared by a derived client, not changed
    client.withOptions({ apiKey: 'other' });
  });

  it('onEvent receives the event union', () => {
    expectTypeOf<StorefrontEvent['type']>().toEqualTypeOf<'request' | 'response' | 'retry' | 'unverified' | 'journalError' | 'delivery' | 'stuck' | 'playerBlocked' | 'playerUnblocked' | 'loopError' | 'sharedHintsError'>();
    expectTypeOf<Extract<StorefrontEvent, { type: 'request' }>['headers']>().toEqualTypeOf<Record<string, string>>();
  });
});

describe('errors', () => {
  it('isStorefrontError is a type guard', () => {
    expectTypeOf(isStorefrontError).guards.toEqualTypeOf<StorefrontError>();
  });

  it('code, and the fields of the subclasses', () => {
    expectTypeOf<StorefrontError['code']>().toEqualTypeOf<StorefrontErrorCode>();
    expectTypeOf<InvalidInputError['argument']>().toEqualTypeOf<string>();
    expectTypeOf<ClaimOutcomeUnknownError['reason']>().toEqualTypeOf<OutcomeUnknownReason>();
    expectTypeOf<OutcomeUnknownReason>().toEqualTypeOf<'timeout' | 'network' | 'http' | 'aborted' | 'invalid-response'>();
    expectTypeOf<ClaimOutcomeUnknownError>().toExtend<StorefrontError>();
  });
});
