/**
 * What `teamgames journal` prints: times, ages and sizes, the status text, the windows'
 * and the pending lines' tables, the text of a window already resolved.
 *
 * @module
 */
import type { JournalInspection } from '../delivery/staff/index.js';
import type { WindowAlreadyResolvedError } from '../errors.js';
import type { JournalWindow } from '../journals/contract.js';
import { printable } from '../common/printable.js';
import type { FileHealth, Health } from './journal-sources.js';
import { table } from './shared.js';
import type { Paint } from './terminal.js';


// The last instant a Date can hold (year 275760): a record's time beyond it cannot be a date.
const LAST_DATE_MS = 8.64e15;

/**
 * `2026-01-01 00:00:00Z`: UTC to the second. A time no clock could have written (before
 * 1970, beyond year 275760, not a number) is shown as it is, the raw epoch ms, so one
 * absurd record neither hides the others nor passes for a date.
 */
export function time(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0 || ms > LAST_DATE_MS) return `${ms} (not a time)`;
  // toISOString ends with the milliseconds and Z (`.000Z`): cut to the second.
  return `${new Date(ms).toISOString().slice(0, -5).replace('T', ' ')}Z`;
}

/** An age in its two largest units: `45s`, `3m 12s`, `5h 3m`, `2d 4h`. */
function age(ms: number): string {
  const s = Math.floor(Math.max(0, ms) / 1000);
  const [d, h, m] = [Math.floor(s / 86_400), Math.floor((s % 86_400) / 3_600), Math.floor((s % 3_600) / 60)];
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** The lock file's fields as printed: whatever it holds, escaped. */
function lockText(lock: FileHealth['lock']): string {
  return printable(lockWords(lock));
}

function lockWords(lock: FileHealth['lock']): string {
  switch (lock.state) {
    case 'free':
      return 'free (no bridge holds the file)';
    case 'unknown':
      return `${lock.path} does not name its holder`;
    case 'unreadable':
      return `unknown: ${lock.problem}`;
    case 'refused':
      return `refused: ${lock.problem}`;
    case 'held': {
      const since = lock.since === '' ? '' : ` since ${lock.since}`;
      const state = lock.running === true ? 'running' : lock.running === false ? 'gone: its lock is stale, the next open takes it over' : 'another host: cannot tell whether it runs';
      return `held by process ${lock.pid} on host ${lock.host}${since} (${state})`;
    }
  }
}

export function statusText(health: Health, seen: JournalInspection | undefined, paint: Paint): string {
  const rows: Array<[string, string]> = [];
  if (health.kind === 'file') {
    rows.push(['journal', `file ${printable(health.path)}`]);
    rows.push(['readable', health.readable ? paint('good', `yes: ${health.lines} lines, ${size(health.bytes ?? 0)}${health.tornBytes ? `, a torn last line of ${health.tornBytes} bytes left out` : ''}`) : paint('bad', `no: ${printable(health.problem as string)}`)]);
    rows.push(['lock', lockText(health.lock)]);
  } else {
    rows.push(['journal', `${health.kind === 'postgres' ? 'PostgreSQL' : 'MySQL'} ${printable(health.url)}, table ${printable(health.table)}`]);
    rows.push(['readable', health.readable ? paint('good', 'yes') : paint('bad', `no: ${printable(health.problem as string)}`)]);
  }
  if (seen !== undefined) {
    const pending = seen.pending.length;
    rows.push(['pending', pending === 0 ? '0 lines' : paint('notice', `${pending} line${pending === 1 ? '' : 's'}, oldest ${age(seen.oldestPendingMs)} (teamgames journal pending)`)]);
    const open = seen.openWindows.length;
    rows.push(['open windows', open === 0 ? '0' : paint('notice', `${open} to check (teamgames journal windows)`)]);
    rows.push(['resolved windows', String(seen.resolvedWindows.length)]);
  }
  const width = rows.reduce((w, [k]) => Math.max(w, k.length), 0);
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}\n`).join('');
}

/**
 * The cause column; a vote window also names the reward (every lostVote window has one, as
 * read checks) and the points unaccounted for, a command window the command(s) to look for
 * in the game's log (every one has them, as the RCON sink writes it).
 */
function causeText(w: JournalWindow): string {
  switch (w.cause) {
    case 'lostClaim':
      return 'lost claim answer';
    case 'claimMark':
      return 'claim mark left';
    case 'unknownCommand':
      return `command outcome unknown: ${(w.command ?? '?').split('\n').join(' | ')}`;
    default:
      return `lost vote answer (reward ${w.reward as string}, ${w.points === undefined ? 'points unknown' : `${w.points} points`})`;
  }
}

export function windowsText(windows: readonly JournalWindow[], all: boolean, paint: Paint): string {
  if (windows.length === 0) return all ? 'No windows.\n' : `${paint('good', 'No open windows.')}\n`;
  const headers = ['window', 'player', 'from', 'to', 'cause', 'found', ...(all ? ['state', 'resolved by', 'resolved at', 'note'] : [])];
  return table(
    headers,
    windows.map((w) => {
      const row = [w.deliveryId, w.playerName, time(w.from), time(w.to), causeText(w), time(w.recordedAt)];
      if (!all) return row;
      return [...row, w.state === 'unverified' ? 'open' : 'resolved', w.resolution?.by ?? '', w.resolution === undefined ? '' : time(w.resolution.at), w.resolution?.note ?? ''];
    }),
  );
}

export function pendingText(seen: JournalInspection, paint: Paint): string {
  if (seen.pending.length === 0) return `${paint('good', 'Nothing pending.')}\n`;
  return table(
    ['player', 'product', 'units', 'state', 'age', 'attempts', 'last error', 'id'],
    seen.pending.map((p) => [
      p.playerName,
      p.item !== undefined ? `${p.item.product_id_string} (${p.item.product_name})` : p.reward !== undefined ? `vote reward ${p.reward.reward_id} (${p.reward.reward_name})` : '',
      p.item !== undefined ? String(p.item.quantity_to_grant) : p.reward !== undefined ? String(p.reward.give_amount) : '',
      // A command about to be sent (the bridge's RCON delivery): the next give makes it a window.
      p.sending === undefined ? p.state : `${p.state}, sending since ${time(p.sending)}`,
      age(p.ageMs),
      // An item the delivery loop marked for staff after its staffAfterAttempts failed gives.
      p.lastError === undefined ? '' : `${p.lastError.attempts}${p.lastError.stuck === true ? ' (stuck)' : ''}`,
      p.lastError === undefined ? '' : p.lastError.message.replace(/\s+/g, ' ').slice(0, 80),
      p.deliveryId,
    ]),
  );
}


/** What the second resolver reads: who came first, when, and their note, on one line (fail makes it printable). */
export function alreadyResolvedText(error: WindowAlreadyResolvedError): string {
  const { by, at, note } = error.resolution;
  // A note written before the bounds (or by another tool) may be huge: --json has it whole.
  const cut = note.length > 2_000 ? `${note.slice(0, 2_000)}… (${note.length - 2_000} more characters: --json shows them)` : note;
  return `${error.windowId} of ${error.playerName} was already resolved by ${by.slice(0, 200)} at ${time(at)}: ${cut}. Nothing was written: the first resolution stands`;
}
