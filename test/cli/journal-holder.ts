/**
 * A bridge, for `journal-lock.test.ts`: a process that holds a FileJournal (its lock)
 * until it is killed. `node --import tsx test/cli/journal-holder.ts <path> [churn]`
 * prints `ready <pid>` once it holds the lock; with `churn` it then writes without pause
 * (appends of several entries, acknowledgements, a compaction every few dozen lines), as a
 * busy bridge does while staff read.
 */
import { FileJournal, type JournalClaimMark } from '../../src/index.js';

const [path, mode] = process.argv.slice(2);
const journal = new FileJournal(path as string, { fsync: false, compactAfter: 40 });
await journal.pending();
process.stdout.write(`ready ${process.pid}\n`);
if (mode === 'churn') {
  for (let round = 0; ; round++) {
    const marks: JournalClaimMark[] = [0, 1, 2].map((i) => ({ deliveryId: `claim:churn-${round}-${i}`, playerName: `Churn${i}`, state: 'claiming', recordedAt: round }));
    await journal.append(marks);
    await journal.acknowledge(marks.map((m) => m.deliveryId));
  }
} else {
  // The timer holds the journal: a module's top-level const that no closure uses is not kept
  // alive, and a collected journal closes its file from the garbage collector (DEP0137 on
  // this process's stderr, which the test shares) while its lock stays on disk.
  setInterval(() => journal, 1 << 30);
}
