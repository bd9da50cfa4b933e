/**
 * What the crash campaign's orchestrator and its worker exchange: the worker's config
 * (one JSON line on stdin), and the lines of the files the worker writes and the
 * orchestrator counts.
 *
 * @module
 */
import type { DeliveryMode } from '../../../src/index.js';
import type { ScenarioConfig } from '../scenario.js';

/** What the orchestrator passes to a worker (argv[2], JSON). */
export interface WorkerConfig extends ScenarioConfig {
  /** Base URL of the mock (loopback). */
  url: string;
  apiKey: string;
  mode: DeliveryMode;
  /** Where the journal lives; `file` unless the campaign runs several nodes on a database. */
  journal: 'file' | 'postgres' | 'mysql';
  /** The FileJournal's path (`journal: 'file'`). */
  journalPath: string;
  /** The shared tables (database journals). */
  db?: WorkerDb;
  /** The mock clock's offset shared by the nodes (database journals): 8 bytes, a float64. */
  clockPath?: string;
  /** The inventory file (`journal: 'file'`). */
  inventoryPath: string;
  unverifiedPath: string;
  logPath: string;
  players: string[];
  /** Seeds the grant failures and the player picks of this run. */
  seed: number;
  /** Run number, for the log. */
  run: number;
  /** Probability that a grant throws (before applying anything). */
  grantFailRate: number;
  /** Concurrent deliver loops. */
  lanes: number;
  /** Final drain: no failures, stop when everything is delivered. */
  drain: boolean;
  /** The node (slot) this worker runs as: 0 with a file journal. */
  node: number;
  /** `--loop`: the worker runs the delivery loop instead of calling deliver (worker/loop.ts). */
  loop?: WorkerLoop;
  /** `--flaky-journal`: the journal refuses acknowledge (and some appends) in stretches of the campaign's clock drawn from this seed (worker/flaky-journal.ts); not in the drain. */
  flakyJournal?: FlakyJournalConfig;
}

/**
 * The delivery loop of a `--loop` worker. Presence changes come after the config, one JSON
 * line each on stdin: `{"join":"<player>"}` or `{"leave":"<player>"}`.
 */
export interface WorkerLoop {
  pollIntervalMs: number;
  maxCallsPerSecond: number;
  /** The players online on this node when the run begins. */
  online: string[];
  /** The mock's clock moves about this many ms of virtual time per ms of real time (the loop's timers follow it). */
  speed: number;
  /** How far this node's view of the mock's clock may lag it (the orchestrator's step): every loop timer waits that much longer. */
  marginMs: number;
  /** A /claim typed by an online player every so many ms of real time. */
  claimEveryMs: readonly [number, number];
  /** The loop's `claimMode` (`--claim-mode`); absent: the loop's default, exactlyOnce. */
  claimMode?: DeliveryMode;
  /** `--hints`: with each /claim typed, a checkout hint (`loop.expect`) for another online player. */
  hints?: true;
}

/** `--flaky-journal`: the stretches of trouble, drawn from `seed` along the campaign's clock from `from` (its start). */
export interface FlakyJournalConfig {
  seed: number;
  from: number;
}

/** A presence change sent to a `--loop` worker. */
export type PresenceCommand = { join: string } | { leave: string };

/** A database journal's setting, for one node. */
export interface WorkerDb {
  url: string;
  /** The journal's table, shared by every node. */
  table: string;
  /** The dedupe table of `recordDelivery`. */
  grantedTable: string;
  /** The game's inventory table, shared by every node. */
  inventoryTable: string;
  /** This node's id; by default the journal's own (`<host>:<pid>:<random>`, new for each run). */
  nodeId?: string;
  lockTimeoutMs: number;
  /** Connections of the node's pool (the journal's locks and the game's transactions share it). */
  poolSize: number;
}

/** One line of the inventory file. */
export interface InventoryLine {
  deliveryId: string;
  player: string;
  product: string;
  units: number;
  run: number;
  pid: number;
  /** The node that applied it (database journals). */
  node?: number;
  /** `--loop`: false when the node did not hold the player as online when `give` was called. */
  online?: boolean;
}

/** One line of the unverified-windows file. */
export interface UnverifiedLine {
  playerName: string;
  from: number;
  to: number;
  operation: string;
  run: number;
  pid: number;
  /** The journal's window records (the drain): `unverified` (open) or `resolved`. */
  state?: 'unverified' | 'resolved';
}

/** A row of `GET /__mock/purchases` (the fields the campaign reads). */
export interface PurchaseRowLite {
  invoice: number;
  username: string;
  productid: string;
  givequantity: number;
  paymentstatus: string;
  deliverystatus: string;
  /** When the row was made (paid, for the campaign's `addPurchase` rows), on the mock's clock. */
  created: string;
  delivered: string | null;
}

/**
 * Where the drain writes the windows the journal holds (its `unverified` and `resolved`
 * records, written before each window is reported), as UnverifiedLines: a worker killed
 * between that write and onEvent reported the window durably all the same.
 */
export function journalWindowsPath(unverifiedPath: string): string {
  return `${unverifiedPath.replace(/\.jsonl$/, '')}.journal-windows.jsonl`;
}
