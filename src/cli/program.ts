/**
 * The `teamgames` support command: answers "I paid but got nothing" from a terminal.
 * Everything here is injectable (argv, env, output, the confirmation prompt), so the tests
 * run the real program against the mock without spawning a process.
 */
import {
  ClaimOutcomeUnknownError,
  InvalidInputError,
  StorefrontClient,
  VERSION,
  isStorefrontError,
  type ClaimResult,
  type Product,
  type StorefrontClientOptions,
} from '../index.js';
import { parseArgs } from 'node:util';
import { COMMON_EXIT, UsageError, parseCommandLine } from '../common/command-line.js';
import type { JournalDeps } from '../host/databases.js';
import type { TeamgamesEnv, TeamgamesIo } from '../host/io.js';
import { NO_SECRET, keyRedactor, type Redact } from '../host/redact.js';
import { apiKeyOf } from '../host/secrets.js';
import { EXIT, answer, jsonText, table } from './shared.js';
import { writeFailure, writeText, type OutputStream } from '../common/output.js';
import { printable } from '../common/printable.js';
import { ProgressLine, painter, type Paint, type TerminalEnv, type Tone } from './terminal.js';

/** Extra client options for tests (a short timeout, a custom fetch). */
export type ClientOverrides = Omit<StorefrontClientOptions, 'apiKey' | 'baseUrl'>;

export { EXIT, answer, table } from './shared.js';
export type { JournalDeps } from '../host/databases.js';
export type { TeamgamesEnv, TeamgamesIo } from '../host/io.js';

/** The text of `teamgames --help`. */
export const USAGE = `Usage: teamgames <command> [options]

Support commands for a TeamGames store: what is on sale, what a player is owed,
and delivering or spending it by hand.

Commands:
  catalog [--category <id>]            products on sale now, with sale prices
  preview <player> [--raw]             what a claim would deliver now (changes nothing);
                                       --raw adds the purchase rows (payment, delivery)
  claim <player> [--yes]               marks the player's paid purchases delivered and
                                       lists them; asks first unless --yes
  vote <player> <reward> <amount>      spends vote points on a reward (amount: n or all)
  journal status|windows|pending       what the delivery journal holds for staff: lines
    (--file <path> | --postgres-env    still to grant, unverified windows, its health
     <VAR> | --mysql-env <VAR> | …)    (no API key needed; see teamgames journal --help)
  journal resolve <player> --note <text> [--window <id>] [--by <name>]
  journal resolve --window <id> --note <text> [--by <name>]
                                       closes an unverified window once handled (once:
                                       exit 7 if someone resolved it first); while a
                                       bridge holds the file: --bridge <url>
  bridge --config <bridge.json>        runs delivery beside a game server in any language:
                                       the loop, a local HTTP API for the game, items by
                                       webhook or RCON (see teamgames bridge --help)

Options:
  --json              print the SDK's result as JSON (for scripts)
  --base-url <url>    service URL (default: $TEAMGAMES_BASE_URL, else https://api.teamgames.io)
  --timeout <ms>      how long each attempt may take, in milliseconds (default 15000)
  -y, --yes           claim without asking
  -h, --help          show this help
  -v, --version       show the version

Environment:
  TEAMGAMES_API_KEY   the raw API key of the game server (required, except for journal)
  TEAMGAMES_API_KEY_FILE  a file whose first line is the key, when TEAMGAMES_API_KEY
                      is not set (never pass the key as an argument: ps shows those);
                      refused if other users may read it (chmod o-rwx)
  TEAMGAMES_BASE_URL  the service URL, e.g. http://127.0.0.1:4010 for the mock
  NO_COLOR            set (non-empty): no colour on a terminal

On a terminal, outcomes are coloured (green done, yellow worth a look, red failed)
and a retried read shows a progress line on stderr.

What the service answers is shown, never obeyed: in tables and lines, control
characters (ESC, newline, DEL, C1), bidi controls and other invisible characters in
product names, messages and errors are shown as \\u and their code in hex (\\u001b for
ESC, \\u000a for a newline; a backslash as \\\\), one row per product or item; --json
keeps the exact values (valid JSON). The API key is never printed: where an answer
echoes it (raw, Base64, base64url, URL-encoded), <redacted> stands instead, in --json too.

Exit codes:
  0  the service answered (the outcome is printed, even "no items")
  1  other failure (unexpected answer, claim not confirmed)
  2  usage: unknown option, missing or bad argument, no API key, invalid base URL
     (the same code as teamgames-mock's usage errors)
  3  the API key was refused
  4  the service could not be reached
  5  a claim or vote was sent but the answer was lost: the items may be delivered;
     run "teamgames preview <player> --raw" after 10 s before doing anything else
  6  the answer could not be written to stdout (a closed pipe, a full disk): it was
     written to stderr instead, after one line saying so; a claim or vote in it did
     take effect (grant what it lists)
  7  journal resolve: the window was already resolved; nothing was written, stderr
     says who resolved it, when, and their note
`;

interface Parsed {
  command: string | undefined;
  args: string[];
  json: boolean;
  yes: boolean;
  raw: boolean;
  help: boolean;
  version: boolean;
  category: string | undefined;
  baseUrl: string | undefined;
  timeout: string | undefined;
}

const OPTIONS = {
  json: { type: 'boolean', default: false },
  yes: { type: 'boolean', short: 'y', default: false },
  raw: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
  version: { type: 'boolean', short: 'v', default: false },
  category: { type: 'string' },
  'base-url': { type: 'string' },
  timeout: { type: 'string' },
} as const;

function parse(argv: readonly string[]): Parsed {
  const { values, positionals } = parseCommandLine({
    args: [...argv],
    options: OPTIONS,
    strict: true,
    allowPositionals: true,
  });
  return {
    command: positionals[0],
    args: positionals.slice(1),
    json: values.json,
    yes: values.yes,
    raw: values.raw,
    help: values.help,
    version: values.version,
    category: values.category,
    baseUrl: values['base-url'],
    timeout: values.timeout,
  };
}

const COMMANDS: Record<string, { args: string[]; options: Array<'category' | 'raw' | 'yes'> }> = {
  catalog: { args: [], options: ['category'] },
  preview: { args: ['player'], options: ['raw'] },
  claim: { args: ['player'], options: ['yes'] },
  vote: { args: ['player', 'reward', 'amount'], options: [] },
};

function checkCommand(p: Parsed): void {
  if (p.command === undefined) throw new UsageError('missing command (catalog, preview, claim, vote, journal or bridge)');
  const spec = COMMANDS[p.command];
  if (spec === undefined) throw new UsageError(`unknown command "${p.command}" (catalog, preview, claim, vote, journal or bridge)`);
  if (p.args.length < spec.args.length) throw new UsageError(`${p.command}: missing <${spec.args[p.args.length]}>`);
  if (p.args.length > spec.args.length) throw new UsageError(`${p.command}: unexpected argument "${p.args[spec.args.length]}"`);
  const used: Array<['category' | 'raw' | 'yes', boolean]> = [
    ['category', p.category !== undefined],
    ['raw', p.raw],
    ['yes', p.yes],
  ];
  for (const [option, given] of used) {
    if (given && !spec.options.includes(option)) throw new UsageError(`${p.command}: --${option} does not apply to this command`);
  }
}

function positiveInt(text: string, what: string): number {
  if (!/^[1-9]\d*$/.test(text)) throw new UsageError(`${what} must be a positive integer, got "${text}"`);
  return Number(text);
}

// ----------------------------------------------------------------- output

const money = (n: number) => n.toFixed(2);

function catalogTable(products: readonly Product[]): string {
  if (products.length === 0) return 'No products on sale.\n';
  return table(
    ['id', 'productId', 'name', 'price', 'units', 'note'],
    products.map((p) => {
      const notes: string[] = [];
      if (p.priceWithSale === 0) notes.push('FREE');
      if (p.priceWithSale < p.priceOriginal && p.priceWithSale > 0) notes.push(`sale, was ${money(p.priceOriginal)}`);
      return [String(p.id), p.productId, p.name, money(p.priceWithSale), String(p.quantity), notes.join(', ')];
    }),
  );
}


// Delivered (or about to be) reads green; every other answer of the service is an outcome
// to act on, not a failure of the command: yellow.
const toneOf = (code: ClaimResult['code']): Tone => (code === 'SUCCESS' || code === 'PREVIEW' ? 'good' : 'notice');

function claimText(player: string, result: ClaimResult, raw: boolean, paint: Paint): string {
  let text = `${paint(toneOf(result.code), printable(result.code))}: ${printable(result.message)}\n`;
  if (result.code === 'RATE_LIMIT') text += `Try again in ${Math.ceil(result.retryAfterMs / 1000)} s.\n`;
  if (result.code === 'UNKNOWN') text += `Unrecognised answer from the service (code "${printable(String(result.serverCode))}"). Nothing was granted.\n`;
  if (result.claims.length > 0) {
    text += `\n${result.code === 'SUCCESS' ? `Delivered to ${printable(player)} (grant these in game now)` : `Waiting for ${printable(player)}`}:\n`;
    text += table(
      ['product', 'name', 'grant', 'bought', 'unit price'],
      result.claims.map((t) => [t.product_id_string, t.product_name, String(t.quantity_to_grant), String(t.quantity_purchased), money(t.product_price)]),
    );
  }
  // An answer without rows (RATE_LIMIT, NO_ITEMS with nothing bought) gets no empty block.
  if (raw && result.rawTransactions !== undefined && result.rawTransactions.length > 0) {
    const columns = ['invoice', 'productid', 'quantity', 'givequantity', 'paymentstatus', 'deliverystatus', 'created'];
    text += `\nPurchase rows:\n`;
    text += table(columns, result.rawTransactions.map((row) => columns.map((c) => (row[c] === undefined || row[c] === null ? '' : String(row[c])))));
  }
  return text;
}

// ----------------------------------------------------------------- errors

function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError || error instanceof InvalidInputError) return EXIT.USAGE;
  if (error instanceof ClaimOutcomeUnknownError) return EXIT.OUTCOME_UNKNOWN;
  if (isStorefrontError(error, 'AUTHENTICATION_FAILED')) return EXIT.AUTH;
  if (isStorefrontError(error, 'NETWORK_ERROR') || isStorefrontError(error, 'TIMEOUT')) return EXIT.NETWORK;
  return EXIT.FAILURE;
}

function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s+/g, ' ').trim();
}

/** The client's names for its arguments, as the user typed them on the command line. */
function argumentName(argument: string, baseUrlFromFlag: boolean): string {
  switch (argument) {
    case 'options.apiKey':
      return 'TEAMGAMES_API_KEY';
    case 'options.baseUrl':
      return baseUrlFromFlag ? '--base-url' : 'TEAMGAMES_BASE_URL';
    case 'options.timeoutMs':
      return '--timeout';
    case 'options.categoryId':
      return '--category';
    case 'playerName':
    case 'input.player':
      return '<player>';
    case 'input.reward':
      return '<reward>';
    case 'input.amount':
      return '<amount>';
    default:
      return argument;
  }
}

/**
 * The error's message in the command's words: labelled with the command the user ran
 * (`preview`, not the SDK's `claim`), arguments named as flags (`--base-url`, not
 * `options.baseUrl`).
 */
function describeError(error: unknown, command: string | undefined, baseUrlFromFlag: boolean): string {
  if (error instanceof InvalidInputError) {
    const label = error.operation !== undefined && command !== undefined ? `${command}: ` : '';
    return oneLine(`${label}invalid ${argumentName(error.argument, baseUrlFromFlag)}: ${error.rule}`);
  }
  const text = oneLine(error);
  if (isStorefrontError(error) && error.operation !== undefined && command !== undefined && text.startsWith(`${error.operation}: `)) {
    return `${command}: ${text.slice(error.operation.length + 2)}`;
  }
  return text;
}

// ----------------------------------------------------------------- the program

/** Where `journal` or `bridge` is the command (the first argument that is not an option), if one is. */
function commandIndex(argv: readonly string[]): { command: 'journal' | 'bridge'; index: number } | undefined {
  const { tokens } = parseArgs({ args: [...argv], options: OPTIONS, strict: false, allowPositionals: true, tokens: true });
  const first = tokens.find((t) => t.kind === 'positional' || t.kind === 'option-terminator');
  return first?.kind === 'positional' && (first.value === 'journal' || first.value === 'bridge') ? { command: first.value, index: first.index } : undefined;
}

/**
 * `teamgames journal …` and `teamgames bridge …`, each loaded only for its command: the
 * journal command reads journals and may load a database driver; the bridge loads pino,
 * prom-client and the delivery loop.
 */
async function runSubcommand(found: { command: 'journal' | 'bridge'; index: number }, argv: readonly string[], io: TeamgamesIo, env: TeamgamesEnv, journalDeps: JournalDeps): Promise<number> {
  const rest = [...argv.slice(0, found.index), ...argv.slice(found.index + 1)];
  if (found.command === 'bridge') {
    const { runBridgeCommand } = await import('../bridge/command.js');
    return runBridgeCommand(rest, io, env);
  }
  const { runJournal } = await import('./journal-command.js');
  return runJournal(rest, io, env, journalDeps);
}

/**
 * Runs `teamgames` with `argv` (without the node and script paths) and resolves the exit
 * code. Never throws: every failure is one line on stderr.
 */
export async function runTeamgames(
  argv: readonly string[],
  io: TeamgamesIo,
  env: TeamgamesEnv,
  overrides: ClientOverrides = {},
  journalDeps: JournalDeps = {},
): Promise<number> {
  const found = commandIndex(argv);
  if (found !== undefined) return runSubcommand(found, argv, io, env, journalDeps);
  let json = argv.includes('--json');
  let command: string | undefined;
  let baseUrlFromFlag = false;
  const paintOut = painter(io.stdout, env);
  const paintErr = painter(io.stderr, env);
  // What the store (or a proxy) answers may echo the key: no printed string holds it, in any form.
  let redact: Redact = NO_SECRET;
  try {
    const p = parse(argv);
    json = p.json;
    if (p.help) return await answer(io, '', false, USAGE, () => USAGE, paintOut, paintErr);
    if (p.version) return await answer(io, '', false, VERSION, () => `teamgames ${VERSION}\n`, paintOut, paintErr);
    checkCommand(p);
    command = p.command;
    const apiKey = (await apiKeyOf(env)) ?? '';
    if (apiKey === '') throw new UsageError('TEAMGAMES_API_KEY is not set (the raw key of the game server, from the TeamGames dashboard; or TEAMGAMES_API_KEY_FILE, a file holding it)');
    redact = keyRedactor(apiKey);
    const timeoutMs = p.timeout === undefined ? undefined : positiveInt(p.timeout, '--timeout');
    baseUrlFromFlag = p.baseUrl !== undefined;
    const baseUrl = p.baseUrl ?? (env.TEAMGAMES_BASE_URL?.trim() || undefined);
    const progress = new ProgressLine(io.stderr, env);
    const label = command;
    const onEvent: ClientOverrides['onEvent'] = (event) => {
      if (event.type === 'retry') progress.show(redact(`teamgames: ${label}: ${printable(event.reason)}; trying again (attempt ${event.attempt + 1})…`));
      overrides.onEvent?.(event);
    };
    // A one-shot process: the local guard and the cache would never see a second call.
    const client = new StorefrontClient({
      ...overrides,
      apiKey,
      ...(baseUrl === undefined ? {} : { baseUrl }),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(progress.enabled ? { onEvent } : {}),
      rateLimit: false,
      catalogCacheTtlMs: 0,
    });
    // The progress line goes before anything else is written, answer or error.
    const settled = async <T>(call: Promise<T>): Promise<T> => {
      try {
        return await call;
      } finally {
        progress.clear();
      }
    };
    const [player = '', reward = '', amount = ''] = p.args;
    const print = (value: unknown, human: (paint: Paint) => string) => answer(io, `${label}: `, json, value, human, paintOut, paintErr, redact);

    switch (p.command) {
      case 'catalog': {
        const categoryId = p.category === undefined ? undefined : positiveInt(p.category, '--category');
        const catalog = await settled(client.getCatalog(categoryId === undefined ? {} : { categoryId }));
        return await print(catalog, () => catalogTable(catalog.products));
      }
      case 'preview': {
        const result = await settled(client.previewClaim(player, { includeRawTransactions: p.raw }));
        return await print(result, (paint) => claimText(player, result, p.raw, paint));
      }
      case 'claim': {
        if (!p.yes) {
          if (!io.interactive) {
            throw new UsageError('claim: refusing to claim without confirmation; pass --yes (stdin is not a terminal)');
          }
          const question = `Mark every paid purchase of "${printable(player)}" as delivered? The game server will not grant them; you must. [y/N] `;
          if (!(await io.confirm(question))) {
            io.stderr.write('teamgames: claim cancelled; nothing changed\n');
            return EXIT.FAILURE;
          }
        }
        const result = await settled(client.claim(player));
        return await print(result, (paint) => claimText(player, result, false, paint));
      }
      case 'vote': {
        const units = amount.toLowerCase() === 'all' ? 'all' : positiveInt(amount, '<amount>');
        const result = await settled(client.claimVoteReward({ player, reward, amount: units }));
        return await print(result, (paint) => {
          let text = '';
          for (const m of result.messages) text += `${printable(m)}\n`;
          for (const r of result.rewards) if (r.message !== undefined && r.message !== '') text += `${printable(r.message)}\n`;
          if (result.rewards.length > 0) {
            text += table(
              ['reward', 'name', 'give', 'points left', 'votes this month', 'points ever'],
              result.rewards.map((r) => [String(r.reward_id), r.reward_name, String(r.give_amount), String(r.vote_points), String(r.votes_month), r.total_points]),
            );
          }
          if (result.insufficientPoints) text += `${paint('notice', 'Not enough vote points.')}\n`;
          return text === '' ? 'No answer rows.\n' : text;
        });
      }
    }
    throw new UsageError(`unknown command "${p.command}"`);
  } catch (error) {
    const code = exitCodeOf(error);
    const message = redact(describeError(error, command, baseUrlFromFlag));
    if (json) {
      const payload = isStorefrontError(error) ? { error: error.code, message } : { error: code === EXIT.USAGE ? 'USAGE' : 'FAILURE', message };
      io.stderr.write(`${jsonText(payload, NO_SECRET)}\n`);
    } else {
      io.stderr.write(`${paintErr('bad', `teamgames: ${printable(message)}`)}${code === EXIT.USAGE ? ' (see teamgames --help)' : ''}\n`);
    }
    return code;
  }
}
