/**
 * The strict zod schemas of the mock's seed (also the CLI's `--seed` file) and of a product
 * patch. The public types they check are in `seed.ts`; a type test keeps both in step.
 */
import { z } from 'zod';
import { JAVA_INT_MAX, JAVA_INT_MIN } from './rules.js';

// Error texts name what was expected, so that a CLI user can fix the file from one line.
const expecting =
  (what: string) =>
  (issue: { input?: unknown }): string =>
    issue.input === undefined ? `is required (${what})` : `expected ${what}`;

const nonNegative = z.number({ error: expecting('a number >= 0') }).min(0, { error: 'expected a number >= 0' });
// Integers stop at the largest Java int: whatever the mock sends back fits one (I-11).
const positiveInt = z
  .number({ error: expecting('a positive integer') })
  .int({ error: 'expected a positive integer' })
  .min(1, { error: 'expected a positive integer' })
  .max(JAVA_INT_MAX, { error: `expected a positive integer up to ${JAVA_INT_MAX}` });
const nonNegativeInt = z
  .number({ error: expecting('an integer >= 0') })
  .int({ error: 'expected an integer >= 0' })
  .min(0, { error: 'expected an integer >= 0' })
  .max(JAVA_INT_MAX, { error: `expected an integer from 0 to ${JAVA_INT_MAX}` });
const JAVA_INT_ID = 'expected a non-blank string or an integer within a Java int';
const javaInt = z
  .number()
  .int({ error: JAVA_INT_ID })
  .min(JAVA_INT_MIN, { error: JAVA_INT_ID })
  .max(JAVA_INT_MAX, { error: JAVA_INT_ID });
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
  productId: z.union([nonBlank, javaInt], { error: JAVA_INT_ID }),
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


/** A vote reward of the seed. */
export const rewardSchema = z.strictObject({ id: positiveInt, name: nonBlank, cost: positiveInt, giveAmount: positiveInt.optional() });

/** A change to a vote reward (`updateReward`): any reward field but `id`. */
export const rewardPatchSchema = rewardSchema.omit({ id: true }).partial();

const serverSchema = z
  .strictObject({
    apiKey,
    name: text.optional(),
    transactionMessage: text.optional(),
    gateway: z
      .strictObject(
        {
          configured: z.boolean({ error: expecting('true or false') }).optional(),
          integrationComplete: z.boolean({ error: expecting('true or false') }).optional(),
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
      .array(rewardSchema, { error: expecting('an array of rewards') })
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
 * The strict zod schema of a `MockSeed`: unknown keys are rejected.
 * Prefer `parseMockSeed`, which turns the issues into one readable message.
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
