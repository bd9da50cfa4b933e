import type { MockSeed } from './seed.js';

/**
 * A realistic sandbox store, used by the CLI when no `--seed` is given and by the demo
 * (the same data as `examples/seed.json`). Keys are fake and only valid against the mock.
 *
 * "Demo RSPS" (key `demo-key-3f9c2a`) has categories 1 Weapons, 2 Ranks, 3 Supplies; an
 * Armadyl godsword on a 20 % sale; Dragon claws with 2 left in stock (its sale ended in
 * 2021); a free Starter pack; a disabled Holiday box; a Legend rank listed from 2099 on;
 * coupons `SPRING` (10 % off), `WELCOME5` (5.00 off) and `WINTER2024` (expired); vote
 * rewards 1 "Vote Mystery Box" (1 point) and 2 "Double XP scroll" (5 points). "Demo
 * Survival" (key `demo-key-7b1e04`) sells Minecraft-style items with string ids.
 *
 * @example
 * ```ts
 * const mock = createMockService({ seed: exampleSeed, now: Date.parse('2026-01-01T00:00:00Z') });
 * ```
 */
export const exampleSeed: MockSeed = {
  servers: [
    {
      apiKey: 'demo-key-3f9c2a',
      name: 'Demo RSPS',
      gateway: { configured: true, minimumCharge: 1, maximumTotal: 500, maximumItems: 20 },
      coupons: [
        { code: 'SPRING', percentOff: 10 },
        { code: 'WELCOME5', amountOff: 5 },
        { code: 'WINTER2024', percentOff: 25, expiresAt: '2024-03-01T00:00:00Z' },
      ],
      categories: [
        { id: 1, name: 'Weapons' },
        { id: 2, name: 'Ranks' },
        { id: 3, name: 'Supplies' },
      ],
      products: [
        {
          id: 101,
          productId: 4151,
          name: 'Abyssal whip',
          price: 9.99,
          description: 'A weapon from the abyss. Grants one whip.',
          image: 'https://example.com/img/abyssal-whip.png',
          categoryIds: [1],
        },
        {
          id: 102,
          productId: 11802,
          name: 'Armadyl godsword',
          price: 24.99,
          description: 'A beautiful, heavy sword. 20% off this season.',
          image: 'https://example.com/img/armadyl-godsword.png',
          categoryIds: [1],
          sales: [{ saleType: 'percentage', discountPercentage: 20 }],
        },
        {
          id: 103,
          productId: 13652,
          name: 'Dragon claws',
          price: 14.99,
          description: 'Limited stock: only two sets left.',
          image: 'https://example.com/img/dragon-claws.png',
          categoryIds: [1],
          stock: 2,
          sales: [
            { saleType: 'amount', discountAmount: 5, startDate: '2021-06-01T00:00:00Z', endDate: '2021-07-01T00:00:00Z' },
          ],
        },
        {
          id: 201,
          productId: 'rank_donator',
          name: 'Donator rank',
          price: 10,
          description: 'Access to the donator zone and a yellow name.',
          categoryIds: [2],
        },
        {
          id: 202,
          productId: 'rank_super_donator',
          name: 'Super donator rank',
          price: 25,
          description: 'Everything from Donator, plus a daily bonus.',
          categoryIds: [2],
        },
        {
          id: 203,
          productId: 'rank_legend',
          name: 'Legend rank',
          price: 100,
          description: 'Not on sale yet.',
          categoryIds: [2],
          startDate: '2099-01-01T00:00:00Z',
        },
        {
          id: 301,
          productId: 995,
          name: 'Coins (10M)',
          price: 2.5,
          quantity: 10_000_000,
          description: 'Ten million coins per unit bought.',
          categoryIds: [3],
        },
        {
          id: 302,
          productId: 385,
          name: 'Shark pack',
          price: 1.99,
          quantity: 100,
          description: 'One hundred sharks per unit bought.',
          categoryIds: [3],
        },
        {
          id: 303,
          productId: 'starter_pack',
          name: 'Starter pack',
          price: 0,
          description: 'Free for every new player.',
          categoryIds: [3],
        },
        {
          id: 304,
          productId: 'holiday_box',
          name: 'Holiday box',
          price: 4.99,
          description: 'Back next December.',
          categoryIds: [3],
          disabled: true,
        },
      ],
      rewards: [
        { id: 1, name: 'Vote Mystery Box', cost: 1, giveAmount: 1 },
        { id: 2, name: 'Double XP scroll', cost: 5, giveAmount: 1 },
      ],
    },
    {
      apiKey: 'demo-key-7b1e04',
      name: 'Demo Survival',
      categories: [{ id: 1, name: 'Kits' }],
      products: [
        { id: 1, productId: 'minecraft:diamond', name: '64 Diamonds', price: 4.99, quantity: 64, categoryIds: [1] },
        { id: 2, productId: 'kit_vip', name: 'VIP kit', price: 7.99, categoryIds: [1] },
      ],
      rewards: [{ id: 1, name: 'Vote key', cost: 1 }],
    },
  ],
};
