/**
 * A staff page in process for the tests: a real delivery loop on the mock and a memory
 * journal (or one the test gives), three accounts (alice and bob may resolve, rita reads),
 * a monotonic clock the test moves, and a fetch that keeps the cookie like a browser.
 */
import { MemoryJournal, StorefrontClient, type DeliveryLoop } from 'teamgames-sdk';
import { createMockService } from 'teamgames-sdk/mock';
import type { DeliveryJournal, JournalEntry } from '../../../src/journals/contract.js';
import type { BridgeLogger } from '../../../src/bridge/log.js';
import { hashPassword, type StaffAccount } from '../../../src/bridge/staff-page/accounts.js';
import { StaffDesk } from '../../../src/bridge/staff-page/desk.js';
import { startStaffPage, type StaffPage, type StaffPageOptions } from '../../../src/bridge/staff-page/server.js';
import { KEY, T0, storeSeed } from '../../support/fixtures.js';

export const PASSWORDS = { alice: 'alice-correct-horse', bob: 'bob-battery-staple', rita: 'rita-reads-only' } as const;
export const NOW = T0;
const HOUR = 3_600_000;

let accounts: Map<string, StaffAccount> | undefined;
/** The three accounts (hashed once per file: scrypt costs tens of ms). */
export async function testAccounts(): Promise<Map<string, StaffAccount>> {
  accounts ??= new Map<string, StaffAccount>([
    ['alice', { name: 'alice', role: 'resolve', hash: await hashPassword(PASSWORDS.alice) }],
    ['bob', { name: 'bob', role: 'resolve', hash: await hashPassword(PASSWORDS.bob) }],
    ['rita', { name: 'rita', role: 'read', hash: await hashPassword(PASSWORDS.rita) }],
  ]);
  return accounts;
}

/** A window record. */
export const windowEntry = (id: string, player: string, fields: Record<string, unknown> = {}): JournalEntry =>
  ({ deliveryId: `window:${id}`, playerName: player, state: 'unverified', from: NOW - 2 * HOUR, to: NOW - HOUR, cause: 'lostClaim', recordedAt: NOW - HOUR, ...fields }) as JournalEntry;

/** A pending purchase line. */
export const lineEntry = (id: string, player: string, product: string, units: number, fields: Record<string, unknown> = {}): JournalEntry =>
  ({
    deliveryId: `claim:${id}:0`,
    playerName: player,
    state: 'claimed',
    item: { player_name: player, product_id: 1, product_id_string: 'p1', product_name: product, product_price: 1, quantity_to_grant: units, quantity_purchased: 1, product_amount: 1, amount_purchased: 1 },
    recordedAt: NOW - HOUR,
    ...fields,
  }) as JournalEntry;

export interface LogLine {
  level: string;
  message: string;
  fields?: Record<string, unknown> | undefined;
}

export interface Page {
  url: string;
  journal: DeliveryJournal;
  loop: DeliveryLoop;
  desk: StaffDesk;
  logs: LogLine[];
  /** Moves the sessions' and the brake's clock. */
  advance(ms: number): void;
  /** A browser: its own cookie jar. */
  browser(): Browser;
}

export interface Browser {
  cookie: string | undefined;
  get(path: string): Promise<Reply>;
  post(path: string, form: Record<string, string>, headers?: Record<string, string>): Promise<Reply>;
  login(name: string, password: string): Promise<Reply>;
  /** The CSRF token of the last page that had a form. */
  csrf: string | undefined;
}

export interface Reply {
  status: number;
  text: string;
  headers: Headers;
}

const open: Array<{ page: StaffPage; loop: DeliveryLoop }> = [];
/** Closes every page the tests opened (call in afterEach). */
export async function closePages(): Promise<void> {
  for (const { page, loop } of open.splice(0)) {
    await page.close(0);
    await loop.stop();
  }
}

/** Starts a page over `entries` (or over `journal`). */
export async function startPage(entries: JournalEntry[] = [], overrides: Partial<StaffPageOptions> & { journal?: DeliveryJournal } = {}): Promise<Page> {
  const mock = createMockService({ seed: storeSeed, now: NOW });
  const journal = overrides.journal ?? new MemoryJournal();
  if (entries.length > 0) await journal.append(entries);
  const client = new StorefrontClient({ apiKey: KEY, fetch: mock.fetch, now: mock.clock.now, journal });
  const loop = client.startDeliveryLoop({ give: () => undefined, giveVoteReward: () => undefined, claimMode: 'fast' });
  const logs: LogLine[] = [];
  const log: BridgeLogger = {
    debug: (message, fields) => void logs.push({ level: 'debug', message, fields }),
    info: (message, fields) => void logs.push({ level: 'info', message, fields }),
    warn: (message, fields) => void logs.push({ level: 'warn', message, fields }),
    error: (message, fields) => void logs.push({ level: 'error', message, fields }),
    flush() {},
  };
  let clock = 1_000;
  const desk = new StaffDesk(() => NOW);
  const page = await startStaffPage({
    accounts: await testAccounts(),
    journal,
    loop,
    online: () => [],
    desk,
    log,
    host: '127.0.0.1',
    port: 0,
    sessionMs: HOUR,
    secureCookie: false,
    sink: 'webhook http://127.0.0.1:9/give',
    monotonic: () => clock,
    now: () => NOW,
    ...overrides,
  });
  open.push({ page, loop });
  const browser = (): Browser => {
    const b: Browser & { keep(response: Response): Promise<Reply> } = {
      cookie: undefined,
      csrf: undefined,
      async get(path) {
        return b.keep(await fetch(`${page.url}${path}`, { redirect: 'manual', headers: b.cookie === undefined ? {} : { cookie: b.cookie } }));
      },
      async post(path, form, headers = {}) {
        const response = await fetch(`${page.url}${path}`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...(b.cookie === undefined ? {} : { cookie: b.cookie }), ...headers },
          body: new URLSearchParams(form).toString(),
        });
        return b.keep(response);
      },
      async login(name, password) {
        return b.post('/login', { name, password });
      },
      async keep(response: Response): Promise<Reply> {
        const set = response.headers.get('set-cookie');
        if (set !== null) {
          const pair = set.split(';')[0] as string;
          b.cookie = pair.endsWith('=') ? undefined : pair;
        }
        const text = await response.text();
        const csrf = /name="csrf" value="([^"]+)"/.exec(text);
        if (csrf !== null) b.csrf = csrf[1];
        return { status: response.status, text, headers: response.headers };
      },
    };
    return b;
  };
  return { url: page.url, journal, loop, desk, logs, advance: (ms) => void (clock += ms), browser };
}
