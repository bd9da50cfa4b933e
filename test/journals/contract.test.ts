/**
 * The DeliveryJournal contract (test/support/journal-contract.ts) on the journals of the
 * main entry; the database journals run the same list in test/databases/.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe } from 'vitest';
import { FileJournal } from '../../src/journals/file/journal.js';
import { MemoryJournal } from '../../src/journals/memory.js';
import { journalContract } from '../support/journal-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'teamgames-contract-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

describe('MemoryJournal', () => {
  journalContract(() => new MemoryJournal());
});

describe('FileJournal', () => {
  journalContract(
    () => new FileJournal(join(dir, `journal-${++n}.jsonl`)),
    (journal) => (journal as FileJournal).close(),
  );
});
