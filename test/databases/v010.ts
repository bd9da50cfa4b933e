/**
 * What 0.1.0 left behind, for the upgrade tests (issue #24 point 4): its SQL (taken from
 * `git show 074b864:src/journals/postgres/schema.ts` and `…/mysql/schema.ts`, inlined so that a
 * later change of today's schema cannot change what "0.1.0" means here), its file format
 * (one-entry `put` lines and `ack` lines), and the entries a 0.1.0 bridge stopped with:
 * a claimed line not granted yet, an intent whose claim answer was lost (the service
 * delivered it), and a claim mark of a fast claim whose lines were never journaled.
 */
import { MemoryJournal, type StorefrontClient } from 'teamgames-sdk';
import type { Engine } from '../support/throwaway-databases.js';
import { KEY, type inProcessStore } from '../support/reliability.js';

/** The 0.1.0 DDL of the journal's table and the dedupe table, one statement each. */
export function v010Schema(engine: Engine, table: string, grantedTable: string): string[] {
  if (engine === 'postgres') {
    return [
      `CREATE TABLE IF NOT EXISTS "${table}" (
  seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, -- insertion order: pending() is oldest first
  delivery_id TEXT NOT NULL UNIQUE,
  player_name TEXT NOT NULL,
  entry       TEXT NOT NULL                                    -- the JournalEntry as JSON
)`,
      `CREATE INDEX IF NOT EXISTS "${table}_player_idx" ON "${table}" (player_name, seq)`,
      `CREATE TABLE IF NOT EXISTS "${grantedTable}" (
  delivery_id TEXT PRIMARY KEY,                                -- a deliveryId the game applied
  granted_at  TIMESTAMPTZ NOT NULL DEFAULT now()
)`,
    ];
  }
  return [
    `CREATE TABLE IF NOT EXISTS \`${table}\` (
  seq         BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,      -- insertion order: pending() is oldest first
  delivery_id VARBINARY(512) NOT NULL,
  player_name VARBINARY(320) NOT NULL,
  entry       LONGTEXT CHARACTER SET utf8mb4 NOT NULL,      -- the JournalEntry as JSON
  PRIMARY KEY (seq),
  UNIQUE KEY delivery_id (delivery_id),
  KEY player_seq (player_name, seq)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`,
    `CREATE TABLE IF NOT EXISTS \`${grantedTable}\` (
  delivery_id VARBINARY(512) NOT NULL,  -- a deliveryId the game applied
  granted_at  TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (delivery_id)
) ENGINE=InnoDB`,
  ];
}

/** How 0.1.0 inserted a row (its append, one entry). */
export function v010Insert(engine: Engine, table: string): string {
  return engine === 'postgres' ? `INSERT INTO "${table}" (delivery_id, player_name, entry) VALUES ($1, $2, $3)` : `INSERT INTO \`${table}\` (delivery_id, player_name, entry) VALUES (?, ?, ?)`;
}

/** A 0.1.0 entry: plain JSON, none of today's fields (no windows, no lastError, no settled). */
export type V010Entry = Record<string, unknown> & { deliveryId: string; playerName: string; state: 'claimed' | 'intended' | 'claiming' };

/** What a 0.1.0 bridge left, and what today's code must make of it. */
export interface V010State {
  /** Oldest first, as 0.1.0 wrote them. */
  entries: V010Entry[];
  /** The lines to grant from the journal: Ann's claimed line and Bob's lost claim. */
  toGrant: string[];
  /** The players whose windows today's code must find: Bob (lostClaim), Cy (claimMark). */
  windows: Array<{ playerName: string; cause: 'lostClaim' | 'claimMark' }>;
}

/**
 * Makes the service's side of what a 0.1.0 bridge left (purchases, claims it sent) on
 * the mock, and returns the entries its journal held. `node` is set on the intent (a
 * shared database's 0.1.0 node), or left out (a file).
 */
export async function v010State(store: ReturnType<typeof inProcessStore>, node?: string): Promise<V010State> {
  const { mock, client } = store;
  const plain = (): StorefrontClient => client(new MemoryJournal());
  // Ann: a fast claim's line, journaled; the process stopped before the grant.
  mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 2 });
  const ann = await plain().claim('Ann');
  const mark = `claim:${globalThis.crypto.randomUUID()}`;
  const annLine: V010Entry = { deliveryId: `${mark}:0`, playerName: 'Ann', state: 'claimed', item: ann.claims[0], recordedAt: mock.clock.now() };
  // Bob: previewed, intent journaled, claim sent, its answer lost: the service delivered it.
  mock.addPurchase(KEY, { playerName: 'Bob', id: 3, quantity: 1 });
  const previewedAt = mock.clock.now();
  const preview = await plain().previewClaim('Bob', { includeRawTransactions: true });
  const invoice = String(preview.rawTransactions?.[0]?.['invoice']);
  const bobIntent: V010Entry = {
    deliveryId: `invoice:${invoice}`,
    playerName: 'Bob',
    state: 'intended',
    item: preview.claims[0],
    invoice,
    recordedAt: mock.clock.now(),
    previewedAt,
    ...(node === undefined ? {} : { node }),
  };
  mock.clock.advance(10_000);
  await plain().claim('Bob');
  // Cy: a fast claim's mark; the claim delivered, the process died before its lines were journaled.
  const cyMark: V010Entry = { deliveryId: `claim:${globalThis.crypto.randomUUID()}`, playerName: 'Cy', state: 'claiming', recordedAt: mock.clock.now() };
  mock.addPurchase(KEY, { playerName: 'Cy', id: 2, quantity: 1 });
  await plain().claim('Cy');
  mock.clock.advance(10_000);
  return {
    entries: [annLine, bobIntent, cyMark],
    toGrant: [annLine.deliveryId, bobIntent.deliveryId],
    windows: [
      { playerName: 'Bob', cause: 'lostClaim' },
      { playerName: 'Cy', cause: 'claimMark' },
    ],
  };
}

/**
 * The 0.1.0 file of those entries: one `put` line per entry (its only form), and a line
 * already granted (`put`, then `ack`), as 0.1.0 wrote them.
 */
export function v010File(entries: readonly V010Entry[]): string {
  const done: V010Entry = { deliveryId: 'claim:00000000-0000-4000-8000-000000000000:0', playerName: 'Dee', state: 'claimed', item: entries[0]?.['item'], recordedAt: 1 };
  const lines = [{ op: 'put', entry: done }, ...entries.map((entry) => ({ op: 'put', entry })), { op: 'ack', ids: [done.deliveryId] }];
  return lines.map((line) => `${JSON.stringify(line)}\n`).join('');
}
