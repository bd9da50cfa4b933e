/**
 * The vote campaigns' count (`npm run simulate -- --votes`, `npm run crash -- --votes`):
 * the claims the mock carried out (`state().servers[].voteClaims`: units, the price each
 * paid, the counters after it) against the rows the game was given, and how much of a
 * shortfall the player's windows name. Prices change during the campaigns, so a claim's
 * points are the price it paid, never the reward's price now.
 */
import type { JournalWindow } from '../../src/index.js';
import type { VoteClaimRecord } from '../../src/mock/index.js';

/** A row the game applied (once per `deliveryId`), with the counters it carried. */
export interface GivenVoteRow {
  player: string;
  reward: number;
  units: number;
  recovered: boolean;
  total_points: string;
  vote_points: number;
}

/**
 * - spent: points the carried-out claims cost; granted: the points of the claims a given
 *   row accounts for; lost: spent − granted.
 * - silent: lost points no window covers: a claim is covered by a window of its player
 *   whose span (`from`…`to`) holds the moment the service carried it out, and the windows
 *   that hold some cover at most their `points` together (everything when one has none).
 * - duplicated: rows of an answer given for a claim another row already accounts for (or
 *   none); unpaid: recovered rows for which no claim of that reward is left unaccounted.
 *
 * An answer's row is its claim's: the points spent so far (`total − left`) only grow, so
 * the counters a row carries name one claim. A recovered row (it carries the counters of
 * the answer that found it) accounts for the latest claim of its reward and units left
 * before that answer.
 */
export function voteFigures(claims: readonly VoteClaimRecord[], given: readonly GivenVoteRow[], windows: readonly JournalWindow[]) {
  let spent = 0;
  let lost = 0;
  let silent = 0;
  let duplicated = 0;
  let unpaid = 0;
  const players = new Set([...claims.map((c) => c.playerName), ...given.map((g) => g.player)]);
  for (const player of players) {
    const mine = claims.filter((c) => c.playerName === player);
    const open = new Map(mine.map((c) => [`${c.total_points - c.vote_points}`, c]));
    const rows = given.filter((g) => g.player === player);
    for (const row of rows.filter((g) => !g.recovered)) {
      if (!open.delete(`${Number(row.total_points) - row.vote_points}`)) duplicated += 1;
    }
    for (const row of rows.filter((g) => g.recovered)) {
      // The lost call came before the answer that found it (whose counters the row carries):
      // the latest claim of its reward and units left unaccounted before that answer.
      const found = Number(row.total_points) - row.vote_points;
      const claim = [...open.entries()].filter(([spentAfter, c]) => c.rewardId === row.reward && c.giveAmount === row.units && Number(spentAfter) < found).at(-1);
      if (claim === undefined) unpaid += 1;
      else open.delete(claim[0]);
    }
    const missing = [...open.values()];
    const cost = (list: readonly VoteClaimRecord[]) => list.reduce((sum, c) => sum + c.units * c.cost, 0);
    spent += cost(mine);
    lost += cost(missing);
    // A missing claim is covered by a window of the player whose span holds the moment the
    // service carried it out (a late landing after the window's answer is not); the
    // windows that hold some cover at most their points (all, when they could not tell).
    const theirs = windows.filter((w) => w.playerName === player);
    const holds = (w: JournalWindow, c: VoteClaimRecord) => Date.parse(c.at) >= w.from && Date.parse(c.at) <= w.to;
    const inSpan = missing.filter((c) => theirs.some((w) => holds(w, c)));
    const named = theirs.filter((w) => inSpan.some((c) => holds(w, c))).reduce((sum, w) => sum + (w.points ?? Number.POSITIVE_INFINITY), 0);
    silent += cost(missing) - cost(inSpan) + Math.max(0, cost(inSpan) - named);
  }
  return { spent, granted: spent - lost, lost, silent, duplicated, unpaid };
}
