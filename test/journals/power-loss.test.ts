/**
 * The file journal through power cuts (issue #27 point 3): what a FileJournal promised
 * before the power went is still there after it, and a delivery interrupted by a power
 * cut at any step loses nothing silently and grants nothing twice. The campaign itself is
 * `npm run crash -- --power-loss` (every step of a dozen runs); here a sample, and proof
 * that it catches each safeguard removed (a journal without its fdatasync, without its
 * directory sync, or writing an append of several entries as several lines).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileJournal, type JournalLine } from '../../src/index.js';
import { campaign, scenarios, type Scenario } from '../support/power-loss-campaign.js';
import { choices, cutState, materialize, record, seeded, walk, type Recording } from '../support/power-loss.js';

let root: string;
let recording: Recording | undefined;
beforeEach(() => {
  // tmpfs when there is one: the simulation's fsyncs then cost nothing (the disk is simulated).
  root = existsSync('/dev/shm') ? mkdtempSync('/dev/shm/power-loss-test-') : mkdtempSync(join(tmpdir(), 'power-loss-test-'));
});
afterEach(async () => {
  await recording?.uninstall();
  recording = undefined;
  rmSync(root, { recursive: true, force: true });
});

const line = (id: string): JournalLine => ({
  deliveryId: id,
  playerName: 'Ann',
  state: 'claimed',
  item: { player_name: 'Ann', product_id: 1, product_id_string: '42', product_name: 'Whip', product_price: 10, quantity_to_grant: 1, quantity_purchased: 1, product_amount: 1, amount_purchased: 1 },
  recordedAt: 0,
});

/** Runs `work` on a FileJournal in a fresh directory under the recorder; returns the directory and the recording. */
async function recorded(work: (journal: FileJournal) => Promise<void>, options: { compactAfter?: number } = {}): Promise<{ dir: string; rec: Recording }> {
  const dir = join(root, 'live');
  mkdirSync(dir);
  const rec = record();
  recording = rec;
  const journal = new FileJournal(join(dir, 'journal.jsonl'), options);
  await work(journal);
  await journal.close();
  await rec.uninstall();
  return { dir, rec };
}

/** What a new FileJournal finds after the power went at step k, keeping only what was synced. */
async function afterPowerCut(dir: string, rec: Recording, k = rec.steps.length): Promise<string[]> {
  const walked = walk(rec.steps, k);
  const [onlySynced] = choices(walked, seeded(1), 0);
  const cut = join(root, `cut-${k}`);
  materialize(cutState(walked, onlySynced!), dir, cut);
  await rec.uninstall();
  const journal = new FileJournal(join(cut, 'journal.jsonl'));
  try {
    return (await journal.pending()).map((e) => e.deliveryId);
  } finally {
    await journal.close();
  }
}

describe('a FileJournal after a power cut', () => {
  it('still holds every line whose append returned, and drops every line whose acknowledge returned', async () => {
    const { dir, rec } = await recorded(async (journal) => {
      await journal.append([line('a'), line('b')]);
      await journal.append([line('c')]);
      await journal.acknowledge(['b']);
    });
    expect(await afterPowerCut(dir, rec)).toEqual(['a', 'c']);
  });

  it('holds all the entries of one append or none of them, wherever the power cut tears the write', async () => {
    const { dir, rec } = await recorded(async (journal) => {
      await journal.append([line('a')]);
      await journal.append([line('b'), line('c'), line('d')]);
    });
    const write = rec.steps.map((s) => s.kind).lastIndexOf('write');
    const walked = walk(rec.steps, write + 1); // the write landed in the page cache, not yet synced
    const states = choices(walked, seeded(2), 20);
    expect(states.length).toBeGreaterThan(5);
    const seen = new Set<string>();
    for (const [i, choice] of states.entries()) {
      const cut = join(root, `cut-${i}`);
      materialize(cutState(walked, choice), dir, cut);
      const journal = new FileJournal(join(cut, 'journal.jsonl'));
      seen.add((await journal.pending()).map((e) => e.deliveryId).join(','));
      await journal.close();
    }
    expect([...seen].sort()).toEqual(['a', 'a,b,c,d']);
  });

  it('keeps a compacted journal: before the directory sync the old file is still under its name, after it the new one', async () => {
    const { dir, rec } = await recorded(async (journal) => {
      for (const id of ['a', 'b', 'c']) await journal.append([line(id)]);
      await journal.acknowledge(['a', 'b']); // 4 lines, 1 entry: compacted
    }, { compactAfter: 2 });
    const rename = rec.steps.findIndex((s) => s.kind === 'rename');
    expect(rename).toBeGreaterThan(0);
    expect(rec.steps[rename + 1]?.kind).toBe('dirsync');
    const names = (k: number) => {
      const walked = walk(rec.steps, k);
      return [...cutState(walked, choices(walked, seeded(1), 0)[0]!).values()].flatMap((files) => [...files].map(([name, data]) => `${name}: ${data.toString().split('\n').length - 1} lines`));
    };
    // Cut between the rename and the directory sync: the journal's name still shows the old file, whole.
    expect(names(rename + 1)).toContain('journal.jsonl: 4 lines');
    expect(names(rename + 2)).toContain('journal.jsonl: 1 lines');
    expect(await afterPowerCut(dir, rec, rename + 1)).toEqual(['c']);
  });

  it('has no journal at all when the power goes before the directory of a new journal was synced', async () => {
    const { dir, rec } = await recorded(async (journal) => {
      await journal.pending();
    });
    const create = rec.steps.findIndex((s) => s.kind === 'create' && s.path.endsWith('journal.jsonl'));
    const dirsync = rec.steps.findIndex((s, i) => i > create && s.kind === 'dirsync');
    const walked = walk(rec.steps, dirsync);
    expect([...cutState(walked, choices(walked, seeded(1), 0)[0]!).values()].flatMap((names) => [...names.keys()])).not.toContain('journal.jsonl');
    const after = walk(rec.steps, dirsync + 1);
    expect([...cutState(after, choices(after, seeded(1), 0)[0]!).values()].flatMap((names) => [...names.keys()])).toContain('journal.jsonl');
    expect(await afterPowerCut(dir, rec, dirsync)).toEqual([]);
  });
});

describe('deliveries through power cuts (the campaign, sampled)', () => {
  // Both modes, a purchase completed during the 10 s wait, lost claim answers, a grant that
  // throws once, compactions (compactAfter 3): every few steps of four runs, each cut state.
  it('after a power cut at any step, nothing paid is lost silently, nothing is granted twice, nothing acknowledged is gone', async () => {
    const runs = scenarios(3);
    const result = await campaign({ runs: [runs[0] as Scenario, runs[1] as Scenario, runs[4] as Scenario, runs[7] as Scenario], states: 200, randomChoices: 1, seed: 3, root });
    expect(result.states).toBeGreaterThanOrEqual(150);
    expect(result.examples).toEqual([]);
    expect(result).toMatchObject({ silent: 0, duplicated: 0, forgotten: 0, errors: 0 });
  }, 30_000);
});

/** A small run that exposes each removed safeguard: two items claimed at once (the second bought during the 10 s wait in exactly-once mode). */
const twoAtOnce = (mode: Scenario['mode']): Scenario => ({
  name: `${mode}-two-at-once`,
  mode,
  seed: 1,
  players: ['Ann'],
  initial: mode === 'fast' ? [[0, 1], [0, 2]] : [[0, 1]],
  duringWait: mode === 'exactlyOnce',
  later: [],
  drops: [],
  grantFailsAt: 0,
  compactAfter: 1000,
  rounds: 1,
});
const small = [twoAtOnce('fast'), twoAtOnce('exactlyOnce')];

describe('the campaign has teeth: each safeguard removed shows up as a silent loss', () => {
  it('two items claimed at once, the journal intact: after a power cut at every step, nothing is lost silently', async () => {
    const result = await campaign({ runs: small, randomChoices: 0, root });
    expect(result.states).toBeGreaterThan(40);
    expect(result).toMatchObject({ silent: 0, duplicated: 0, forgotten: 0, errors: 0 });
  }, 30_000);

  it.each([
    ['sync', 'the fdatasync after a journal write'],
    ['dirsync', 'the directory sync of a new journal and of a compaction'],
    ['batch', 'one line per append: an append of several entries written as several lines, as 0.1.0 did'],
  ] as const)('without %s (%s): a power cut loses a paid item silently', async (breakage, _what) => {
    const result = await campaign({ runs: small, breakage, randomChoices: 0, root });
    expect(result.silent).toBeGreaterThan(0);
  }, 30_000);
});
