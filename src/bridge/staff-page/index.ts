/**
 * The staff page of `teamgames bridge` (issue #48), wired from the bridge's parts: the
 * accounts file read (and refused when another user could read or change it), the desk
 * that records gives and the client's events, the page's listener. `bridge.ts` calls
 * {@link createStaffDesk} before the client (to receive its events) and
 * {@link openStaffPage} once the loop runs.
 *
 * @module
 * @internal
 */
import { inspectJournal, type DeliveryLoop } from '../../index.js';
import type { TeamgamesIo } from '../../host/io.js';
import type { DeliveryJournal } from '../../journals/contract.js';
import type { BridgeLogger } from '../log.js';
import { readAccounts } from './accounts.js';
import { StaffDesk, type Gives } from './desk.js';
import { startStaffPage, type StaffPage } from './server.js';
import type { StaffPageConfig } from './config.js';

export { staffConfigOf, staffSection, type StaffPageConfig } from './config.js';

/** A desk when the config has a staff page, else nothing. */
export function createStaffDesk(config: StaffPageConfig | undefined): StaffDesk | undefined {
  return config === undefined ? undefined : new StaffDesk();
}

/** What {@link openStaffPage} needs of the bridge. */
export interface StaffPageParts {
  desk: StaffDesk;
  journal: DeliveryJournal;
  loop: DeliveryLoop;
  online: () => Iterable<string>;
  log: BridgeLogger;
  sink: string;
  /** The bridge's redaction of its secrets, applied to every page. */
  redact: (text: string) => string;
}

/**
 * Reads the accounts and starts the page; `close()` stops it and its sampler.
 * @throws UsageError for an accounts file that is refused or wrong; the listen error.
 */
export async function openStaffPage(config: StaffPageConfig, parts: StaffPageParts): Promise<StaffPage> {
  const accounts = await readAccounts(config.accountsFile);
  const page = await startStaffPage({ ...parts, accounts, host: config.listen.host, port: config.listen.port, sessionMs: config.sessionMinutes * 60_000, secureCookie: config.secureCookie });
  parts.desk.start(
    () => parts.loop.stats(),
    async () => (await inspectJournal(parts.journal)).openWindows.length,
  );
  return {
    url: page.url,
    close: async (graceMs) => {
      parts.desk.stop();
      await page.close(graceMs);
    },
  };
}

/** The bridge's give functions, recorded by the desk when there is one. */
export function recorded(desk: StaffDesk | undefined, gives: Gives): Gives {
  return desk === undefined ? gives : desk.recording(gives);
}

/**
 * Runs `teamgames bridge staff-hash` (argv after the word `staff-hash`), its module loaded
 * now; resolves the exit code.
 */
export async function runStaffHash(argv: readonly string[], io: TeamgamesIo, stdin: AsyncIterable<Buffer | string>): Promise<number> {
  return (await import('./hash-command.js')).runStaffHash(argv, io, stdin);
}
