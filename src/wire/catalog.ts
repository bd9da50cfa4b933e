/**
 * The catalog: its public types, its wire schema and its reader.
 *
 * @module
 */
import * as z from 'zod/mini';
import type { RequestOptions } from './options.js';
import { WireRefusal, compiled, optional, parse, schemasOnFirstUse, type Wire } from './parse.js';

/** A sale active now on a product. */
export interface Sale {
  /** `"percentage"` or `"amount"` (other values are passed through). */
  readonly saleType: 'percentage' | 'amount' | (string & {});
  /** Percent off, for percentage sales. */
  readonly discountPercentage?: number;
  /** Amount off the unit price, for amount sales. */
  readonly discountAmount?: number;
  /** Fields beyond these are kept as the service sent them. */
  readonly [field: string]: unknown;
}

/** A product of the catalog. */
export interface Product {
  /** The id used in cart items. */
  readonly id: number;
  /** The merchant's own id (a number on the wire for some stores; always a string here). */
  readonly productId: string;
  /** Display name. */
  readonly name: string;
  /** List price. */
  readonly price: number;
  /** List price before sales (defaults to `price` when absent). */
  readonly priceOriginal: number;
  /** Price with the best active sale applied (defaults to `price` when absent). */
  readonly priceWithSale: number;
  /** Units granted per unit bought (default 1). */
  readonly quantity: number;
  /** Default `''`. */
  readonly description: string;
  /** Image URL, `''` when none. */
  readonly image: string;
  /** Default `false`. */
  readonly disabled: boolean;
  /** Only the sales active now. */
  readonly sales: readonly Sale[];
  /** Fields beyond these are kept as the service sent them. */
  readonly [field: string]: unknown;
}

/**
 * What {@link StorefrontClient.getCatalog} resolves to. Read-only all the way down: a
 * cached catalog is frozen and shared between calls, so the types say so; copy what you
 * want to change (`[...catalog.products].sort(…)`).
 */
export interface Catalog {
  /** `"SUCCESS"`. */
  readonly message: string;
  /** The products on sale now, in the service's order. */
  readonly products: readonly Product[];
}

/** Options of {@link StorefrontClient.getCatalog}. */
export interface CatalogOptions extends RequestOptions {
  /** Only the products of this category (a positive integer). */
  categoryId?: number;
}

// ---------------------------------------------------------------------------
// The wire: tolerant schemas (unknown fields accepted, optional fields absent or null).
// They only check: a valid answer is read in place (see readCatalog), so the fields beyond
// these are kept as the service sent them without zod copying each product to keep them.

/** The catalog's schemas, built on the first catalog answer. @internal */
export const catalogSchemas = schemasOnFirstUse(() => {
  /** A wire sale; {@link toSale} drops its `null`s. */
  const sale = z.object({
    saleType: z.string(),
    discountPercentage: z.nullish(z.number()),
    discountAmount: z.nullish(z.number()),
  });

  /** A wire product; {@link toProduct} fills the defaults. */
  const product = z.object({
    id: z.number().check(z.int()),
    productId: z.union([z.string(), z.number()]),
    name: z.string(),
    price: z.number(),
    priceOriginal: z.nullish(z.number()),
    priceWithSale: z.nullish(z.number()),
    quantity: z.nullish(z.number().check(z.int())),
    description: z.nullish(z.string()),
    image: z.nullish(z.string()),
    disabled: z.nullish(z.boolean()),
    sales: z.nullish(z.array(sale)),
  });

  const envelope = { message: z.string(), extendedMessage: optional(z.string()) };
  /** The whole answer: its issues are the ones an invalid answer reports. */
  const catalogResponse = compiled(z.object({ ...envelope, products: z.nullish(z.array(product)) }));
  /** The same checks in two steps, the answer's envelope then each product ({@link isCatalog}). */
  const checks = { envelope: compiled(z.object({ ...envelope, products: z.nullish(z.array(z.unknown())) })), product: compiled(product) };

  return { sale, product, catalogResponse, checks };
});

/** The catalog's schemas. @internal */
export type CatalogSchemas = ReturnType<typeof catalogSchemas>;

// From wire rows to the SDK's types. Plain functions, not zod transforms: a transform per
// row doubled the cost of validating a 500-product catalog. The objects are the ones
// JSON.parse made for this answer alone (checked by zod, not copied: a copy of each
// product, unknown fields and all, cost more than checking every field), so they are
// completed in place rather than copied.

/** A type's properties without `readonly`: for completing the fresh objects of an answer. */
type Writable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * A `"__proto__"` key of the answer goes: JSON.parse makes it an own field, which
 * `Object.assign` or a `for…in` copy by the user would turn into an object's prototype
 * (zod's copies, read before, left it out the same way).
 */
function dropProtoKey(row: object): void {
  if (Object.hasOwn(row, '__proto__')) delete (row as Record<string, unknown>)['__proto__'];
}

/** A validated wire sale as a {@link Sale} (completed in place). */
export function toSale(sale: Wire<CatalogSchemas['sale']>): Sale {
  if (sale.discountPercentage === null) delete sale.discountPercentage;
  if (sale.discountAmount === null) delete sale.discountAmount;
  dropProtoKey(sale);
  return sale as Sale;
}

/** A validated wire product as a {@link Product}, defaults filled, extra fields kept (completed in place). */
export function toProduct(p: Wire<CatalogSchemas['product']>): Product {
  // Field by field, each assignment checked against Product's type: a temporary object
  // per product (Object.assign) cost several times more than this.
  const product = p as Wire<CatalogSchemas['product']> & Writable<Product>;
  dropProtoKey(product);
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

type WireCatalog = z.input<CatalogSchemas['catalogResponse']>;

/**
 * Whether `body` is a valid catalog answer, checked by zod as `catalogResponse` would
 * check it, without building a copy: zod's validator (`z.validate`) builds no object for
 * the schema it is given, only for those inside it, so the envelope and each product are
 * given in turn (a copy of each product cost a 500-product catalog about 30 µs more).
 */
function isCatalog(body: unknown, { envelope, product }: CatalogSchemas['checks']): body is WireCatalog {
  if (!z.validate(envelope, body)) return false;
  const { products } = body as { products?: unknown[] | null };
  if (products) for (const row of products) if (!z.validate(product, row)) return false;
  return true;
}

/** Reads a catalog answer: `body` (a fresh JSON.parse result) is completed in place. @internal */
export function readCatalog(body: unknown): Catalog {
  const { catalogResponse, checks } = catalogSchemas();
  // An invalid answer is parsed whole for zod's issues (parse throws).
  const wire = isCatalog(body, checks) ? body : parse(catalogResponse, body, 'the catalog does not match the schema');
  if (wire.message === 'GAME_SERVER_NOT_FOUND') throw new WireRefusal('GAME_SERVER_NOT_FOUND');
  return { message: wire.message, products: wire.products ? wire.products.map(toProduct) : [] };
}
