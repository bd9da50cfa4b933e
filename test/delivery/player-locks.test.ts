/**
 * The per-player order every client of one journal shares (src/delivery/core/locks.ts):
 * one player's calls one after the other, in the order they came; other players at once;
 * an aborted wait leaves the queue as if it had never joined; and nothing is kept for a
 * player once their calls are done, so a bridge that serves players for months holds no
 * entry per player it ever saw.
 */
import { describe, expect, it } from 'vitest';
import { PlayerLocks } from '../../src/delivery/core/locks.js';
import { deferred } from '../support/answers.js';

/** Lets every queued callback run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('PlayerLocks', () => {
  it("runs one player's calls one after the other, in order, and other players' at once", async () => {
    const locks = new PlayerLocks();
    const log: string[] = [];
    const gates = [deferred(), deferred(), deferred()];
    const call = (player: string, name: string, gate: Promise<void>) =>
      locks.run(player, undefined, async () => {
        log.push(`${name} starts`);
        await gate;
        log.push(`${name} ends`);
        return name;
      });
    const a1 = call('Ann', 'a1', gates[0]!.promise);
    const a2 = call('Ann', 'a2', gates[1]!.promise);
    const b1 = call('Bo', 'b1', gates[2]!.promise);
    await settle();
    expect(log).toEqual(['a1 starts', 'b1 starts']);
    expect(locks.size).toBe(2);
    gates[1]!.resolve(); // a2's own gate opens first: it still waits for a1
    await settle();
    expect(log).toEqual(['a1 starts', 'b1 starts']);
    gates[0]!.resolve();
    expect(await a1).toBe('a1');
    expect(await a2).toBe('a2');
    expect(log).toEqual(['a1 starts', 'b1 starts', 'a1 ends', 'a2 starts', 'a2 ends']);
    gates[2]!.resolve();
    expect(await b1).toBe('b1');
  });

  it('a call that comes while the second of a player runs waits for it: the first one ending frees only its own turn', async () => {
    const locks = new PlayerLocks();
    const log: string[] = [];
    const second = deferred();
    const first = locks.run('Ann', undefined, async () => log.push('first'));
    const running = locks.run('Ann', undefined, async () => {
      log.push('second starts');
      await second.promise;
      log.push('second ends');
    });
    await first;
    await settle();
    expect(log).toEqual(['first', 'second starts']);
    const third = locks.run('Ann', undefined, async () => log.push('third'));
    await settle();
    expect(log).toEqual(['first', 'second starts']);
    second.resolve();
    await Promise.all([running, third]);
    expect(log).toEqual(['first', 'second starts', 'second ends', 'third']);
    expect(locks.size).toBe(0);
  });

  it('keeps nothing for a player once their calls are done: 1,000 players leave no entry', async () => {
    const locks = new PlayerLocks();
    await Promise.all(Array.from({ length: 1_000 }, (_, i) => locks.run(`player-${i}`, undefined, async () => i)));
    // Twice for one player, the second queued behind the first.
    await Promise.all([locks.run('Ann', undefined, async () => 1), locks.run('Ann', undefined, async () => 2)]);
    expect(locks.size).toBe(0);
  });

  it('a call whose work throws rejects with its error, and the next call of the player runs', async () => {
    const locks = new PlayerLocks();
    const failing = locks.run('Ann', undefined, async () => {
      throw new Error('the game is down');
    });
    const next = locks.run('Ann', undefined, async () => 'granted');
    await expect(failing).rejects.toThrow('the game is down');
    expect(await next).toBe('granted');
    expect(locks.size).toBe(0);
  });

  it('a waiting call aborted rejects with signal.reason at once; the queue goes on as if it had never joined, and is freed after', async () => {
    const locks = new PlayerLocks();
    const first = deferred();
    const log: string[] = [];
    const running = locks.run('Ann', undefined, async () => {
      await first.promise;
      log.push('first');
    });
    const controller = new AbortController();
    const waiting = locks.run('Ann', controller.signal, async () => log.push('aborted one ran'));
    const third = locks.run('Ann', undefined, async () => log.push('third'));
    const reason = new Error('player left');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    await settle();
    // The third call still waits for the first, which holds the turn.
    expect(log).toEqual([]);
    first.resolve();
    await running;
    await third;
    expect(log).toEqual(['first', 'third']);
    await settle();
    expect(locks.size).toBe(0);
  });

  it('the last waiting call aborted: the entry is freed once the running call is done', async () => {
    const locks = new PlayerLocks();
    const first = deferred();
    const running = locks.run('Ann', undefined, () => first.promise);
    const controller = new AbortController();
    const waiting = locks.run('Ann', controller.signal, async () => undefined);
    controller.abort();
    await expect(waiting).rejects.toThrow();
    first.resolve();
    await running;
    await settle();
    expect(locks.size).toBe(0);
  });

  it('a call whose signal is already aborted rejects with its reason, joins nothing and runs nothing', async () => {
    const locks = new PlayerLocks();
    const reason = new Error('stopped');
    let ran = false;
    const refused = locks.run('Ann', AbortSignal.abort(reason), async () => (ran = true));
    expect(locks.size).toBe(0);
    await expect(refused).rejects.toBe(reason);
    expect(ran).toBe(false);
  });

  it("holds() is true inside the player's turn only: not for another player, another lock set, or once the turn is over", async () => {
    const locks = new PlayerLocks();
    const other = new PlayerLocks();
    const later = deferred<boolean>();
    const inside = await locks.run('Ann', undefined, async () => {
      // Runs after the turn is over, in the same async context.
      setTimeout(() => later.resolve(locks.holds('Ann')), 0);
      return { ann: locks.holds('Ann'), bo: locks.holds('Bo'), other: other.holds('Ann') };
    });
    expect(inside).toEqual({ ann: true, bo: false, other: false });
    expect(await later.promise).toBe(false);
    expect(locks.holds('Ann')).toBe(false);
  });

  it('holds() sees every turn the call runs inside, nested ones included', async () => {
    const locks = new PlayerLocks();
    const seen = await locks.run('Ann', undefined, () => locks.run('Bo', undefined, async () => [locks.holds('Ann'), locks.holds('Bo')]));
    expect(seen).toEqual([true, true]);
  });
});
