/**
 * What every vote delivery on one journal object shares in this process (every client of
 * the journal): records the journal failed to take, rows whose give still runs past its
 * time, and rows given whose acknowledgement the journal has not taken yet.
 *
 * @module
 * @internal
 */
import type { DeliveryJournal, JournalEntry } from '../../journals/contract.js';

// Vote records the journal failed to take, per journal object (every client of it shares them).
const unwritten = new WeakMap<DeliveryJournal, Map<string, JournalEntry>>();
// Rows whose give outlived its time and still runs, per journal object.
const giving = new WeakMap<DeliveryJournal, Set<string>>();

// Rows given whose acknowledgement the journal has not taken yet, per journal object: never given again by this process.
const givenRows = new WeakMap<DeliveryJournal, Set<string>>();

export function givenOf(journal: DeliveryJournal): Set<string> {
  let given = givenRows.get(journal);
  if (given === undefined) givenRows.set(journal, (given = new Set()));
  return given;
}

export function givingOf(journal: DeliveryJournal): Set<string> {
  let running = giving.get(journal);
  if (running === undefined) giving.set(journal, (running = new Set()));
  return running;
}

export function memoryOf(journal: DeliveryJournal): Map<string, JournalEntry> {
  let memory = unwritten.get(journal);
  if (memory === undefined) unwritten.set(journal, (memory = new Map()));
  return memory;
}
