/**
 * The first hour of a new user, checked the way the user does it: a scratch project made
 * with `npm init -y` (npm writes `"type": "commonjs"`), the packed tarball and `tsx`
 * installed as the guides say, the packed `teamgames-mock` running, and every program of
 * the README and the guides saved under the name the text gives and run with the commands
 * the text gives.
 *
 * The documents mark what to run with HTML comments (invisible on GitHub, npm and the
 * docs site):
 *
 * - `<!-- run: quick-start.mts -->` before a ```ts block or an `{@includeCode ../x.ts}`
 *   line: the program, saved as `quick-start.mts` in the project;
 * - `<!-- sh: expect <text> -->` before a ```sh block: the block, run as written by bash
 *   in the project (the guides' `http://127.0.0.1:4010` is the mock's actual URL), must
 *   exit 0 and print `<text>`; the blocks of one document share a terminal (what one
 *   exports, the next has). The mock's clock moves 10 s before each block (the
 *   service's claim window), and its state is reset before each document.
 *
 * Every saved program must be run by a marked block of its document (`npx tsx <name>`).
 *
 * Run after `npm run build`: `npx tsx scripts/check-first-hour.ts`. Exits 1 naming the
 * document and line of the first snippet that fails.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const SANDBOX_URL = 'http://127.0.0.1:4010';
const LIMIT_MS = 120_000;

interface Step {
  doc: string;
  line: number;
  kind: 'save' | 'sh';
  /** save: the file name; sh: the text the output must contain ('' for none). */
  arg: string;
  body: string;
}

/** The marked snippets of one document, in order. */
function stepsOf(doc: string): Step[] {
  const lines = readFileSync(join(root, doc), 'utf8').split('\n');
  const steps: Step[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const marker = /^<!-- (run|sh)(?::\s*(.*?))?\s*-->$/.exec(lines[i]!.trim());
    if (!marker) continue;
    const [, kind, arg = ''] = marker;
    const at = `${doc}:${i + 1}`;
    const next = lines[i + 1] ?? '';
    const include = /^\{@includeCode (\S+?)\}$/.exec(next.trim());
    if (kind === 'run' && include) {
      if (include[1]!.includes('#')) throw new Error(`${at}: a program must be a whole file, not the region ${include[1]}`);
      steps.push({ doc, line: i + 1, kind: 'save', arg, body: readFileSync(join(root, dirname(doc), include[1]!), 'utf8') });
      continue;
    }
    const fence = kind === 'run' ? 'ts' : 'sh';
    if (next.trim() !== `\`\`\`${fence}`) throw new Error(`${at}: the marker must sit right before a \`\`\`${fence} block`);
    const end = lines.findIndex((l, j) => j > i + 1 && l.trim() === '```');
    if (end < 0) throw new Error(`${at}: the block never ends`);
    const body = `${lines.slice(i + 2, end).join('\n')}\n`;
    steps.push({ doc, line: i + 1, kind: kind === 'run' ? 'save' : 'sh', arg: kind === 'sh' ? arg.replace(/^expect\s+/, '') : arg, body });
    i = end;
  }
  for (const save of steps.filter((s) => s.kind === 'save')) {
    if (!/^[\w.-]+\.(mts|ts|mjs|js|cjs|cts)$/.test(save.arg)) throw new Error(`${doc}:${save.line}: bad file name '${save.arg}'`);
    if (!steps.some((s) => s.kind === 'sh' && s.body.includes(`npx tsx ${save.arg}`))) {
      throw new Error(`${doc}:${save.line}: ${save.arg} is saved but no marked \`\`\`sh block of ${doc} runs it (npx tsx ${save.arg})`);
    }
  }
  return steps;
}

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 600_000 });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')}: exit ${result.status}\n${result.stdout}${result.stderr}`);
  return result.stdout;
}

async function startMock(project: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(join(project, 'node_modules', '.bin', 'teamgames-mock'), ['--port', '0'], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`teamgames-mock printed no URL in 30 s: ${output}`)), 30_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const found = /http:\/\/127\.0\.0\.1:\d+/.exec(output);
      if (found) {
        clearTimeout(timer);
        resolve(found[0]);
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => reject(new Error(`teamgames-mock exited ${code}: ${output}`)));
  });
  return { url, child };
}

/** A sandbox admin call, on a connection of its own (a kept-alive one may be closed by the mock meanwhile). */
async function admin(url: string, path: string, body: unknown): Promise<void> {
  const status = await new Promise<number | undefined>((resolve, reject) => {
    const req = request(`${url}/__mock/${path}`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
  if (status !== 200) throw new Error(`mock admin ${path}: HTTP ${status}`);
}

async function main(): Promise<void> {
  const documents = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
  const plan = documents.map((doc) => ({ doc, steps: stepsOf(doc) })).filter((d) => d.steps.length > 0);
  const programs = plan.flatMap((d) => d.steps).filter((s) => s.kind === 'save').length;
  if (programs === 0) throw new Error('no <!-- run: … --> marker in README.md or docs/*.md');

  const work = mkdtempSync(join(tmpdir(), 'first-hour-'));
  let mock: ChildProcess | undefined;
  try {
    const tarball = run('npm', ['pack', '--silent', '--pack-destination', work], root).trim().split('\n').at(-1)!;
    const project = join(work, 'project');
    mkdirSync(project);
    run('npm', ['init', '-y'], project);
    const type = (JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { type?: string }).type ?? 'commonjs';
    const quiet = ['--no-audit', '--no-fund', '--prefer-offline', '--silent'];
    // The guides' install: `npm install teamgames-sdk` (here the packed tarball), then tsx.
    run('npm', ['install', ...quiet, join(work, tarball)], project);
    run('npm', ['install', ...quiet, '--save-dev', 'tsx'], project);
    console.log(`first hour: a project from npm init -y ("type": "${type}") with ${tarball} and tsx`);

    const started = await startMock(project);
    mock = started.child;
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
    delete env['TEAMGAMES_API_KEY'];
    delete env['TEAMGAMES_BASE_URL'];

    let blocks = 0;
    const shell = join(work, 'terminal.sh');
    for (const { doc, steps } of plan) {
      await admin(started.url, 'reset', {});
      writeFileSync(shell, '');
      for (const step of steps) {
        const at = `${doc}:${step.line}`;
        if (step.kind === 'save') {
          writeFileSync(join(project, step.arg), step.body);
          continue;
        }
        // Time passes while a reader follows the guide: at least the service's 10 s claim window.
        await admin(started.url, 'clock/advance', { ms: 10_000 });
        // One terminal per document: what a block exports, the next block still has.
        const script = `. ${shell}\n${step.body.replaceAll(SANDBOX_URL, started.url)}\nexport -p > ${shell}\n`;
        const result = spawnSync('bash', ['-euo', 'pipefail', '-c', script], { cwd: project, env, encoding: 'utf8', timeout: LIMIT_MS });
        const output = `${result.stdout}${result.stderr}`;
        if (result.status !== 0) throw new Error(`${at}: the block exited ${result.status ?? result.signal}:\n${step.body}${output}`);
        if (!result.stdout.includes(step.arg)) throw new Error(`${at}: the block did not print '${step.arg}':\n${step.body}${output}`);
        blocks += 1;
        console.log(`first hour: ${at} ok (${step.body.trim().split('\n').at(-1)})`);
      }
    }
    console.log(`first hour: ${programs} programs saved and ${blocks} command blocks run as written, in ${plan.length} documents`);
  } finally {
    mock?.kill('SIGINT');
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(`first hour: ${error instanceof Error ? error.message : String(error)}`, (error as { cause?: unknown }).cause ?? '');
  process.exitCode = 1;
});
