import { z } from 'zod';

/**
 * The starting state of the mock, also the JSON format of the CLI's `--seed` file.
 *
 * @example
 * ```ts
 * const seed: MockSeed = {
 *   servers: [{
 *     apiKey: 'test-key', name: 'My RSPS',
 *     products: [{ id: 1, productId: 'dragon_scimitar', name: 'Dragon scimitar', price: 4.99 }],
 *   }],
 * };
 * ```
 */
export interface MockSeed {
  /** The game servers; each is its own store with its own key. At least one. */
  servers: MockSeedServer[];
}

/** One game server (one store) of a {@link MockSeed}. */
export interface MockSeedServer {
  /** The raw API key (printable ASCII, no spaces); unique across servers. */
  apiKey: string;
  /** Display name, shown by the CLI and in the state snapshot. */
  name?: string;
  /** Payment gateway limits; absent means configured, no minimum charge, no maximums. */
  gateway?: MockSeedGateway;
  /** Coupon codes a checkout may send. */
  coupons?: MockSeedCoupon[];
  /** Catalog categories, referenced by `products[].categoryIds`. */
  categories?: MockSeedCategory[];
  /** The catalog. */
  products?: MockSeedProduct[];
  /** Vote rewards, claimed with points. */
  rewards?: MockSeedReward[];
}

/** Payment gateway configuration of a {@link MockSeedServer}. */
export interface MockSeedGateway {
  /** `false` makes every paid checkout answer `status: "ERROR"`. Default `true`. */
  configured?: boolean;
  /** A paid checkout below this total answers `status: "ERROR"`. Default 0. */
  minimumCharge?: number;
  /** A checkout above this total answers `statusCode: "400"`. Default: no maximum. */
  maximumTotal?: number;
  /** A checkout with more cart lines than this answers `statusCode: "400"`. Default: no maximum. */
  maximumItems?: number;
}

/** A coupon of a {@link MockSeedServer}; `percentOff` applies first, then `amountOff`. */
export interface MockSeedCoupon {
  /** The code the player types (matched ignoring letter case). */
  code: string;
  /** Percentage taken off the cart total, 0–100. */
  percentOff?: number;
  /** Amount taken off the cart total (after `percentOff`). */
  amountOff?: number;
  /** ISO 8601; from this instant on the coupon is rejected as expired. */
  expiresAt?: string;
}

/** A catalog category of a {@link MockSeedServer}. */
export interface MockSeedCategory {
  /** Positive integer id, the `categoryId` of a catalog request. */
  id: number;
  /** Display name. */
  name: string;
}

/** A catalog product of a {@link MockSeedServer}. */
export interface MockSeedProduct {
  /** Positive integer id, the value used in carts; unique per server. */
  id: number;
  /** The merchant's own id (e.g. an in-game item id); string or number. */
  productId: string | number;
  /** Display name. */
  name: string;
  /** List price, >= 0. */
  price: number;
  /** Units granted per unit bought. Default 1. */
  quantity?: number;
  /** Description shown in the catalog. Default `""`. */
  description?: string;
  /** Image URL shown in the catalog. Default `""`. */
  image?: string;
  /** A disabled product is hidden from the catalog and refused at checkout. */
  disabled?: boolean;
  /** ISO 8601; the product is listed from this instant on (inclusive). */
  startDate?: string;
  /** ISO 8601; the product is listed until this instant (exclusive). */
  endDate?: string;
  /** Categories the product belongs to (ids of `categories`). */
  categoryIds?: number[];
  /** Units left; `null` or absent means unlimited. */
  stock?: number | null;
  /** Sales; only those active now are listed and applied. */
  sales?: MockSeedSale[];
}

/** A sale on a {@link MockSeedProduct}. */
export interface MockSeedSale {
  /** `"percentage"` uses `discountPercentage`, `"amount"` uses `discountAmount`. */
  saleType: 'percentage' | 'amount';
  /** Percentage off the list price, 0–100 (required for `"percentage"`). */
  discountPercentage?: number;
  /** Amount off the list price (required for `"amount"`). */
  discountAmount?: number;
  /** ISO 8601; the sale is active from this instant on (inclusive). */
  startDate?: string;
  /** ISO 8601; the sale is active until this instant (exclusive). */
  endDate?: string;
}

/** A vote reward of a {@link MockSeedServer}. */
export interface MockSeedReward {
  /** Positive integer id, the `reward` form field (integrators use it as the item id). */
  id: number;
  /** Display name. */
  name: string;
  /** Vote points per unit, a positive integer. */
  cost: number;
  /** Units given per unit claimed. Default 1. */
  giveAmount?: number;
}

// Error texts name what was expected, so that a CLI user can fix the file from one line.
const expecting =
  (what: string) =>
  (issue: { input?: unknown }): string =>
    issue.input === undefined ? `is required (${what})` : `expected ${what}`;

const nonNegative = z.number({ error: expecting('a number >= 0') }).min(0, { error: 'expected a number >= 0' });
const positiveInt = z
  .number({ error: expecting('a positive integer') })
  .int({ error: 'expected a positive integer' })
  .min(1, { error: 'expected a positive integer' });
const nonNegativeInt = z
  .number({ error: expecting('an integer >= 0') })
  .int({ error: 'expected an integer >= 0' })
  .min(0, { error: 'expected an integer >= 0' });
const percent = z
  .number({ error: expecting('a number from 0 to 100') })
  .min(0, { error: 'expected a number from 0 to 100' })
  .max(100, { error: 'expected a number from 0 to 100' });
const text = z.string({ error: expecting('a string') });
const nonBlank = text.refine((s) => s.trim() !== '', { error: 'expected a non-blank string' });
const isoDate = z
  .string({ error: expecting('an ISO 8601 date string') })
  .refine((s) => !Number.isNaN(Date.parse(s)), { error: 'expected an ISO 8601 date string' });
const apiKey = z
  .string({ error: expecting('a string') })
  .regex(/^[\x21-\x7e]+$/, { error: 'expected a non-empty key of printable ASCII characters without spaces' });

function checkWindow(
  value: { startDate?: string | undefined; endDate?: string | undefined },
  ctx: z.RefinementCtx,
): void {
  if (value.startDate !== undefined && value.endDate !== undefined && Date.parse(value.endDate) <= Date.parse(value.startDate)) {
    ctx.addIssue({ code: 'custom', path: ['endDate'], message: 'expected a date after startDate' });
  }
}

const saleSchema = z
  .strictObject({
    saleType: z.enum(['percentage', 'amount'], { error: 'expected "percentage" or "amount"' }),
    discountPercentage: percent.optional(),
    discountAmount: nonNegative.optional(),
    startDate: isoDate.optional(),
    endDate: isoDate.optional(),
  })
  .superRefine((sale, ctx) => {
    if (sale.saleType === 'percentage' && sale.discountPercentage === undefined) {
      ctx.addIssue({ code: 'custom', path: ['discountPercentage'], message: 'is required for saleType "percentage"' });
    }
    if (sale.saleType === 'amount' && sale.discountAmount === undefined) {
      ctx.addIssue({ code: 'custom', path: ['discountAmount'], message: 'is required for saleType "amount"' });
    }
    checkWindow(sale, ctx);
  });

const productFields = {
  id: positiveInt,
  productId: z.union([nonBlank, z.number()], { error: 'expected a non-blank string or a number' }),
  name: nonBlank,
  price: nonNegative,
  quantity: positiveInt.optional(),
  description: text.optional(),
  image: text.optional(),
  disabled: z.boolean({ error: expecting('true or false') }).optional(),
  startDate: isoDate.optional(),
  endDate: isoDate.optional(),
  categoryIds: z.array(positiveInt, { error: expecting('an array of category ids') }).optional(),
  stock: nonNegativeInt.nullable().optional(),
  sales: z.array(saleSchema, { error: expecting('an array of sales') }).optional(),
};

/**
 * The strict schema of one product (used again to check a product after `updateProduct`).
 * @internal
 */
export const productSchema = z.strictObject(productFields).superRefine(checkWindow);

/**
 * The strict schema of a product patch (`updateProduct`): any product field but `id`.
 * @internal
 */
export const productPatchSchema = z
  .strictObject(productFields)
  .omit({ id: true })
  .partial();

/** A change to a catalog product for `updateProduct`: any seed product field but `id`. */
export type MockProductPatch = Partial<Omit<MockSeedProduct, 'id'>>;

const serverSchema = z
  .strictObject({
    apiKey,
    name: text.optional(),
    gateway: z
      .strictObject(
        {
          configured: z.boolean({ error: expecting('true or false') }).optional(),
          minimumCharge: nonNegative.optional(),
          maximumTotal: nonNegative.optional(),
          maximumItems: positiveInt.optional(),
        },
        { error: expecting('an object') },
      )
      .optional(),
    coupons: z
      .array(
        z.strictObject({
          code: nonBlank,
          percentOff: percent.optional(),
          amountOff: nonNegative.optional(),
          expiresAt: isoDate.optional(),
        }),
        { error: expecting('an array of coupons') },
      )
      .optional(),
    categories: z
      .array(z.strictObject({ id: positiveInt, name: nonBlank }), { error: expecting('an array of categories') })
      .optional(),
    products: z.array(productSchema, { error: expecting('an array of products') }).optional(),
    rewards: z
      .array(
        z.strictObject({ id: positiveInt, name: nonBlank, cost: positiveInt, giveAmount: positiveInt.optional() }),
        { error: expecting('an array of rewards') },
      )
      .optional(),
  }, { error: expecting('an object') })
  .superRefine((server, ctx) => {
    flagDuplicates(server.products ?? [], (p) => p.id, ['products'], 'id', 'product id', ctx);
    flagDuplicates(server.categories ?? [], (c) => c.id, ['categories'], 'id', 'category id', ctx);
    flagDuplicates(server.rewards ?? [], (r) => r.id, ['rewards'], 'id', 'reward id', ctx);
    flagDuplicates(server.coupons ?? [], (c) => c.code.toLowerCase(), ['coupons'], 'code', 'coupon code', ctx);
    const categoryIds = new Set((server.categories ?? []).map((c) => c.id));
    (server.products ?? []).forEach((product, p) => {
      (product.categoryIds ?? []).forEach((categoryId, c) => {
        if (!categoryIds.has(categoryId)) {
          ctx.addIssue({
            code: 'custom',
            path: ['products', p, 'categoryIds', c],
            message: `unknown category ${categoryId} (not in this server's categories)`,
          });
        }
      });
    });
  });

function flagDuplicates<T>(
  items: readonly T[],
  keyOf: (item: T) => unknown,
  path: (string | number)[],
  field: string,
  label: string,
  ctx: z.RefinementCtx,
): void {
  const seen = new Set<unknown>();
  items.forEach((item, index) => {
    const key = keyOf(item);
    if (seen.has(key)) {
      ctx.addIssue({ code: 'custom', path: [...path, index, field], message: `duplicate ${label} ${JSON.stringify(key)}` });
    }
    seen.add(key);
  });
}

/**
 * The strict zod schema of a {@link MockSeed}: unknown keys are rejected.
 * Prefer {@link parseMockSeed}, which turns the issues into one readable message.
 */
export const mockSeedSchema = z
  .strictObject(
    {
      servers: z
        .array(serverSchema, { error: expecting('an array of servers') })
        .min(1, { error: 'expected at least one server' }),
    },
    { error: expecting('an object') },
  )
  .superRefine((seed, ctx) => {
    flagDuplicates(seed.servers, (s) => s.apiKey, ['servers'], 'apiKey', 'API key', ctx);
  });

/**
 * Formats a zod issue path the way a user writes it: `seed.servers[0].products[2].price`.
 * @internal
 */
export function formatPath(root: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (out, key) => (typeof key === 'number' ? `${out}[${key}]` : `${out}.${String(key)}`),
    root,
  );
}

/**
 * Turns zod issues into `path: problem` lines; unknown keys are named.
 * @internal
 */
export function describeIssues(root: string, issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((issue) => {
    const where = formatPath(root, issue.path);
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys.map((k) => JSON.stringify(k)).join(', ');
      return `${where}: unknown ${issue.keys.length === 1 ? 'key' : 'keys'} ${keys}`;
    }
    return `${where}: ${issue.message}`;
  });
}

/**
 * Validates a seed and returns it typed; the error message names the first bad field.
 *
 * @example
 * ```ts
 * const seed = parseMockSeed(JSON.parse(await readFile('seed.json', 'utf8')));
 * ```
 * @throws Error `Invalid mock seed: seed.servers[0].products[2].price: expected a number >= 0`
 *   (further problems are counted at the end).
 */
export function parseMockSeed(input: unknown): MockSeed {
  const result = mockSeedSchema.safeParse(input);
  if (result.success) {
    return result.data as MockSeed;
  }
  const [first, ...rest] = describeIssues('seed', result.error.issues);
  const more = rest.length === 0 ? '' : ` (and ${rest.length} more ${rest.length === 1 ? 'problem' : 'problems'})`;
  throw new Error(`Invalid mock seed: ${first ?? 'seed: invalid'}${more}`);
}
