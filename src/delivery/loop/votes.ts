/**
 * The delivery loop's `claimVote`: a `::vote` command run as `deliverVoteReward`, its call
 * out of the loop's budget, its give only for a player still here. And the vote reward rows
 * a crash (or a failed give) left in the journal, given when the player joins.
 *
 * @module
 * @internal
 */
import type { LoopVoteInput, LoopVoteReport } from './types.js';
import { Interrupted, undelivered, type Player } from './player.js';
import type { VoteRewardGiveFunction } from '../votes/index.js';
import type { VoteDeliveries, VoteVia } from '../votes/index.js';

/** What `claimVote` needs of the loop for one online player. */
export interface VoteInLoop {
  player: Player;
  /** The player is still online here and the loop runs. */
  here: () => boolean;
  /** Takes one call out of the loop's budget (and counts it); rejects when the player leaves. */
  call: () => Promise<void>;
  /** The client's vote rewards (loaded on first use) and its caller. */
  votes: { deliveries: () => Promise<VoteDeliveries>; via: () => VoteVia };
  give: VoteRewardGiveFunction;
  /** The loop's `grantTimeoutMs`, which bounds each give (the default when unset). */
  giveTimeoutMs: number | undefined;
}

/** What the vote rows left for a joining player need of the loop (`give` and `votes` unset: no vote rewards). */
export interface VotesAtJoin {
  player: Player;
  here: () => boolean;
  give: VoteRewardGiveFunction | undefined;
  votes: VoteInLoop['votes'] | undefined;
  giveTimeoutMs: number | undefined;
}

/** The give of a vote reward row, refused once the player is no longer here. */
function giveHere(loop: Pick<VoteInLoop, 'here' | 'give'>): VoteRewardGiveFunction {
  return (reward) => {
    if (!loop.here()) throw new Interrupted('left');
    return loop.give(reward);
  };
}

/**
 * Gives the vote reward rows the journal holds for a player who just joined (claimed
 * already, so no call: `resumeVoteRewards` for one player). True once done, or when the
 * loop has no `giveVoteReward`; false when the player left or the journal could not write (their
 * next run tries again; their next vote claim gives them too).
 */
export async function resumeVotesInLoop(loop: VotesAtJoin): Promise<boolean> {
  const { give, votes } = loop;
  if (give === undefined || votes === undefined) return true;
  const deliveries = await votes.deliveries();
  try {
    const report = await deliveries.resume(votes.via(), giveHere({ here: loop.here, give }), { signal: loop.player.gone.signal, giveTimeoutMs: loop.giveTimeoutMs }, loop.player.name);
    // A player the journal failed for (in `errors`) sets `journalError` too.
    return report.journalError === undefined;
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
  try {
    return await deliveries.deliver(via, { player: player.name, reward: asked?.reward, amount: asked?.amount }, give, { signal: player.gone.signal, giveTimeoutMs: loop.giveTimeoutMs });
  } catch (error) {
    if (error instanceof Interrupted) return undelivered(error.why === 'left' ? 'OFFLINE' : 'STOPPED', player);
    throw error;
  }
}
