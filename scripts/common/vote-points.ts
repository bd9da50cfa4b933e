/**
 * The vote campaigns' count (`npm run simulate -- --votes`, `npm run crash -- --votes`):
 * per player, the points the mock says were spent against the points the game was given
 * rewards for, and how much of a shortfall a window of that player names.
 */
import type { JournalWindow } from '../../src/index.js';

/** What the mock's counters say of one player. */
export interface PlayerPoints {
  playerName: string;
  total_points: number;
  vote_points: number;
}

/** Points spent, given, lost (spent and never given), silent (lost and in no window), duplicated (given beyond spent). */
export function pointFigures(players: Iterable<PlayerPoints>, given: ReadonlyMap<string, number>, windows: readonly JournalWindow[]) {
  let spent = 0;
  let granted = 0;
  let lost = 0;
  let silent = 0;
  let duplicated = 0;
  for (const v of players) {
    const s = v.total_points - v.vote_points;
    const g = given.get(v.playerName) ?? 0;
    spent += s;
    granted += g;
    lost += Math.max(0, s - g);
    duplicated += Math.max(0, g - s);
    const mine = windows.filter((w) => w.playerName === v.playerName);
    // A window that could not count the points covers whatever its player lost.
    const covered = mine.some((w) => w.points === undefined) ? Number.POSITIVE_INFINITY : mine.reduce((sum, w) => sum + (w.points ?? 0), 0);
    silent += Math.max(0, s - g - covered);
  }
  return { spent, granted, lost, silent, duplicated };
}
