/**
 * One resolution per window (issue #34) on the real servers: staff on several nodes (a
 * pool each) and the `teamgames journal resolve` command, all at once on one window.
 * Exactly one writes; every other is told who came first; the row keeps the first.
 */
import { describe, expect, it } from 'vitest';
import { WindowAlreadyResolvedError, inspectJournal, resolveWindow, type JournalWindow } from 'teamgames-sdk';
import { EXIT } from '../../src/cli/program.js';
import { uniqueName } from '../support/databases.js';
import { runCli } from '../support/cli.js';
import { journalLine, journalWindow } from '../support/journal.js';
import { engineKits, type EngineKit } from './kits.js';

const tables = () => ({ table: uniqueName('journal'), grantedTable: uniqueName('granted') });

describe.each(engineKits())('$label', (kit: EngineKit) => {
  const flag = kit.engine === 'postgres' ? '--postgres' : '--mysql';

  it.skipIf(kit.url === undefined)('6 staff on 2 nodes resolve one window at once: exactly one writes, 5 are told who came first, the row keeps the first', async () => {
    const names = tables();
    const nodes = [kit.journal(kit.pool(4), names), kit.journal(kit.pool(4), names)];
    await nodes[0]!.append([journalWindow('window:w1'), journalLine('a')]);
    for (let round = 0; round < 3; round++) {
      const id = `window:r${round}`;
      await nodes[0]!.append([journalWindow(id)]);
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) => resolveWindow(nodes[i % 2]!, { playerName: 'Ann', windowId: id, by: `mod:${i}`, note: `note ${i}` }, { now: 1_000 + i })),
      );
      const won = results.filter((r): r is PromiseFulfilledResult<JournalWindow> => r.status === 'fulfilled');
      expect(won).toHaveLength(1);
      const first = won[0]!.value.resolution;
      for (const r of results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')) {
        expect(r.reason).toBeInstanceOf(WindowAlreadyResolvedError);
        expect(r.reason).toMatchObject({ windowId: id, playerName: 'Ann', resolution: first });
      }
      const stored = (await inspectJournal(nodes[1]!)).resolvedWindows.find((w) => w.deliveryId === id);
      expect(stored?.resolution).toEqual(first);
    }
    // Nothing else changed: the other window is open, the line pending.
    const seen = await inspectJournal(nodes[1]!);
    expect(seen.openWindows.map((w) => w.deliveryId)).toEqual(['window:w1']);
    expect(seen.pending.map((p) => p.deliveryId)).toEqual(['a']);
  });

  it.skipIf(kit.url === undefined)('the CLI and a bridge resolve at once: one writes, the CLI that came second exits 7 naming who and when', async () => {
    const names = tables();
    const bridge = kit.journal(kit.pool(3), names);
    await bridge.append([journalWindow('window:w1')]);
    const args = [flag, kit.url as string, '--table', names.table];
    const [api, ...commands] = await Promise.allSettled([
      resolveWindow(bridge, { windowId: 'window:w1', by: 'mod:bridge', note: 'from the admin command' }, { now: 5_000 }),
      runCli(['journal', 'resolve', 'Ann', '--note', 'from cli 1', '--by', 'mod:cli1', ...args], () => 6_000),
      runCli(['journal', 'resolve', '--window', 'window:w1', '--note', 'from cli 2', '--by', 'mod:cli2', ...args], () => 7_000),
    ]);
    const runs = commands.map((c) => (c as PromiseFulfilledResult<{ code: number; stdout: string; stderr: string }>).value);
    const succeeded = (api.status === 'fulfilled' ? 1 : 0) + runs.filter((r) => r.code === EXIT.OK).length;
    expect(succeeded).toBe(1);
    const [window] = (await inspectJournal(bridge)).resolvedWindows as [JournalWindow];
    const first = window.resolution!;
    // branch: the bridge may win the race or lose it; when it lost, it names the winner (the CLI's losers: below)
    if (api.status === 'rejected') expect(api.reason).toMatchObject({ code: 'WINDOW_ALREADY_RESOLVED', resolution: first });
    for (const r of runs.filter((r) => r.code !== EXIT.OK)) {
      expect(r).toMatchObject({ code: EXIT.ALREADY_RESOLVED, stdout: '' });
      expect(r.stderr).toContain(`already resolved by ${first.by} at `);
      expect(r.stderr).toContain(`: ${first.note}. Nothing was written`);
    }
  });

  it.skipIf(kit.url === undefined)('the CLI resolves by the id alone a window whose player name holds escape, bidi and newline characters, shown escaped', async () => {
    const names = tables();
    const journal = kit.journal(kit.pool(2), names);
    const name = 'Ann\u001b[2J\u202eevil\nforged';
    await journal.append([journalWindow('window:w1', name)]);
    // The URL from the environment, as the guide shows it (a password on the command line is warned about on stderr).
    const args = [`${flag}-env`, 'TEAMGAMES_TEST_URL', '--table', names.table];
    const r = await runCli(['journal', 'resolve', '--window', 'window:w1', '--note', 'checked', '--by', 'mod:alice', ...args], () => 9_000, { TEAMGAMES_TEST_URL: kit.url as string });
    expect(r).toEqual({ code: EXIT.OK, stderr: '', stdout: 'Resolved window:w1 of Ann\\u001b[2J\\u202eevil\\u000aforged (2026-01-01 00:00:00Z to 2026-01-01 00:00:10Z) by mod:alice: checked\n' });
    expect((await inspectJournal(journal)).resolvedWindows).toEqual([{ ...journalWindow('window:w1', name), state: 'resolved', resolution: { by: 'mod:alice', at: 9_000, note: 'checked' } }]);
  });
});
