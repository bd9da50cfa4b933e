/**
 * The events delivery reports through `onEvent` (a window, a journal failure, a run, an item
 * marked for staff, a blocked player, a failed run of the loop), apart from a call's so every
 * room of delivery emits them with nothing above it.
 *
 * @module
 */
import type { JournalError, Operation } from '../../errors.js';
import type { DeliveredItem, DeliveryCode, DeliveryReport, GivenVoteReward, UnverifiedWindow } from './types.js';

/** What delivery reports through {@link StorefrontClientOptions.onEvent} (part of {@link StorefrontEvent}). */
export type DeliveryEvent =
  | {
      /** A lost claim was reconciled: purchases in the window may have been delivered unseen. */
      type: 'unverified';
      /** `deliver` or `resumeDeliveries`. */
      operation: Operation;
      /** The player and the window, as on the report. */
      window: UnverifiedWindow;
    }
  | {
      /** The delivery journal failed; deliveries for the player are paused or granted from memory. */
      type: 'journalError';
      /** `deliver` or `resumeDeliveries`. */
      operation: Operation;
      /** The player whose delivery met the failure. */
      playerName: string;
      /** The failure; its `cause` holds the journal's own error. */
      error: JournalError;
    }
  | {
      /** The delivery loop granted items to a player (or some grants failed and stay pending). */
      type: 'delivery';
      /** `startDeliveryLoop`. */
      operation: Operation;
      /** The player. */
      playerName: string;
      /** The run's report, as `deliver` returns it. */
      report: DeliveryReport;
    }
  | {
      /**
       * A give kept failing for one item, a purchase line or a vote reward row: it reached
       * the delivery loop's `staffAfterAttempts` (or the give refused it for good, `staff:
       * true` on what it threw) and is marked for staff (`teamgames journal pending` shows it
       * as stuck). It stays pending and is still given, less often, and on the player's next join.
       */
      type: 'stuck';
      /** `deliver` (the loop's runs), `resumeDeliveries`, `deliverVoteReward` (the loop's `claimVote`) or `resumeVoteRewards`. */
      operation: Operation;
      /** The player. */
      playerName: string;
      /** The item's `deliveryId` (a purchase line's or a vote reward row's). */
      deliveryId: string;
      /** The purchase, when the item is a purchase line. */
      item?: DeliveredItem;
      /** The vote reward row, when the item is one. */
      reward?: GivenVoteReward;
      /** Failed gives so far. */
      attempts: number;
      /** What the last give threw. */
      error: unknown;
    }
  | {
      /**
       * The delivery loop cannot deliver to an online player: their runs keep ending with
       * `code` (`PRODUCT_NOT_FOUND`, `RATE_LIMIT` for long, `INVALID_PLAYER`, `UNKNOWN`,
       * `ERROR`…). Emitted once when it starts; `playerUnblocked` when a run goes through again.
       * The player is counted in `stats().blocked` meanwhile.
       */
      type: 'playerBlocked';
      /** `startDeliveryLoop`. */
      operation: Operation;
      /** The player. */
      playerName: string;
      /** The code the player's runs end with. */
      code: DeliveryCode;
      /** How many runs in a row ended so. */
      runs: number;
    }
  | {
      /** A player the loop reported as blocked was delivered to (or found nothing to deliver) again. */
      type: 'playerUnblocked';
      /** `startDeliveryLoop`. */
      operation: Operation;
      /** The player. */
      playerName: string;
    }
  | {
      /** A run of the delivery loop failed (network, service, journal, a refused key); the loop backs off and goes on. */
      type: 'loopError';
      /** `startDeliveryLoop`. */
      operation: Operation;
      /** The player whose run failed. */
      playerName: string;
      /** What failed. */
      error: unknown;
    }
  | {
      /**
       * The checkout hints of a shared journal (written by `expectCheckout`) cannot be read
       * any more (`error` set: the database down, a read not answered in 30 s, a row that is
       * not a hint), or can again (`error` undefined). Emitted once at each change, never
       * at every read; `stats().sharedHintsError` holds the current one. Deliveries go on
       * meanwhile: hinted players wait for the routine polls.
       */
      type: 'sharedHintsError';
      /** `startDeliveryLoop`. */
      operation: Operation;
      /** What failed (a {@link JournalError}), or `undefined` once the hints are read again. */
      error: unknown;
    };
