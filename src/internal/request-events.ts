/**
 * The events a call reports through `onEvent` (the request, its response, a retry), apart
 * from delivery's so the transport, which emits them, needs nothing above it.
 *
 * @module
 */
import type { Operation } from '../errors.js';

/** One attempt of a call, as {@link StorefrontClientOptions.onEvent} reports it (part of {@link StorefrontEvent}). Credential headers read `<redacted>`. */
export type StorefrontRequestEvent =
  | {
      /** An attempt is about to be sent. */
      type: 'request';
      /** The SDK method that sent it. */
      operation: Operation;
      /** Always `POST`. */
      method: string;
      /** The full URL. */
      url: string;
      /** Request headers, credential values replaced by `<redacted>`. */
      headers: Record<string, string>;
      /** 0 for the first attempt, then 1, 2 … */
      attempt: number;
    }
  | {
      /** An attempt got its response headers. */
      type: 'response';
      /** The SDK method that sent it. */
      operation: Operation;
      /** The full URL. */
      url: string;
      /** The HTTP status. */
      status: number;
      /** 0 for the first attempt, then 1, 2 … */
      attempt: number;
      /** Time from sending this attempt to its response headers. */
      durationMs: number;
    }
  | {
      /** A read is about to be retried. */
      type: 'retry';
      /** The SDK method that sent it. */
      operation: Operation;
      /** The full URL. */
      url: string;
      /** The attempt about to start (1 for the first retry). */
      attempt: number;
      /** Why the previous attempt failed: an HTTP status or a network reason. */
      reason: string;
    };
