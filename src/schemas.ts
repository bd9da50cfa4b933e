/**
 * zod schemas of every response body. They are tolerant: unknown fields are kept,
 * optional fields may be absent or `null`, numbers may arrive as numeric strings where
 * older endpoints are known to send them. Each schema's output is the exported type,
 * so `tsc` proves the two agree.
 *
 * Built once at module load; parsing never creates a schema.
 *
 * @module
 */
import { z } from 'zod';
import type { Product, Sale, Transaction, VoteReward } from './types.js';

/** A JSON number, or a string holding one (v3 endpoints are loose about this). */
const numberLike = z.union([
  z.number(),
  z
    .string()
    .regex(/^\s*-?\d+(\.\d+)?\s*$/, 'expected a number or a numeric string')
    .transform(Number),
]);

const intLike = numberLike.pipe(z.number().int());

/** Absent and `null` both become `undefined`. */
const optional = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v) => v ?? undefined);

export const saleSchema = z
  .looseObject({
    saleType: z.string(),
    discountPercentage: z.number().nullish(),
    discountAmount: z.number().nullish(),
  })
  .transform((sale): Sale => {
    const { discountPercentage, discountAmount, ...rest } = sale;
    const out: Sale = rest;
    if (discountPercentage != null) out.discountPercentage = discountPercentage;
    if (discountAmount != null) out.discountAmount = discountAmount;
    return out;
  });

// Catalog fields are plain checks and the defaults are filled in one transform per
// product: per-field transforms doubled the cost of a 500-product catalog.
export const productSchema = z
  .looseObject({
    id: z.number().int(),
    productId: z.union([z.string(), z.number()]),
    name: z.string(),
    price: z.number(),
    priceOriginal: z.number().nullish(),
    priceWithSale: z.number().nullish(),
    quantity: z.number().int().nullish(),
    description: z.string().nullish(),
    image: z.string().nullish(),
    disabled: z.boolean().nullish(),
    sales: z.array(saleSchema).nullish(),
  })
  .transform(
    (p): Product => ({
      ...p,
      productId: String(p.productId),
      priceOriginal: p.priceOriginal ?? p.price,
      priceWithSale: p.priceWithSale ?? p.price,
      quantity: p.quantity ?? 1,
      description: p.description ?? '',
      image: p.image ?? '',
      disabled: p.disabled ?? false,
      sales: p.sales ?? [],
    }),
  );

export const catalogResponseSchema = z.looseObject({
  message: z.string(),
  extendedMessage: optional(z.string()),
  products: optional(z.array(productSchema)),
});

export const checkoutResponseSchema = z.looseObject({
  status: optional(z.string()),
  statusCode: optional(z.union([z.string(), z.number()]).transform(String)),
  isFree: optional(z.boolean()),
  redirect: optional(z.string()),
  transactionId: optional(z.union([z.string(), z.number()]).transform(String)),
  message: optional(z.string()),
  error: optional(z.string()),
  productsAffected: optional(z.array(z.unknown())),
});

/** Keys that make a row a purchase rather than a message-only row. */
export const TRANSACTION_KEYS = [
  'player_name',
  'product_id',
  'product_id_string',
  'product_name',
  'product_price',
  'product_amount',
  'amount_purchased',
  'quantity_to_grant',
  'quantity_purchased',
] as const;

/**
 * A purchase row, v4 or legacy v3, normalized so every v4 field is filled:
 * `product_id_string` from `product_id` when absent, each quantity from its twin.
 */
export const transactionSchema = z
  .looseObject({
    player_name: z.string(),
    product_id: optional(z.union([z.number(), z.string()])),
    product_id_string: optional(z.union([z.string(), z.number()]).transform(String)),
    product_name: z.string(),
    product_price: numberLike,
    message: optional(z.string()),
    quantity_to_grant: optional(intLike),
    quantity_purchased: optional(intLike),
    product_amount: optional(intLike),
    amount_purchased: optional(intLike),
  })
  .superRefine((t, ctx) => {
    if (t.product_id === undefined && t.product_id_string === undefined) {
      ctx.addIssue({ code: 'custom', path: ['product_id'], message: 'product_id or product_id_string is required' });
    }
    if (t.quantity_to_grant === undefined && t.product_amount === undefined) {
      ctx.addIssue({ code: 'custom', path: ['quantity_to_grant'], message: 'quantity_to_grant or product_amount is required' });
    }
    if (t.quantity_purchased === undefined && t.amount_purchased === undefined) {
      ctx.addIssue({ code: 'custom', path: ['quantity_purchased'], message: 'quantity_purchased or amount_purchased is required' });
    }
  })
  .transform((t): Transaction => {
    const { message, ...rest } = t;
    const idString = t.product_id_string ?? String(t.product_id);
    const grant = (t.quantity_to_grant ?? t.product_amount) as number;
    const bought = (t.quantity_purchased ?? t.amount_purchased) as number;
    const out: Transaction = {
      ...rest,
      product_id: productIdNumber(t.product_id, idString),
      product_id_string: idString,
      quantity_to_grant: grant,
      quantity_purchased: bought,
      product_amount: grant,
      amount_purchased: bought,
    };
    if (message !== undefined) out.message = message;
    return out;
  });

/** The merchant id as an int when it is an integer (number or integer string), else 0. */
function productIdNumber(wire: number | string | undefined, idString: string): number {
  if (typeof wire === 'number' && Number.isSafeInteger(wire)) return wire;
  const text = typeof wire === 'string' ? wire : idString;
  return /^-?\d+$/.test(text.trim()) && Number.isSafeInteger(Number(text)) ? Number(text) : 0;
}

export const claimV4ResponseSchema = z.looseObject({
  status: z.string(),
  code: z.string(),
  message: optional(z.string()),
  data: optional(
    z.looseObject({
      claims: optional(z.array(z.unknown())),
      rawTransactions: optional(z.array(z.record(z.string(), z.unknown()))),
    }),
  ),
});

/** A v3 answer: the documented array, or the bare `{message}` object some deployments send. */
export const legacyResponseSchema = z.union([z.array(z.record(z.string(), z.unknown())), z.record(z.string(), z.unknown())]);

export const messageRowSchema = z.looseObject({ message: z.string() });

/** Keys that make a vote row a reward rather than a message-only row. */
export const VOTE_REWARD_KEYS = ['reward_id', 'reward_name', 'give_amount', 'vote_points', 'votes_month', 'total_points'] as const;

export const voteRewardSchema = z
  .looseObject({
    message: optional(z.string()),
    total_points: z.union([z.string(), z.number()]).transform(String),
    vote_points: intLike,
    votes_month: intLike,
    give_amount: intLike,
    reward_id: intLike,
    reward_name: z.string(),
  })
  .transform((row): VoteReward => {
    const { message, ...rest } = row;
    const out: VoteReward = rest;
    if (message !== undefined) out.message = message;
    return out;
  });
