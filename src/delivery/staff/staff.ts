/**
 * What staff see and close: the open unverified windows and the lines still pending in a
 * journal, and the resolution of a window (who, when, what was found). The same calls
 * serve an in-game admin command and the support CLI (`teamgames journal`).
 *
 * @module
 */
import { JournalError, WindowAlreadyResolvedError, isStorefrontError } from '../../errors.js';
import { checkNonBlank, checkOptionsObject, checkPlayerName, describe, fail } from '../../internal/validate.js';
import { entryChecks } from '../../journals/lazy-checks.js';
import {
  resolvedWindow,
  unresolvedOutcome,
  type DeliveryJournal,
  type GrantFailureNote,
  type JournalEntry,
  type JournalLine,
  type JournalWindow,
  type WindowResolution,
  type WindowResolveOutcome,
} from '../../journals/contract.js';
import { lazy } from '../../internal/lazy.js';
import type { JournalInspection } from '../inspect/index.js';

/** What staff see of entries, loaded on first use (the loop and the CLI load it too). */
const inspection = /* @__PURE__ */ lazy(loadInspection);

// Declared rather than an inline arrow: StrykerJS (`npm run mutate`) then mutates what runs
// on the first call, which tests see, not a choice made while the module loads.
function loadInspection(): Promise<typeof import('../inspect/index.js')> {
  return import('../inspect/index.js');
}

export type { JournalInspection, PendingDelivery } from '../inspect/index.js';

/**
 * Reads what a journal holds for staff: the open unverified windows, the lines still
 * pending (with their age and last grant failure) and the windows already resolved.
 * Works on any {@link DeliveryJournal}: the one your bridge delivers with (for an in-game
 * admin command), or a `PostgresJournal` / `MySqlJournal` opened by a support tool. For a
 * file journal held by a running bridge, use `teamgames journal status --file <path>`,
 * which reads the file without taking its lock.
 *
 * @example
 * ```ts
 * const { openWindows, pending } = await inspectJournal(journal);
 * for (const w of openWindows) {
 *   staffChannel.send(`${w.playerName}: check ${new Date(w.from).toISOString()} to ${new Date(w.to).toISOString()} (${w.deliveryId})`);
 * }
 * ```
 * @throws {@link JournalError} when the journal cannot be read or holds a record that is not an entry.
 */
export async function inspectJournal(journal: DeliveryJournal, options: { playerName?: string; now?: number } = {}): Promise<JournalInspection> {
  const { playerName, now } = checkOptionsObject(options, ['playerName', 'now'], 'options');
  const player = playerName === undefined ? undefined : checkPlayerName(playerName, 'options.playerName');
  const at = now === undefined ? Date.now() : (now as number);
  const entries = await read(journal, player);
  const { inspectEntries } = await inspection();
  return inspectEntries(entries, at);
}

/** What {@link resolveWindow} takes: the window (its id, or its player's name), who and what. */
export interface ResolveWindowInput {
  /**
   * The player whose window it is (exact name). Optional when `windowId` is given (then,
   * if given too, the window must be this player's); without `windowId`, the player's one
   * open window is resolved.
   */
  playerName?: string;
  /**
   * The window's id (`window:…`, as {@link inspectJournal} lists it): alone it is enough,
   * whatever the player's name holds; needed when the player has several open windows.
   */
  windowId?: string;
  /**
   * Who handled it (a staff name, a Discord id): at most {@link MAX_RESOLVED_BY_LENGTH}
   * (200) characters, no control or bidi-override characters.
   */
  by: string;
  /**
   * What was found and done: at most {@link MAX_RESOLUTION_NOTE_LENGTH} (2,000)
   * characters; newlines (`\n`) and tabs allowed, no other control character (no `\r`,
   * no escape) and no bidi override.
   */
  note: string;
}

/** The longest `by` {@link resolveWindow} takes, in characters (UTF-16 code units, as `String.length` counts). */
export const MAX_RESOLVED_BY_LENGTH = 200;

/** The longest `note` {@link resolveWindow} takes, in characters (UTF-16 code units, as `String.length` counts). */
export const MAX_RESOLUTION_NOTE_LENGTH = 2_000;

const MAX_WINDOW_ID_LENGTH = 512;

// C0 and C1 controls, lone surrogates, and the bidi marks, embeddings, overrides and
// isolates that make text display as other text; a note may hold newlines and tabs.
// Declared functions, not module constants, for the same reason as loadInspection: built
// where they are used (no `g` flag, so a fresh pattern tests the same as a shared one).
function notInBy(): RegExp {
  return /[\p{Cc}\p{Cs}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
}
function notInNote(): RegExp {
  return /[\p{Cs}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|(?![\n\t])\p{Cc}/u;
}

/** A resolution's checked arguments. */
interface CheckedResolve {
  player: string | undefined;
  windowId: string | undefined;
  by: string;
  note: string;
}

/**
 * The checks of {@link resolveWindow}'s input, before anything is read or written: the
 * bounds of `by` and `note`, a player or a window to resolve.
 *
 * @throws InvalidInputError naming the argument and the rule.
 * @internal
 */
export function checkResolveInput(input: unknown): CheckedResolve {
  const fields = checkOptionsObject(input as ResolveWindowInput, ['playerName', 'windowId', 'by', 'note'], 'input');
  const by = bounded(fields.by, 'input.by', MAX_RESOLVED_BY_LENGTH, notInBy(), 'must not contain control or bidi-override characters');
  const note = bounded(fields.note, 'input.note', MAX_RESOLUTION_NOTE_LENGTH, notInNote(), 'must not contain control characters other than line breaks and tabs, nor bidi-override characters');
  const windowId = fields.windowId === undefined ? undefined : bounded(fields.windowId, 'input.windowId', MAX_WINDOW_ID_LENGTH, notInBy(), 'must not contain control or bidi-override characters');
  if (fields.playerName === undefined && windowId === undefined) fail('input.playerName', 'is needed when input.windowId is not given (which window to resolve?)');
  const player = fields.playerName === undefined ? undefined : checkPlayerName(fields.playerName, 'input.playerName');
  return { player, windowId, by, note };
}

function bounded(value: unknown, argument: string, max: number, refused: RegExp, rule: string): string {
  const text = checkNonBlank(value, argument);
  // The length is checked first: a pattern never runs over a huge string.
  if (text.length > max) fail(argument, `must be at most ${max} characters, got ${text.length}`);
  if (refused.test(text)) fail(argument, rule);
  return text;
}

/**
 * Closes an unverified window once staff have checked it: the record stays in the
 * journal as `resolved` with who, when and the note (an audit trail, not a deletion),
 * and the player's texts stop saying staff are checking once no window of theirs is open.
 *
 * One resolution per window: resolving is compare-and-set on every journal (the file and
 * memory journals check and write in one step of their queue, the SQL journals in one
 * conditional `UPDATE`), so of several staff resolving one window at once, through this
 * call, `teamgames journal resolve` or other nodes, exactly one succeeds and every other
 * gets a {@link WindowAlreadyResolvedError} saying who resolved it, when, and the note;
 * the first resolution is never overwritten. A journal of your own without
 * {@link DeliveryJournal.resolveWindow} is read, checked and appended to, serialized per
 * journal object in this process (compare-and-set only when one process writes it).
 *
 * @example
 * ```ts
 * // By the id staff saw in inspectJournal (or `teamgames journal windows`):
 * await resolveWindow(journal, { windowId: 'window:3f6c…', by: 'mod:alice', note: 'granted VIP rank by hand (invoice 1043)' });
 * // Or by the player, when they have one open window:
 * await resolveWindow(journal, { playerName: 'Player123', by: 'mod:alice', note: 'checked: nothing missing' });
 * ```
 * @throws {@link WindowAlreadyResolvedError} when the window is already resolved (by
 *   another hand, maybe at the same moment); nothing was written. Without `windowId`, also
 *   when the player has no open window but a resolved one (the latest is named).
 * @throws {@link InvalidInputError} for a blank, too long or control-character `by`,
 *   `note` or `windowId` (see {@link ResolveWindowInput}), neither `playerName` nor
 *   `windowId`, an id that names no window (or another player's), a player with no
 *   window, or several open and no `windowId`; nothing was written.
 * @throws {@link JournalError} when the journal cannot be read or written.
 */
export async function resolveWindow(journal: DeliveryJournal, input: ResolveWindowInput, options: { now?: number } = {}): Promise<JournalWindow> {
  const { player, windowId, by, note } = checkResolveInput(input);
  const { now } = checkOptionsObject(options, ['now'], 'options');
  if (now !== undefined && !Number.isFinite(now)) fail('options.now', `must be a finite number (epoch ms), got ${describe(now)}`);
  const id = windowId ?? (await onlyOpenWindow(journal, player as string));
  if (windowId !== undefined && player !== undefined) {
    const windows = (await read(journal, player)).filter((e) => e.state === 'unverified' || e.state === 'resolved');
    if (!windows.some((w) => w.deliveryId === windowId)) {
      const open = windows.filter((w) => w.state === 'unverified').map((w) => w.deliveryId);
      fail('input.windowId', `must name a window of ${describe(player)}, who has ${open.length === 0 ? 'no open window' : `open: ${open.join(', ')}`}`);
    }
  }
  const resolution: WindowResolution = { by, at: (now as number | undefined) ?? Date.now(), note };
  let result: WindowResolveOutcome;
  try {
    result = journal.resolveWindow === undefined ? await resolveByAppend(journal, id, resolution) : await journal.resolveWindow(id, resolution);
  } catch (error) {
    throw isStorefrontError(error) ? error : new JournalError(`resolveWindow: the journal could not record the resolution (${(error as Error).message})`, { cause: error });
  }
  if (result?.outcome === 'notFound') fail('input.windowId', `must name a window in the journal; there is none with the id ${describe(id)}`);
  const window = checkedOutcome(result, id, (await entryChecks()).entryProblem);
  if (result.outcome === 'alreadyResolved') throw alreadyResolved(window);
  return window;
}

/** The window of a journal's answer, checked like any record read back (a journal of your own may answer anything). */
function checkedOutcome(result: WindowResolveOutcome | undefined, id: string, entryProblem: (value: unknown) => string | undefined): JournalWindow {
  const answer = result as { outcome?: unknown; window?: unknown } | undefined;
  const window = answer?.window as JournalWindow;
  const outcome = answer?.outcome;
  const problem =
    outcome !== 'resolved' && outcome !== 'alreadyResolved'
      ? `outcome is ${describe(outcome)}`
      : (entryProblem(window) ?? (window.state !== 'resolved' || window.deliveryId !== id ? `state ${describe(window.state)}, id ${describe(window.deliveryId)}` : undefined));
  if (problem !== undefined) {
    throw new JournalError(`resolveWindow: the journal's resolveWindow answered with something other than the resolved window ${JSON.stringify(id)} (${problem}); it is damaged or does not keep the DeliveryJournal contract`);
  }
  return window;
}

/** The id of the player's one open window, or the error that says why there is none to resolve. */
async function onlyOpenWindow(journal: DeliveryJournal, player: string): Promise<string> {
  const windows = (await read(journal, player)).filter((e): e is JournalWindow => e.state === 'unverified' || e.state === 'resolved');
  const open = windows.filter((w) => w.state === 'unverified');
  if (open.length > 1) fail('input.windowId', `is needed: ${describe(player)} has ${open.length} open windows (${open.map((w) => w.deliveryId).join(', ')})`);
  if (open.length === 1) return (open[0] as JournalWindow).deliveryId;
  // No open window, but some resolved (each with its resolution, as read checks): the last
  // one is what another hand just closed.
  const at = (w: JournalWindow): number => (w.resolution as WindowResolution).at;
  const last = windows.reduce<JournalWindow | undefined>((latest, w) => (latest === undefined || at(w) >= at(latest) ? w : latest), undefined);
  if (last !== undefined) throw alreadyResolved(last);
  return fail('input.playerName', `must name an open window; ${describe(player)} has none`);
}

function alreadyResolved(window: JournalWindow): WindowAlreadyResolvedError {
  const r = window.resolution as WindowResolution;
  return new WindowAlreadyResolvedError(window.deliveryId, window.playerName, r);
}

// The fallback for journals without resolveWindow: one resolve at a time per journal
// object in this process, the state checked again inside the turn.
const turns = new WeakMap<DeliveryJournal, Promise<unknown>>();

async function resolveByAppend(journal: DeliveryJournal, windowId: string, resolution: WindowResolution): Promise<WindowResolveOutcome> {
  const previous = turns.get(journal) ?? Promise.resolve();
  const turn = previous.then(async (): Promise<WindowResolveOutcome> => {
    const entry = (await read(journal, undefined)).find((e) => e.deliveryId === windowId);
    const window = resolvedWindow(entry, resolution);
    if (window === undefined) return unresolvedOutcome(entry);
    await journal.append([window]);
    return { outcome: 'resolved', window };
  });
  // The last turn stays in the map: one settled promise per journal, gone with the journal.
  turns.set(journal, turn.catch(() => undefined));
  return turn;
}

async function read(journal: DeliveryJournal, player: string | undefined): Promise<JournalEntry[]> {
  let entries: JournalEntry[];
  try {
    entries = await journal.pending(player);
  } catch (error) {
    throw error instanceof JournalError ? error : new JournalError(`the journal could not be read (${(error as Error).message})`, { cause: error });
  }
  const { entryProblem } = await entryChecks();
  for (const entry of entries) {
    const problem = entryProblem(entry);
    if (problem !== undefined) throw new JournalError(`the journal holds a record that is not a journal entry (${problem}); it is damaged or was changed outside the SDK`);
  }
  return entries;
}
