/**
 * The crash campaign's scenarios, on the worker's side (see scripts/crash/scenario.ts):
 * what a worker does to itself so that a kill lands where the orchestrator's random
 * SIGKILLs rarely do.
 *
 * - `torn-append`: the file journal's writes pass through {@link hookJournalWrites}; the
 *   chosen append of several entries is written only in part (the first bytes of its
 *   line, or of its lines for a journal that writes one line per entry), then the worker
 *   SIGKILLs itself: the page cache keeps exactly that prefix, as a crash mid-write does.
 * - `no-raw-rows`: the client's `fetch` is {@link claimAnswers}: it strips
 *   `data.rawTransactions` from a share of the claim answers (never from a preview) and,
 *   after a share of the claim answers, the worker SIGKILLs itself just before one of the
 *   next three journal writes: between the claim and the journaling of its lines, or
 *   just after.
 *
 * A worker that kills itself first prints `selfkill <why>` on stdout, so the orchestrator
 * counts the death as one of its kills.
 *
 * @module
 */
import type { FileHandle } from 'node:fs/promises';
import { fsCalls } from '../../../src/journals/file/files.js';

type Log = (text: string) => void;

/** Says why on stdout (synchronous on a pipe), then SIGKILLs this process. */
export function selfKill(why: string, log: Log): never {
  log(`selfkill ${why}`);
  process.stdout.write(`selfkill ${why}\n`);
  process.kill(process.pid, 'SIGKILL');
  throw new Error('crash-worker: still alive after SIGKILL');
}

/** What to do with one write of a journal line: nothing (undefined), or keep this many bytes and die. */
export type WriteDecision = (data: Buffer, path: string) => { keep: number; why: string } | undefined;

/**
 * Routes every write of the handles the file journal opens on `journalPath` (the journal
 * and its compaction's temporary files; not its lock) through `decide`, at the first call
 * of a line's write (offset 0), inside the journal's own queue of operations.
 */
export function hookJournalWrites(journalPath: string, decide: WriteDecision, log: Log): void {
  const open = fsCalls.open;
  const hooked = async (...args: Parameters<typeof open>): Promise<FileHandle> => {
    const handle = await open(...args);
    const path = String(args[0]);
    if (!path.startsWith(journalPath) || path.includes('.lock')) return handle;
    const write = handle.write.bind(handle) as (b: Buffer, o: number, l: number, p: null) => Promise<{ bytesWritten: number; buffer: Buffer }>;
    const wrapped = async (buffer: Buffer, offset: number, length: number, position: null) => {
      const cut = Buffer.isBuffer(buffer) && offset === 0 && buffer[0] === 0x7b ? decide(buffer, path) : undefined;
      if (cut !== undefined) {
        if (cut.keep > 0) await write(buffer, 0, cut.keep, null);
        selfKill(cut.why, log);
      }
      return write(buffer, offset, length, position);
    };
    (handle as unknown as { write: typeof wrapped }).write = wrapped;
    return handle;
  };
  fsCalls.open = hooked as typeof open;
}

/** An append of several entries: one `{"op":"put","entries":…}` line, or several lines in one write (0.1.0's form). */
function severalEntries(data: Buffer): boolean {
  if (!data.subarray(0, 12).equals(Buffer.from('{"op":"put",'))) return false;
  return data.subarray(0, 23).toString() === '{"op":"put","entries":[' || data.indexOf(0x0a) < data.length - 1;
}

/** `torn-append`: the `at`-th append of several entries to the journal is cut after `fraction` of its bytes. */
export function tearAppend(journalPath: string, tear: { at: number; fraction: number }): WriteDecision {
  let seen = 0;
  return (data, path) => {
    if (path !== journalPath || !severalEntries(data) || ++seen < tear.at) return undefined;
    const keep = Math.min(data.length - 1, Math.max(1, Math.floor(tear.fraction * data.length)));
    const lines = data.subarray(0, keep).toString().split('\n').length - 1;
    return { keep, why: `torn-append: ${keep} of ${data.length} bytes of an append of several entries (${lines} complete line(s) kept)` };
  };
}

/** `no-raw-rows`: the kill armed by a claim answer, before one of the next 1–3 journal writes. */
export class ArmedKill {
  #countdown = 0;
  #why = '';

  constructor(private readonly random: () => number) {}

  /** After a claim answer: armed with probability `share`. */
  arm(share: number, why: string): void {
    if (this.#countdown > 0 || !(this.random() < share)) return;
    this.#countdown = 1 + Math.floor(this.random() * 3);
    this.#why = `no-raw-rows: ${why}, killed before journal write ${this.#countdown} after it`;
  }

  readonly decide: WriteDecision = () => (this.#countdown > 0 && --this.#countdown === 0 ? { keep: 0, why: this.#why } : undefined);
}

const CLAIM_PATH = '/api/v4/store/transaction/update';

/**
 * A `fetch` for the client: claim answers (not previews) lose `data.rawTransactions` with
 * probability `strip`, and each one (stripped or not) may arm `kill`.
 */
export function claimAnswers(options: { strip: number; dieAfter: number; random: () => number; kill: ArmedKill; log: Log }): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!url.includes(CLAIM_PATH) || !response.ok) return response;
    const text = await response.text();
    let body: { code?: unknown; data?: { rawTransactions?: unknown } } | undefined;
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      body = undefined;
    }
    let out = text;
    if (body?.code === 'SUCCESS') {
      const stripped = body.data?.rawTransactions !== undefined && options.random() < options.strip;
      if (stripped) {
        delete body.data?.rawTransactions;
        out = JSON.stringify(body);
        options.log('no-raw-rows: stripped rawTransactions from a claim answer');
      }
      options.kill.arm(options.dieAfter, stripped ? 'a claim answer without rawTransactions' : 'a claim answer');
    }
    const headers = new Headers(response.headers);
    headers.delete('content-length');
    return new Response(out, { status: response.status, statusText: response.statusText, headers });
  };
}
