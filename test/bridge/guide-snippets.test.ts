/**
 * The guide's C# and Lua calls (docs/bridge.md, "The three calls in Java, C# and Lua"),
 * taken from the guide as it is written:
 * - C#: compiled by mono's `mcs` (warnings as errors) against mono's `HttpClient` and
 *   test/bridge/guide/dotnet-json-stub.cs, the four members of `System.Text.Json` and
 *   `System.Net.Http.Json` it uses with .NET 6's signatures (mono has neither assembly);
 * - Lua: run by `lua5.4` with LuaSocket and dkjson against a real bridge (in process, the
 *   mock behind it), its address put in place of the guide's `http://127.0.0.1:8787`: join,
 *   leave and claim each answer 200 with the token, and the line it prints is the bridge's
 *   answer to the player.
 * Where a tool is missing, its test is skipped, saying what to install; with CI=true it fails
 * instead (.ci/run installs them).
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { createMockService } from 'teamgames-sdk/mock';
import { startBridge, type RunningBridge } from '../../src/bridge/bridge.js';
import { KEY, storeSeed } from '../support/fixtures.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const GUIDE = resolve(HERE, '../../docs/bridge.md');
const TOKEN = 'guide-snippets-token-0123456789abcdef0123';
const CI = process.env.CI === 'true' || process.env.CI === '1';
const exec = promisify(execFile);

/** The guide's one block of `language` in its section on the three calls. */
async function snippet(language: 'csharp' | 'lua'): Promise<string> {
  const guide = await readFile(GUIDE, 'utf8');
  const section = guide.slice(guide.indexOf('## The three calls in Java, C# and Lua'));
  const blocks = [...section.slice(0, section.indexOf('\n## ', 1)).matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))];
  expect(blocks, `one \`\`\`${language} block in the guide's section`).toHaveLength(1);
  return (blocks[0] as RegExpMatchArray)[1] as string;
}

/** Whether `command` runs and exits 0 (a probe of a tool and what it needs). */
function runs(command: string, args: string[]): boolean {
  return spawnSync(command, args, { stdio: 'ignore' }).status === 0;
}

/** Skipped (saying what to install) where a tool is missing; failed instead on CI. */
function needs(available: boolean, install: string) {
  if (available) return { it, title: '' };
  if (CI) return { it, title: ` (not installed, and CI=true may not skip it: Debian: apt-get install ${install})` };
  return { it: it.skip, title: ` (skipped: not installed here; Debian: apt-get install ${install})` };
}

describe("the guide's C# calls", () => {
  const stub = join(HERE, 'guide/dotnet-json-stub.cs');
  // The stub alone needs mcs and mono's System.Net.Http. (Never `-out:/dev/null`: mcs
  // replaces its output file, and the device with it.)
  const probe = mkdtempSync(join(tmpdir(), 'guide-csharp-probe-'));
  const mono = needs(runs('mcs', ['-target:library', '-r:System.Net.Http.dll', `-out:${join(probe, 'stub.dll')}`, stub]), 'mono-mcs libmono-system-net-http4.0-cil');
  rmSync(probe, { recursive: true, force: true });

  mono.it(`compile with mono's mcs against HttpClient and .NET's JSON signatures${mono.title}`, { timeout: 30_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'guide-csharp-'));
    await writeFile(join(dir, 'Teamgames.cs'), await snippet('csharp'));
    const compiled = await exec('mcs', ['-target:library', '-warnaserror', '-r:System.Net.Http.dll', `-out:${join(dir, 'Teamgames.dll')}`, stub, join(dir, 'Teamgames.cs')]).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`mcs refused the guide's C# snippet:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
    });
    expect(compiled.stdout).not.toMatch(/warning|error/i);
    await rm(dir, { recursive: true, force: true });
  });
});

describe("the guide's Lua calls", () => {
  const lua = needs(runs('lua5.4', ['-e', 'require("socket.http"); require("ltn12"); require("dkjson")']), 'lua5.4 lua-socket lua-dkjson');
  let bridge: RunningBridge | undefined;
  afterEach(async () => {
    await bridge?.stop();
    bridge = undefined;
  });

  lua.it(`run against a bridge: join, leave and claim answer 200; it prints the player's text${lua.title}`, { timeout: 30_000 }, async () => {
    const mock = createMockService({ seed: storeSeed });
    const dir = await mkdtemp(join(tmpdir(), 'guide-lua-'));
    const config = join(dir, 'bridge.json');
    await writeFile(config, JSON.stringify({ listen: { port: 0 }, baseUrl: 'http://127.0.0.1:9', journal: { file: 'journal.jsonl' }, give: { webhook: { url: 'http://127.0.0.1:9/x' } }, log: { level: 'silent' } }));
    bridge = await startBridge(config, { env: { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: TOKEN }, fetch: mock.fetch });

    const code = await snippet('lua');
    expect(code).toContain('"http://127.0.0.1:8787"');
    await writeFile(join(dir, 'calls.lua'), code.replace('"http://127.0.0.1:8787"', JSON.stringify(bridge.url)));
    const { stdout } = await exec('lua5.4', [join(dir, 'calls.lua')], { env: { PATH: process.env.PATH, TEAMGAMES_BRIDGE_TOKEN: TOKEN } });
    // Steve joined and left before his /claim: the bridge's answer for a player not in the game.
    expect(stdout).toBe('You must be online in game to claim your purchases. They are safe and will be delivered when you are.\n');
  });
});
