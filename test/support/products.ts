/**
 * The delivery store's five plain products, one per kind of product id the service sends
 * (a numeric string, a namespaced item, a number, a rank, a stack of coins), with no
 * gateway limits, so random carts always check out. The reliability seed (reliability.ts),
 * the soak, the simulation, the power-loss runs and the crash campaign's mock all sell
 * these. A module of its own, so that the crash campaign reads it without loading the SDK.
 */
export const PRODUCTS = [
  { id: 1, productId: '42', name: 'Whip', price: 10 },
  { id: 2, productId: 'minecraft:diamond', name: 'Diamonds', price: 5, quantity: 64 },
  { id: 3, productId: 7, name: 'Sword', price: 20 },
  { id: 4, productId: 'rank_vip', name: 'VIP rank', price: 50 },
  { id: 5, productId: 'coins', name: 'Coins', price: 1, quantity: 100 },
];
