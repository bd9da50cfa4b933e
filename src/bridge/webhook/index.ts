/**
 * The webhook sink's room, its front door: each item a POST to the game's URL (sink.ts).
 *
 * @module
 * @internal
 */
export { WEBHOOK_BODY_LIMIT, createWebhookSink, type WebhookDeps, type WebhookPurchase, type WebhookVote } from './sink.js';
