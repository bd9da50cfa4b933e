/**
 * The game of a crash worker on a FileJournal: its inventory, a file of JSON lines, one
 * durable line (write + fdatasync) per applied grant, a `deliveryId` already in it skipped
 * (a regrant); and the unverified windows the engine reports, each written durably to
 * its own file inside onEvent, before the engine goes on.
 *
 * @module
 */
import { closeSync, fdatasyncSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import type { DeliveredItem, StorefrontEvent } from '../../../src/index.js';
import type { InventoryLine, UnverifiedLine } from './config.js';
import { config, log, random, stats } from './context.js';

/** The deliveryIds in the inventory. */
export const seen = new Set<string>();
let invFd = -1;
let unvFd = -1;

/** Loads the applied deliveryIds; cuts a torn last line (never seen in practice: one write per line). */
export function loadInventory(): void {
  let text = '';
  try {
    text = readFileSync(config.inventoryPath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  invFd = openSync(config.inventoryPath, 'a');
  const end = text.lastIndexOf('\n') + 1;
  if (end < text.length) {
    log(`inventory: cutting a torn last line of ${text.length - end} bytes`);
    ftruncateSync(invFd, Buffer.byteLength(text.slice(0, end)));
    fdatasyncSync(invFd);
  }
  for (const line of text.slice(0, end).split('\n')) {
    if (line.trim() === '') continue;
    seen.add((JSON.parse(line) as InventoryLine).deliveryId);
  }
}

/** Grants fail (throw) at this rate; never in the drain. */
export const failRate = config.drain ? 0 : config.grantFailRate;

/** The grant of a worker on a FileJournal; `online` (--loop) is recorded on the line. */
export async function grant(item: DeliveredItem, online?: boolean): Promise<void> {
  await Promise.resolve(); // the game thread: a grant is never synchronous with the engine
  if (random() < failRate) {
    stats.grantFailures += 1;
    log(`grant-failed ${item.deliveryId} ${item.player_name}`);
    throw new Error(`the game could not grant ${item.deliveryId} (simulated)`);
  }
  if (seen.has(item.deliveryId)) {
    stats.regrants += 1;
    log(`regrant ${item.deliveryId} ${item.player_name} (skipped, already applied)`);
    return;
  }
  const line: InventoryLine = {
    deliveryId: item.deliveryId,
    player: item.player_name,
    product: item.product_id_string,
    units: item.quantity_to_grant,
    run: config.run,
    pid: process.pid,
    ...(online === undefined ? {} : { online }),
  };
  writeSync(invFd, `${JSON.stringify(line)}\n`);
  fdatasyncSync(invFd);
  seen.add(item.deliveryId);
  stats.applied += 1;
}

/** Where the unverified windows are written: opened at start, by every worker. */
export function openUnverified(): void {
  unvFd = openSync(config.unverifiedPath, 'a');
}

/** The client's onEvent: unverified windows written durably, journal errors logged. */
export function onEvent(event: StorefrontEvent): void {
  if (event.type === 'unverified') {
    const line: UnverifiedLine = { ...event.window, operation: event.operation, run: config.run, pid: process.pid };
    writeSync(unvFd, `${JSON.stringify(line)}\n`);
    fdatasyncSync(unvFd);
    log(`event unverified ${JSON.stringify(event.window)} (${event.operation})`);
  } else if (event.type === 'journalError') {
    log(`event journalError ${event.playerName}: ${event.error.message}`);
  } else if (event.type === 'loopError') {
    log(`event loopError ${event.playerName}: ${event.error instanceof Error ? event.error.message : String(event.error)}`);
  }
}

/** At the end of the drain. */
export function closeFiles(): void {
  if (invFd >= 0) closeSync(invFd);
  closeSync(unvFd);
}
