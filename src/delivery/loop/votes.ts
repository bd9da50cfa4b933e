/**
 * The delivery loop's `claimVote`: a `::vote` command run as `deliverVoteReward`, its call
 * out of the loop's budget, its give only for a player still here. And the vote reward rows
 * a crash (or a failed give) left in the journal, given when the player joins.
 *
 * @module
 * @internal
 */
import type { LoopVoteInput, LoopVoteReport } from './types.js';
import { backingOff, forgetDueVotes, giveBackingOff, heldBack, Interrupted, undelivered, votesDue, type Player } from './player.js';
import type { VoteRewardGiveFunction } from '../votes/index.js';
import type { VoteDeliveries, VoteVia } from '../votes/index.js';

/** What `claimVote` needs of the loop for one online player. */
export interface VoteInLoop {
  player: Player;
  /** The player is still online here and the loop runs. */
  here: () => boolean;
  /** Takes one call out of the loop's budget (and counts it); rejects when the player leaves. */
  call: () => Promise<void>;
  /** Plans the player's next (routine) run at a monotonic time: a row whose give failed is given again then. */
  plan: (at: number) => void;
  /** The client's vote rewards (loaded on first use) and its caller. */
  votes: { deliveries: () => VoteDeliveries | Promise<VoteDeliveries>; via: () => VoteVia };
  give: VoteRewardGiveFunction;
  /** The loop's `grantTimeoutMs` (checked when it started), which bounds each give. */
  grantTimeoutMs: number;
  /** The loop's `staffAfterAttempts`: the failure policy of vote rows is the purchases'. */
  staffAfterAttempts: number;
  /** The loop's monotonic clock: a row whose give failed backs off on it as a purchase item does. */
  now: () => number;
}

/** What the vote rows left for a joining player need of the loop (`give` and `votes` unset: no vote rewards). */
export interface VotesAtJoin {
  player: Player;
  here: () => boolean;
  give: VoteRewardGiveFunction | undefined;
  votes: VoteInLoop['votes'] | undefined;
  grantTimeoutMs: number;
  staffAfterAttempts: number;
  now: () => number;
}

/**
 * The give of a vote reward row, refused once the player is no longer here; a failure backs
 * the row off by the purchases' give backoff (player.ts), and the loop's runs give it again then.
 */
function giveHere(loop: Pick<VoteInLoop, 'player' | 'here' | 'give' | 'now'>): VoteRewardGiveFunction {
  const give = loop.give;
  return (reward) => {
    if (!loop.here()) throw new Interrupted('left');
    return giveBackingOff(loop.player, give, reward, loop.now, true);
  };
}

/**
 * Gives the vote reward rows the journal holds for a player who just joined, or whose row's
 * give backoff is over (claimed already, so no store call: `resumeVoteRewards` for one
 * player); rows still backing off are left untouched. Reads nothing when neither (`resumed`:
 * the join's pass was done). True once done, or when the
 * loop has no `giveVoteReward`; false when the player left or the journal could not write (their
 * next run tries again; their next vote claim gives them too).
 */
export async function resumeVotesInLoop(loop: VotesAtJoin): Promise<boolean> {
  const { give, votes, player, now } = loop;
  if (give === undefined || votes === undefined || (player.votesResumed && !votesDue(player, now()))) return true;
  const deliveries = await votes.deliveries();
  try {
    const defer = (row: { deliveryId: string }) => backingOff(player, row.deliveryId, now());
    const report = await deliveries.resumeChecked(votes.via(), giveHere({ player, here: loop.here, give, now }), { signal: player.gone.signal, grantTimeoutMs: loop.grantTimeoutMs }, { staffAfterAttempts: loop.staffAfterAttempts, defer }, player.name);
    player.votePending = report.pending;
    // A player the journal failed for (in `errors`) sets `journalError` too.
    if (report.journalError !== undefined) return false;
    forgetDueVotes(player, now());
    return true;
  } catch (error) {
    // A journal that cannot be read fails the run like any journal trouble (a loop error, the backoff).
    if (error instanceof Interrupted) return false;
    throw error;
  }
}

/** Runs the vote claim; `OFFLINE` / `STOPPED` when the player leaves or the loop stops before it is done. */
export async function claimVoteInLoop(loop: VoteInLoop, input: LoopVoteInput): Promise<LoopVoteReport> {
  const { player, here } = loop;
  const base = loop.votes.via();
  const via: VoteVia = {
    ...base,
    // The vote call comes out of the loop's budget, like every call the loop makes.
    claimVoteReward: async (claim, options) => {
      await loop.call();
      // Gone while its turn came (left, or the loop stopping): nothing is sent. The player's
      // signal aborts whenever `here()` turns false, with the reason that says which.
      player.gone.signal.throwIfAborted();
      return base.claimVoteReward(claim, options);
    },
  };
  const give = giveHere(loop);
  const asked = input as Partial<LoopVoteInput> | undefined;
  const deliveries = await loop.votes.deliveries();
  // `running` in status(player) while the vote call (its gives included) runs.
  player.voting += 1;
  try {
    const report = await deliveries.deliverChecked(via, { player: player.name, reward: asked?.reward, amount: asked?.amount }, give, { signal: player.gone.signal, grantTimeoutMs: loop.grantTimeoutMs }, { staffAfterAttempts: loop.staffAfterAttempts });
    // What is left counts in `stats().pending` while the player is here, as their purchases do.
    player.votePending = report.pending;
    return report;
  } catch (error) {
    if (error instanceof Interrupted) return undelivered(error.why === 'left' ? 'OFFLINE' : 'STOPPED', player);
    throw error;
  } finally {
    player.voting -= 1;
    // A row whose give failed comes back when its backoff is over, not at the next poll (a
    // run in flight plans its own next; the plan of a player gone is stale, skipped).
    const { retry } = heldBack(player, loop.now());
    if (retry < (player.scheduled ? player.due : Number.POSITIVE_INFINITY) && player.running === undefined) loop.plan(retry);
  }
}
