/**
 * zod schemas of the catalog and v4 claim bodies, and the functions that turn validated
 * rows into the SDK's types (the v3 and checkout schemas load with their readers). The
 * schemas are tolerant: unknown fields are kept, optional fields may be absent or `null`,
 * numbers may arrive as numeric strings where older endpoints are known to send them.
 * Each `to…` function takes its schema's output and returns the exported type; the types
 * test pins both ends, so the schema and the interface cannot drift apart.
 *
 * Built and compiled on first use (see {@link wireSchemas}); parsing never creates a schema.
 *
 * @module
 */
import { z } from 'zod';
import type { Product, Sale } from './types.js';
import type { Transaction } from './wire/claim.js';

/**
 * `schema` compiled by zod (`z.compile`): the same results and the same issues, several
 * times faster on the hot path (the 500-product catalog: about 540 → 160 µs). Compiling
 * generates code with `new Function`; when the program has set `z.config({ jitless: true })`
 * (a strict Content Security Policy), or the runtime refuses generated code, the schema
 * is returned as it is and parses as before.
 */
export function compiled<T extends z.ZodType>(schema: T): T {
  return z.config().jitless ? schema : z.compile(schema);
}

/** Absent and `null` both become `undefined` (for envelopes, parsed once per answer). */
export const optional = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v) => v ?? undefined);

/**
 * Builds the wire schemas of the catalog and the v4 claim, and compiles the ones that
 * parse answers (see {@link compiled}). Called once, on the first answer to read:
 * building zod schemas costs several milliseconds in a fresh process, most of what
 * importing the SDK would otherwise cost beyond ky and zod themselves.
 */
function build() {
  /** A JSON number, or a string holding one (v3 endpoints are loose about this). */
  const numberLike = z.union([z.number(), z.string().regex(/^\s*-?\d+(\.\d+)?\s*$/, 'expected a number or a numeric string')]);

  /** An integer, or a string holding one. */
  const intLike = z.union([z.number().int(), z.string().regex(/^\s*-?\d+\s*$/, 'expected an integer or an integer string')]);

  /** A wire sale; {@link toSale} drops its `null`s. */
  const sale = z.looseObject({
    saleType: z.string(),
    discountPercentage: z.number().nullish(),
    discountAmount: z.number().nullish(),
  });

  /** A wire product; {@link toProduct} fills the defaults. */
  const product = z.looseObject({
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
    sales: z.array(sale).nullish(),
  });

  const catalogResponse = compiled(
    z.looseObject({
      message: z.string(),
      extendedMessage: optional(z.string()),
      products: z.array(product).nullish(),
    }),
  );

  /** A purchase row, v4 or legacy v3; {@link toTransaction} fills every v4 field. */
  const transaction = compiled(
    z.looseObject({
      player_name: z.string(),
      product_id: z.union([z.number(), z.string()]).nullish(),
      product_id_string: z.union([z.string(), z.number()]).nullish(),
      product_name: z.string(),
      product_price: numberLike,
      message: z.string().nullish(),
      quantity_to_grant: intLike.nullish(),
      quantity_purchased: intLike.nullish(),
      product_amount: intLike.nullish(),
      amount_purchased: intLike.nullish(),
    }),
  );

  const claimV4Response = compiled(
    z.looseObject({
      status: z.string(),
      code: z.string(),
      message: optional(z.string()),
      data: optional(
        z.looseObject({
          claims: optional(z.array(z.unknown())),
          rawTransactions: optional(z.array(z.record(z.string(), z.unknown()))),
        }),
      ),
    }),
  );

  return { intLike, sale, product, catalogResponse, transaction, claimV4Response };
}

/** The wire schemas (see `build`). */
export type WireSchemas = ReturnType<typeof build>;

let built: WireSchemas | undefined;

/** The wire schemas, built on first use; parsing never creates a schema. */
export function wireSchemas(): WireSchemas {
  return (built ??= build());
}

// ---------------------------------------------------------------------------
// From wire rows to the SDK's types. Plain functions, not zod transforms: a transform
// per row doubled the cost of validating a 500-product catalog.

export type Wire<T extends z.ZodType> = z.output<T>;

/** Absent and `null` both read as absent. */
export const given = <T>(value: T | null | undefined): value is T => value !== undefined && value !== null;

// The objects zod returns are its own fresh copies, so the to… functions complete them
// in place rather than copying each row once more.

/** A validated wire sale as a {@link Sale} (completed in place). */
export function toSale(sale: Wire<WireSchemas['sale']>): Sale {
  if (sale.discountPercentage === null) delete sale.discountPercentage;
  if (sale.discountAmount === null) delete sale.discountAmount;
  return sale as Sale;
}

/** A validated wire product as a {@link Product}, defaults filled, extra fields kept (completed in place). */
export function toProduct(p: Wire<WireSchemas['product']>): Product {
  // Field by field, each assignment checked against Product's type: a temporary object
  // per product (Object.assign) cost several times more than this.
  const product = p as Wire<WireSchemas['product']> & Product;
  product.productId = String(p.productId);
  product.priceOriginal = p.priceOriginal ?? p.price;
  product.priceWithSale = p.priceWithSale ?? p.price;
  product.quantity = p.quantity ?? 1;
  product.description = p.description ?? '';
  product.image = p.image ?? '';
  product.disabled = p.disabled ?? false;
  if (p.sales) for (const sale of p.sales) toSale(sale);
  else product.sales = [];
  return product;
}

/**
 * A validated purchase row as a {@link Transaction} with every v4 field filled:
 * `product_id_string` from `product_id` when absent, each quantity from its twin.
 * Returns the problems instead when a required pair is wholly missing.
 */
export function toTransaction(t: Wire<WireSchemas['transaction']>): Transaction | string[] {
  const problems: string[] = [];
  if (!given(t.product_id) && !given(t.product_id_string)) problems.push('product_id: product_id or product_id_string is required');
  const grant = t.quantity_to_grant ?? t.product_amount;
  const bought = t.quantity_purchased ?? t.amount_purchased;
  if (!given(grant)) problems.push('quantity_to_grant: quantity_to_grant or product_amount is required');
  if (!given(bought)) problems.push('quantity_purchased: quantity_purchased or amount_purchased is required');
  if (!given(grant) || !given(bought) || problems.length > 0) return problems;
  const { message, ...rest } = t;
  const idString = given(t.product_id_string) ? String(t.product_id_string) : String(t.product_id);
  const out: Transaction = {
    ...rest,
    product_id: productIdNumber(t.product_id, idString),
    product_id_string: idString,
    product_price: Number(t.product_price),
    quantity_to_grant: Number(grant),
    quantity_purchased: Number(bought),
    product_amount: Number(grant),
    amount_purchased: Number(bought),
  };
  if (given(message)) out.message = message;
  return out;
}

/** The merchant id as an int when it is an integer (number or integer string), else 0. */
function productIdNumber(wire: number | string | null | undefined, idString: string): number {
  if (typeof wire === 'number' && Number.isSafeInteger(wire)) return wire;
  const text = typeof wire === 'string' ? wire : idString;
  return /^-?\d+$/.test(text.trim()) && Number.isSafeInteger(Number(text)) ? Number(text) : 0;
}
