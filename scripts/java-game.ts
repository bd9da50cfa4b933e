/**
 * `npm run java-game`: the Java game server of examples/java-game/ delivered by
 * `teamgames bridge`, end to end, over real HTTP and real processes:
 *
 * 1. compiles the game with `javac` (JDK 17+; Debian: `apt-get install -y default-jdk-headless`);
 * 2. starts the mock over HTTP (the example store, real clock) and seeds three purchases
 *    for two players;
 * 3. starts `teamgames bridge --config bridge.json` as a child process (webhook mode, a
 *    file journal, the key and the bridge's token from the environment and a file);
 * 4. runs the game: it joins Steve and Alex over the bridge's API, types `/claim` for
 *    Steve, and receives each purchase on its webhook, given once by `deliveryId` in a
 *    ledger file fsync'd before its 2xx;
 * 5. once the game has every item, replays one delivery to its webhook with a wrong token
 *    (refused, 401) and with the right one (answered 2xx, not given again), types
 *    a vote command for Alex (his 2 points on reward 1, given as `kind: "vote"` items) and
 *    `/claim` again for Steve, and stops the game (players leave);
 * 6. starts the game again on the same ledger and replays the delivery once more (answered
 *    2xx, not given again: the record survived the restart), then stops the game and the
 *    bridge (SIGTERM).
 *
 * Checks: each purchase in the ledger exactly once, with the purchase's `invoice:<n>` id,
 * player, product and quantity; the vote rows once each, 2 units of reward 1 for Alex; every purchase `Delivered` at the mock; the game and the
 * bridge exit 0; neither the key nor the token in the bridge's output.
 * Prints one line per step and the time taken; exits 1 on any failure.
 *
 * `TEAMGAMES_BRIDGE_ENTRY` runs another build of the command (default `src/cli/index.ts`
 * through tsx; `dist/cli/index.js` after `npm run build`).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createMockService, exampleSeed } from 'teamgames-sdk/mock';

const root = fileURLToPath(new URL('..', import.meta.url));
const started = Date.now();
const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;
const step = (text: string) => console.log(`java-game: ${text}`);
const work = mkdtempSync(join(tmpdir(), 'teamgames-java-game-'));
const children: ChildProcess[] = [];

function fail(problem: string): never {
  console.error(`java-game: FAILED: ${problem}`);
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) continue;
    // The bridge runs in a process group of its own: tsx's child dies with its parent.
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  }
  rmSync(work, { recursive: true, force: true });
  process.exit(1);
}

/** A port free on loopback now (the OS's pick, released at once). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Resolves with the exit code, or fails after `ms`. */
function exitOf(child: ChildProcess, name: string, ms: number): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => fail(`${name} did not exit within ${ms} ms`), ms);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => fail(`interrupted (${signal})`));

for (const tool of ['javac', 'java']) {
  if (spawnSync(tool, ['-version'], { stdio: 'ignore' }).error) fail(`${tool} is not installed (Debian: apt-get install -y default-jdk-headless)`);
}

// 1. The game, compiled as a user would.
const compileStart = Date.now();
const classes = join(work, 'classes');
const sources = ['JavaGame.java', 'Bridge.java', 'Json.java', 'Ledger.java'].map((f) => join(root, 'examples', 'java-game', f));
const javac = spawnSync('javac', ['-Xlint:all', '-Werror', '-d', classes, ...sources], { encoding: 'utf8' });
if (javac.status !== 0) fail(`javac:\n${javac.stdout}${javac.stderr}`);
step(`compiled examples/java-game with javac in ${seconds(compileStart)}`);

// 2. The mock over HTTP, on the real clock (the bridge waits out real 10 s windows).
const mock = createMockService({ seed: exampleSeed });
const { url: mockUrl, close: closeMock } = await mock.listen({ port: 0 });
const apiKey = exampleSeed.servers[0]!.apiKey;
const bought = [
  mock.addPurchase(apiKey, { playerName: 'Steve', id: 101, quantity: 1 }),
  mock.addPurchase(apiKey, { playerName: 'Steve', id: 302, quantity: 2 }),
  mock.addPurchase(apiKey, { playerName: 'Alex', id: 102, quantity: 1 }),
];
// Alex also has 2 vote points: reward 1 (Vote Mystery Box) costs 1 point a unit.
mock.recordVote(apiKey, 'Alex', 2);
step(`mock at ${mockUrl}: ${bought.map((r) => `${r.username} ${r.productname} x${r.givequantity} (invoice ${r.invoice})`).join(', ')}; Alex has 2 vote points`);

// 3. The bridge: the config holds no secret; the key comes from the environment, the token from a file.
const token = randomBytes(32).toString('hex');
const tokenFile = join(work, 'bridge-token');
writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
const [bridgePort, webhookPort] = [await freePort(), await freePort()];
const configFile = join(work, 'bridge.json');
const config = {
  listen: { host: '127.0.0.1', port: bridgePort },
  baseUrl: mockUrl,
  journal: { file: 'teamgames-journal.jsonl' },
  loop: { pollIntervalMs: 10_000 },
  give: { webhook: { url: `http://127.0.0.1:${webhookPort}/teamgames`, timeoutMs: 5_000 } },
  log: { level: 'info' },
};
writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`);
const entry = resolve(root, process.env['TEAMGAMES_BRIDGE_ENTRY'] || join('src', 'cli', 'index.ts'));
const bridgeArgs = /\.[mc]?ts$/.test(entry) ? [join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'), entry] : [entry];
const bridgeEnv: NodeJS.ProcessEnv = { ...process.env, TEAMGAMES_API_KEY: apiKey, TEAMGAMES_BRIDGE_TOKEN_FILE: tokenFile };
delete bridgeEnv['TEAMGAMES_BRIDGE_TOKEN'];
const bridge = spawn(process.execPath, [...bridgeArgs, 'bridge', '--config', configFile], { cwd: work, env: bridgeEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
children.push(bridge);
let bridgeOutput = '';
let stopping = false;
bridge.stdout.on('data', (chunk: Buffer) => (bridgeOutput += chunk.toString()));
bridge.stderr.on('data', (chunk: Buffer) => (bridgeOutput += chunk.toString()));
bridge.once('exit', (code, signal) => {
  if (!stopping) fail(`the bridge exited early (${signal ?? `exit ${code}`}):\n${bridgeOutput}`);
});
step(`bridge started: API on http://127.0.0.1:${bridgePort}, webhook http://127.0.0.1:${webhookPort}/teamgames`);

// 4. The game.
const ledgerFile = join(work, 'given-items.tsv');
const ledgerLines = () => readFileSync(ledgerFile, 'utf8').split('\n').filter(Boolean);

/** A run of the game: its output lines, shown indented; resolves `allGiven` at "all N items given". */
function startGame(extra: string[]) {
  const game = spawn(
    'java',
    ['-cp', classes, 'JavaGame', '--bridge', `http://127.0.0.1:${bridgePort}`, '--webhook-port', String(webhookPort), '--ledger', ledgerFile, '--expect', String(bought.length), '--timeout-ms', '90000', ...extra],
    { cwd: work, env: { ...process.env, TEAMGAMES_BRIDGE_TOKEN: token }, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  children.push(game);
  const lines: string[] = [];
  let seen: () => void = () => {};
  const allGiven = new Promise<void>((resolve) => (seen = resolve));
  createInterface({ input: game.stdout! }).on('line', (line) => {
    lines.push(line);
    console.log(`  ${line}`);
    if (line.startsWith(`[game] all ${bought.length} items given`)) seen();
  });
  game.once('exit', (code) => {
    if (code !== 0) fail(`the game exited ${code}; the bridge's output:\n${bridgeOutput}`);
  });
  const timer = setTimeout(() => fail(`the game did not get its ${bought.length} items within 100 s; the bridge's output:\n${bridgeOutput}`), 100_000);
  void allGiven.then(() => clearTimeout(timer));
  /** Types the console lines, ends the input, and checks the exit and the summary line. */
  const stop = async (consoleLines: string, summary: string) => {
    game.stdin!.end(consoleLines);
    const exit = await exitOf(game, 'the game', 90_000);
    if (exit !== 0) fail(`the game exited ${exit}`);
    const stopped = lines.find((line) => line.startsWith('[game] stopped:'));
    if (!stopped?.includes(summary)) fail(`the game's summary: ${stopped ?? '(none)'}, expected ${summary}`);
  };
  return { lines, allGiven, stop };
}

/** Sends the game's first given item again, as the bridge would after a crash; resolves to the HTTP status. */
async function replay(bearer: string): Promise<{ status: number; deliveryId: string }> {
  const [deliveryId, player, productId, quantity] = ledgerLines()[0]!.split('\t') as [string, string, string, string];
  const body = JSON.stringify({ kind: 'purchase', deliveryId, player, productId, quantity: Number(quantity) });
  const before = ledgerLines().length;
  const res = await fetch(config.give.webhook.url, { method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body });
  await res.text();
  if (ledgerLines().length !== before) fail(`the ledger went from ${before} to ${ledgerLines().length} lines on a replay`);
  return { status: res.status, deliveryId };
}

const gameStart = Date.now();
const game = startGame(['--players', 'Steve,Alex', '--claim', 'Steve']);
await game.allGiven;
step(`every item given in ${seconds(gameStart)} after the game started`);

// 5. A delivery sent again: with a wrong token (refused), then the right one (2xx, not given twice).
const wrong = await replay(randomBytes(32).toString('hex'));
if (wrong.status !== 401) fail(`a webhook with a wrong token got HTTP ${wrong.status}, not 401`);
const again = await replay(token);
if (again.status !== 200) fail(`a delivery sent again got HTTP ${again.status}, not 200`);
step(`webhook: a wrong token refused (401), ${again.deliveryId} sent again answered 200 and not given twice`);
// Alex spends his vote points (the rows arrive on the webhook as kind "vote"); Steve types /claim again.
await game.stop('vote Alex 1 2\nclaim Steve\nstop\n', 'duplicates=1 refused=1 failures=0');
const gameLines = game.lines;

// 6. The game restarted on the same ledger: what it gave before is still known.
const restarted = startGame([]);
await restarted.allGiven;
const afterRestart = await replay(token);
if (afterRestart.status !== 200) fail(`a delivery sent again after the game's restart got HTTP ${afterRestart.status}, not 200`);
await restarted.stop('stop\n', 'duplicates=1 refused=0 failures=0');
step(`the game restarted on its ledger: ${afterRestart.deliveryId} sent again answered 200 and not given twice`);

// The checks: each purchase once, with its own id; delivered at the mock.
const ledger = ledgerLines().map((line) => line.split('\t'));
for (const row of bought) {
  const lines = ledger.filter(([id]) => id === `invoice:${row.invoice}`);
  if (lines.length !== 1) fail(`invoice:${row.invoice} is in the ledger ${lines.length} times`);
  const [, p, product, q] = lines[0]!;
  if (p !== row.username || product !== row.productid || Number(q) !== row.givequantity) {
    fail(`invoice:${row.invoice} given as ${p} ${product} x${q}, bought as ${row.username} ${row.productid} x${row.givequantity}`);
  }
}
const purchases = ledger.filter(([id]) => id!.startsWith('invoice:'));
if (purchases.length !== bought.length) fail(`the ledger holds ${purchases.length} purchase items for ${bought.length} purchases`);
// The vote rows: each deliveryId once, 2 units of reward 1 to Alex in all.
const votes = ledger.filter(([id]) => id!.startsWith('vote:'));
const voteUnits = votes.reduce((sum, [, p, reward, q]) => sum + (p === 'Alex' && reward === '1' ? Number(q) : Number.NaN), 0);
if (new Set(votes.map(([id]) => id)).size !== votes.length || voteUnits !== 2) fail(`the vote rows in the ledger: ${JSON.stringify(votes)}`);
if (ledger.length !== purchases.length + votes.length) fail(`the ledger holds lines that are neither purchases nor votes: ${JSON.stringify(ledger)}`);
const undelivered = mock.purchases(apiKey).filter((r) => r.deliverystatus !== 'Delivered');
if (undelivered.length > 0) fail(`undelivered at the mock: ${undelivered.map((r) => r.invoice).join(', ')}`);
if (!gameLines.some((line) => line.startsWith('[chat] to Steve: '))) fail('the game showed Steve no /claim text');
if (!gameLines.some((line) => line.startsWith('[chat] to Alex: '))) fail('the game showed Alex no /vote text');

stopping = true;
bridge.kill('SIGTERM');
const bridgeExit = await exitOf(bridge, 'the bridge', 15_000);
if (bridgeExit !== 0) fail(`the bridge exited ${bridgeExit} on SIGTERM:\n${bridgeOutput}`);
for (const [name, secret] of [['key', apiKey], ['token', token]] as const) {
  if (bridgeOutput.includes(secret)) fail(`the bridge's output holds the ${name}`);
}
await closeMock();
rmSync(work, { recursive: true, force: true });
step(`${bought.length} purchases and ${voteUnits} vote reward units given exactly once (ledger ${ledger.length} lines; two replays deduped, one after a restart; one wrong token refused); the game exited 0, the bridge exited 0 on SIGTERM`);
step(`done in ${seconds(started)}`);
