/**
 * `teamgames bridge` on a PostgreSQL or MariaDB journal (several game servers on one key):
 * the URL from the environment variable the config names, the tables created on first use,
 * the journal read by the status route, the banner showing the URL with its password
 * masked, and no log line holding the password; a row of the checkout hints that is not a
 * hint shown on /v1/health and logged once, never echoed.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createMockService } from 'teamgames-sdk/mock';
import type { RunningBridge } from '../../src/bridge/bridge.js';
import { runBridgeCommand } from '../../src/bridge/command.js';
import { stream } from '../support/cli.js';
import { ADDED_PASSWORD, databaseUrl, uniqueName, urlWithPassword } from '../support/databases.js';
import { KEY, storeSeed } from '../support/fixtures.js';
import { engineKits } from '../databases/kits.js';

const TOKEN = 'db-bridge-token-0123456789abcdef0123456789';

describe.each(['postgres', 'mysql'] as const)('teamgames bridge on a %s journal', (engine) => {
  const url = urlWithPassword(databaseUrl(engine));

  /** `teamgames bridge` on the engine's journal (`table`), the store a mock; stop() ends it (exit 0) and gives its whole output. */
  async function startOn(table: string, more: Record<string, unknown> = {}): Promise<{ started: RunningBridge; stop: () => Promise<string> }> {
    const mock = createMockService({ seed: storeSeed });
    const dir = await mkdtemp(join(tmpdir(), 'bridge-db-'));
    const config = join(dir, 'bridge.json');
    await writeFile(config, JSON.stringify({ listen: { port: 0 }, baseUrl: 'https://mock.test', journal: { [engine]: { urlEnv: 'GAME_DB', table } }, give: { webhook: { url: 'http://127.0.0.1:9/x' } }, ...more }));
    let out = '';
    let stop!: () => void;
    let started: RunningBridge | undefined;
    const io = { stdout: stream(() => {}), stderr: stream((t) => (out += t)), interactive: false, confirm: async () => false };
    const done = runBridgeCommand(['--config', config], io, { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: TOKEN, GAME_DB: url as string }, {
      stopSignal: new Promise<void>((ok) => (stop = ok)),
      onStarted: (b) => (started = b),
      fetch: mock.fetch,
      logDestination: { write: (line: string) => void (out += line) },
    });
    await expect.poll(() => started ?? out.match(/teamgames bridge: .*/)?.[0], { timeout: 20_000 }).toBeDefined();
    expect(started, out).toBeDefined();
    return {
      started: started as RunningBridge,
      stop: async () => {
        stop();
        expect(await done).toBe(0);
        return out;
      },
    };
  }

  it.skipIf(url === undefined)('opens the journal from the env var the config names, reads it, and never logs the password', async () => {
    const bridge = await startOn(uniqueName('bridge'), { log: { level: 'debug' } });
    const status = await fetch(`${bridge.started.url}/v1/players/Steve/status`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(status.status).toBe(200);
    const view = (await status.json()) as Record<string, unknown>;
    expect(view).toMatchObject({ playerName: 'Steve', pending: [], openWindows: [] });
    expect(view.journalError).toBeUndefined();
    const out = await bridge.stop();
    const { username, password } = new URL(url as string);
    expect(out).toContain(`journal ${engine} `);
    // (A throwaway server's password may be a word the log holds anyway, such as "teamgames": the URL's form is what must not appear.)
    expect(password).not.toBe('');
    expect(out).not.toContain(`${username}:${password}@`);
    expect(out).toContain(`:***@`);
    // branch: the password the test added is a word no log holds otherwise; the server's own may be
    if (password === ADDED_PASSWORD) expect(out).not.toContain(password);
  });

  const kit = engineKits().find((k) => k.engine === engine)!;
  /** A row of the default hints table no SDK would write: its name holds the key and the password, and a line break. */
  const hostile = `${KEY}\n${url === undefined ? '' : new URL(url).password}`;
  afterAll(async () => {
    if (url !== undefined) await kit.query(`DELETE FROM teamgames_hints WHERE player_name = ${engine === 'postgres' ? '$1' : '?'}`, [hostile]);
  });

  it.skipIf(url === undefined)("shows a row of the checkout hints that is not a hint on /v1/health and in one log line, never echoing it; the other hints are held", async () => {
    const table = uniqueName('bridge');
    // The tables exist (the default hints table of every bridge on this server), with the bad row and a good hint in.
    const shop = kit.journal(kit.pool(2), { table });
    await shop.createTables();
    await kit.query(
      engine === 'postgres'
        ? `INSERT INTO teamgames_hints (player_name, expires_at) VALUES ($1, now() + interval '1 minute')`
        : `INSERT INTO teamgames_hints (player_name, created_ms, expires_ms) VALUES (?, CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED), CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) + 60000)`,
      [hostile],
    );
    await shop.addCheckoutHint(uniqueName('Shopper'), { expiresInMs: 60_000 });
    const bridge = await startOn(table);
    const health = async () => (await (await fetch(`${bridge.started.url}/v1/health`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as Record<string, unknown>;
    // The loop reads the hints at its start: the bad row is reported, the good hint held.
    await expect.poll(async () => (await health())['sharedHintsError'], { timeout: 10_000 }).toBeDefined();
    const view = await health();
    expect(view['sharedHintsError']).toMatchObject({ name: 'JournalError', message: expect.stringMatching(/a row of the checkout hints is not a hint \(its player name is not a player name\); it was changed outside the SDK/) });
    expect(view['hints']).toBeGreaterThanOrEqual(1);
    expect(view['ok']).toBe(true);
    const out = await bridge.stop();
    const reports = out.split('\n').filter((line) => line.includes("checkout hints (the shops' expectCheckout) cannot be read"));
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatch(/not a hint/);
    // Neither the answer nor the log echoes the row: not the key nor the password it holds.
    for (const text of [JSON.stringify(view), out]) expect(text).not.toContain(KEY);
    // branch: the password the test added is a word no log holds otherwise; the server's own may be
    if (new URL(url as string).password === ADDED_PASSWORD) expect(out).not.toContain(ADDED_PASSWORD);
  });
});
