/**
 * A vote reward the game keeps refusing is marked for staff, as a purchase is (#45 point 1:
 * one failure policy): through a webhook bridge with `staffAfterAttempts: 2`, a vote row
 * refused three times carries `stuck` in the journal (`teamgames journal pending` shows
 * "(stuck)", `/v1/players/…/status` shows it), one `stuck` event is logged, and the log says
 * "marked for staff" only once the row is.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileJournal, inspectJournal } from '../../src/index.js';
import { createMockService } from '../../src/mock/index.js';
import { startBridge, type RunningBridge } from '../../src/bridge/bridge.js';
import { pendingText } from '../../src/cli/journal-print.js';
import { KEY, storeSeed } from '../support/fixtures.js';

const TOKEN = 'vote-stuck-bridge-token-0123456789abcdef0123';
const GAME = 'http://127.0.0.1:9/teamgames';
const mock = createMockService({ seed: storeSeed });
const running: RunningBridge[] = [];
afterEach(async () => {
  for (const bridge of running.splice(0).reverse()) await bridge.stop();
  mock.reset();
});

/** The store's calls go to the mock; the game's webhook refuses every vote reward (HTTP 500) and takes purchases. */
const fetcher: typeof globalThis.fetch = async (input, init) => {
  if (!String(input instanceof Request ? input.url : input).startsWith(GAME)) return mock.fetch(input, init);
  return (JSON.parse(String(init?.body)) as { kind: string }).kind === 'vote' ? new Response('busy', { status: 500 }) : new Response('{"ok":true}');
};

const post = (bridge: RunningBridge, path: string, body: unknown) =>
  fetch(`${bridge.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (r) => (await r.json()) as Record<string, unknown>);

describe('a webhook bridge whose game keeps refusing a vote reward', () => {
  it('marks the vote row for staff after staffAfterAttempts: the stuck event, "(stuck)" in journal pending, the status; "marked for staff" logged only then', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bridge-vote-stuck-'));
    const journalPath = join(dir, 'journal.jsonl');
    const config = join(dir, 'bridge.json');
    await writeFile(config, JSON.stringify({ listen: { port: 0 }, journal: { file: journalPath }, loop: { staffAfterAttempts: 2 }, give: { webhook: { url: GAME } }, log: { level: 'info' } }));
    const lines: Array<Record<string, unknown>> = [];
    const bridge = await startBridge(config, { env: { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: TOKEN }, fetch: fetcher, logDestination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
    running.push(bridge);
    mock.recordVote(KEY, 'Steve', 3);
    await post(bridge, '/v1/join', { player: 'Steve' });
    const marked = () => lines.filter((l) => String(l['msg']).includes('marked for staff'));

    // The first claim's give is refused (and, the join's run coming after it, its resume of the
    // player's vote rows too); the next claims (a reward the store does not have) give the row
    // again first: refused each time.
    expect(await post(bridge, '/v1/vote', { player: 'Steve', reward: 1, amount: 1 })).toMatchObject({ code: 'PARTIAL', pending: 1 });
    await post(bridge, '/v1/vote', { player: 'Steve', reward: 999, amount: 1 });
    await post(bridge, '/v1/vote', { player: 'Steve', reward: 999, amount: 1 });
    // "marked for staff" once, when it was: after the second refusal, never before.
    expect(marked()).toEqual([expect.objectContaining({ level: 'error', player: 'Steve', attempts: 2, deliveryId: expect.stringMatching(/^vote:/) })]);
    const refusals = lines.slice(0, lines.indexOf(marked()[0] as Record<string, unknown>)).filter((l) => l['msg'] === 'vote reward not given; it stays pending');
    expect(refusals).toHaveLength(2);

    const status = (await (await fetch(`${bridge.url}/v1/players/Steve/status`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { pending: Array<Record<string, unknown>> };
    expect(status.pending).toEqual([expect.objectContaining({ state: 'voteClaimed', lastError: expect.objectContaining({ stuck: true }) })]);
    await bridge.stop();

    const journal = new FileJournal(journalPath);
    const text = pendingText(await inspectJournal(journal), (_, t) => t);
    await journal.close();
    expect(text).toMatch(/vote reward 1 .*\d \(stuck\)/);
  });
});
