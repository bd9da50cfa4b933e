/**
 * `teamgames journal` with its modules loaded afresh for each test (issue #46 point 2):
 * what is decided at module level (the pattern of a URL's password, masked in a driver's
 * message) is seen by StrykerJS only in a suite that loads it after each mutant is set.
 * Nothing here imports the command statically; the drivers are the test's.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Program from '../../src/cli/program.js';
import type * as Support from '../support/cli.js';

let program: typeof Program;
let support: typeof Support;
beforeEach(async () => {
  vi.resetModules();
  program = await import('../../src/cli/program.js');
  support = await import('../support/cli.js');
});

/** `teamgames <argv>` in process, the database driver `pg` a pool whose every query fails with `message`. */
async function failingWith(argv: string[], message: string, env: Record<string, string>) {
  const out = { stdout: '', stderr: '' };
  const Pool = class {
    query = async () => Promise.reject(new Error(message));
    connect = async () => Promise.reject(new Error(message));
    on() {}
    end = async () => {};
  };
  const io = { stdout: support.stream((t) => (out.stdout += t)), stderr: support.stream((t) => (out.stderr += t)), interactive: false, confirm: async () => false };
  const code = await program.runTeamgames(argv, io, env, {}, { now: () => 0, importDriver: async () => ({ Pool }) });
  return { code, ...out };
}

describe("teamgames journal: a URL's password in a driver's message", () => {
  it('masked wherever the URL starts: after a space, a parenthesis or a quote', async () => {
    const r = await failingWith(
      ['journal', 'pending', '--postgres-env', 'DB'],
      `could not connect to postgres://u:hunter2@h:5432/db (from 'postgresql://v:swordfish@h2/db') [mysql://w:letmein@h3/db]`,
      { DB: 'postgres://u@h/db' },
    );
    expect(r).toEqual({
      code: program.EXIT.FAILURE,
      stdout: '',
      stderr: `teamgames journal: PostgresJournal: could not read the journal: could not connect to postgres://u:***@h:5432/db (from 'postgresql://v:***@h2/db') [mysql://w:***@h3/db]\n`,
    });
  });
});
