/**
 * `teamgames bridge staff-hash <name> <read|resolve>`: reads a password on stdin (its first
 * line; never an argument, which `ps` shows) and prints the accounts-file line for it,
 * `name role scrypt$…`, to append to the file named by `staff.accountsFile`.
 *
 * @module
 * @internal
 */
import type { TeamgamesIo } from '../../host/io.js';
import { printable } from '../../common/printable.js';
import { COMMON_EXIT, UsageError } from '../../common/command-line.js';
import { hashPassword, staffNameProblem } from './accounts.js';

/** The text of `teamgames bridge staff-hash --help`. */
export const STAFF_HASH_USAGE = `Usage: teamgames bridge staff-hash <name> <read|resolve>  (password on stdin)

Prints one line of the staff page's accounts file (staff.accountsFile in bridge.json):
the name, the role (read: may look; resolve: may also resolve windows) and a scrypt
hash of the password read from the first line of stdin. Append it to the file, which
must be owned by the bridge's user and readable by it alone (chmod 600):

  read -rs -p 'Password: ' pw && printf '%s\\n' "$pw" | teamgames bridge staff-hash alice resolve >> staff-accounts
`;

const MAX_INPUT = 4096;

async function firstLine(stdin: AsyncIterable<Buffer | string>): Promise<string> {
  let text = '';
  for await (const chunk of stdin) {
    text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    if (text.includes('\n') || text.length > MAX_INPUT) break;
  }
  return (text.split(/\r?\n/)[0] ?? '').slice(0, MAX_INPUT + 1);
}

/** Runs `staff-hash` (argv after the word `staff-hash`); resolves the exit code. */
export async function runStaffHash(argv: readonly string[], io: TeamgamesIo, stdin: AsyncIterable<Buffer | string>): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout.write(STAFF_HASH_USAGE);
    return COMMON_EXIT.OK;
  }
  try {
    const [name, role, ...rest] = argv;
    if (name === undefined || role === undefined || rest.length > 0) throw new UsageError('give the name and the role: teamgames bridge staff-hash <name> <read|resolve>');
    const problem = staffNameProblem(name);
    if (problem !== undefined) throw new UsageError(`the name ${problem}`);
    if (role !== 'read' && role !== 'resolve') throw new UsageError('the role must be "read" or "resolve"');
    const password = await firstLine(stdin);
    if (password.length < 12) throw new UsageError('the password (first line of stdin) must be at least 12 characters');
    io.stdout.write(`${name} ${role} ${await hashPassword(password)}\n`);
    return COMMON_EXIT.OK;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`teamgames bridge staff-hash: ${printable(error.message)} (see teamgames bridge staff-hash --help)\n`);
    return COMMON_EXIT.USAGE;
  }
}
