/**
 * Found by `npm run crash -- --bridge rcon` (scripts/crash/bridge.ts): at start the bridge
 * ran `resumeDeliveries` for every player the journal holds, before any player had joined,
 * so a claimed line left by a crash was given to a player who may be offline. Through the
 * webhook the game can keep it; through RCON the command runs for nobody (Minecraft answers
 * "No player was found"), the reply counts as given and the item is acknowledged: lost, with
 * no window. The loop's promise is that give is never called for a player who is offline:
 * nothing is sent at start, and the line is given once its player joins.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileJournal } from '../../src/index.js';
import { createMockService } from '../../src/mock/index.js';
import { startBridge, type RunningBridge } from '../../src/bridge/bridge.js';
import { KEY, storeSeed } from '../support/fixtures.js';
import { journalLine } from '../support/journal.js';
import { TestRconServer } from '../support/rcon-server.js';

const TOKEN = 'resume-offline-token-0123456789abcdef01234567';
const opened: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close();
});

describe('teamgames bridge at start (RCON)', () => {
  it('gives nothing from the journal to a player who has not joined, and gives it once they join', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bridge-resume-offline-'));
    const journalPath = join(dir, 'journal.jsonl');
    // What a SIGKILL between a claim and its give leaves: a claimed line of Steve.
    const journal = new FileJournal(journalPath);
    await journal.append([journalLine('invoice:1', 'Steve')]);
    await journal.close();

    const game = await TestRconServer.start();
    game.online = ['Steve'];
    opened.push(() => game.close());
    const mock = createMockService({ seed: storeSeed });
    const { url, close } = await mock.listen({ port: 0 });
    opened.push(close);
    const config = join(dir, 'bridge.json');
    await writeFile(
      config,
      JSON.stringify({
        listen: { port: 0 },
        baseUrl: url,
        journal: { file: journalPath },
        give: { rcon: { port: game.port, passwordEnv: 'RCON_PASSWORD', timeoutMs: 1_000, commands: { '*': ['give {player} whip {quantity}'] }, players: { source: 'game' } } },
        log: { level: 'silent' },
      }),
    );
    const bridge: RunningBridge = await startBridge(config, { env: { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: TOKEN, RCON_PASSWORD: game.password }, logDestination: { write: () => undefined } });
    opened.push(() => bridge.stop());

    // Steve has not joined (no /v1/join, no /v1/online): no command may have run for him.
    expect(game.commands).toEqual([]);
    const joined = await fetch(`${bridge.url}/v1/join`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ player: 'Steve' }) });
    expect(joined.status).toBe(200);
    await expect.poll(() => game.commands, { timeout: 5_000 }).toEqual(['list', 'give Steve whip 1']);
  });
});
