// Rebalancing (docs/rebalancing.md): the bulk range operations a move needs from a shard table, and the
// job record the workflow checkpoints into.
import type { StoredItem } from './item';

/** Where a range copy resumes: just after this key of the token index (its partition, sort key and item key). */
export interface RangeCursor {
  bucket: number;
  token: number;
  /** The item key (`namespace#key`). */
  pk: string;
}

export interface RangePage {
  /** Items in token order, read consistently from the table (tombstones and expired ones included). */
  items: StoredItem[];
  /** Absent after the range's last item. */
  next?: RangeCursor;
}

/** A token range, (start, end], which may wrap past the top of the token space. */
export interface TokenSpan {
  start: number;
  end: number;
}

/** The bulk reads and writes of a range move, on one shard table at a time. */
export interface RangeStore {
  /** Up to `limit` items of the keys whose token is in `range`, from just after `after` (the start when absent). */
  itemsInRange(table: string, range: TokenSpan, page: { after?: RangeCursor; limit: number }): Promise<RangePage>;
  /**
   * Copies items to `table`, each only where it is newer than the copy there (or that copy expired), as
   * applyReplica does: a copy never moves a key backwards. `listed`: the table is about to own them, so
   * live copies join the listing index, and a copy already there at the same version, unlisted, is
   * rewritten listed. Returns how many were written.
   */
  copyItems(table: string, items: readonly StoredItem[], options: { nowSeconds: number; listed: boolean }): Promise<number>;
  /**
   * Writes items to `table` as they are, with no condition (a backfill: BatchWriteItem, many to a request).
   * Only for a table that takes no write of these keys meanwhile: it would put an older version over a
   * newer one. `listed` as for copyItems. Returns how many were written.
   */
  backfillItems(table: string, items: readonly StoredItem[], options: { listed: boolean }): Promise<number>;
  /** Removes these keys' copies from a table that no longer holds their range (a move's cleanup). */
  removeCopies(table: string, keys: ReadonlyArray<{ namespace: string; key: string }>): Promise<void>;
}

/**
 * How far one moving range has come, as the job reports it: `planned`, then `backfilled` (its owner's
 * items written to its new replicas while they take no live write of it), `copying` (they take every
 * write; what was written during the backfill is caught up), `cutover` (its hand-over), `moved`, `cleaned`.
 */
export type RangeStage = 'planned' | 'backfilled' | 'copying' | 'cutover' | 'moved' | 'cleaned';

/** A digest of a set of keys at their versions: equal digests, equal sets (rebalance.ts versionDigest). */
export interface VersionDigest {
  keys: number;
  /** The sum modulo 2^64 of each key's 64-bit hash of (namespace, key, version), in hex: order does not matter. */
  digest: string;
}

export interface RangeProgress {
  start: number;
  end: number;
  /** Replicas (shard ids, owner first) before and after the rebalance. */
  from: number[];
  to: number[];
  stage: RangeStage;
  /** Items copied to the range's new replicas (copy and catch-up). */
  keysCopied: number;
  /** Keys the cut-over compared on the old owner and the new replicas (all equal once it passed). */
  keysVerified?: number;
  /**
   * Keys the catch-up's last comparison still found behind on the new replicas (on their way by the
   * stream). At 0 the new replicas held every key at the owner's version after the range took live
   * writes: a range whose owner stays is then cut over without comparing it again.
   */
  keysBehind?: number;
  /**
   * What the backfill wrote to the range's new replicas: how many items, and a digest of their keys and
   * versions (rebalance.ts versionDigest), saved with each page. The catch-up compares the owner's
   * versions with it before it reads the new replicas' (it needs them only if the owner changed since).
   */
  backfilled?: VersionDigest;
  /** Keys removed from the replicas the range left. */
  keysCleaned?: number;
}

/**
 * `paused` also when its workflow stopped on an error it could not get past (a shard that does not answer
 * for minutes): `message` says why, and a resume goes on from the checkpoint.
 */
export type RebalanceStatus = 'running' | 'paused' | 'cancelling' | 'cancelled' | 'done';

export interface RebalanceChange {
  /** Shards added (ids; their tables come from the topology). */
  join: number[];
  /** Shards removed: their ranges go to their successors; their tables are kept, emptied of the moved keys. */
  leave: number[];
}

export interface RebalanceJob {
  id: string;
  change: RebalanceChange;
  status: RebalanceStatus;
  /** A pause or cancel asked for through the admin API: the workflow acts on it between two steps. */
  requested?: 'pause' | 'cancel';
  /** The copy's ceiling, keys per second over all ranges (0: no ceiling). */
  rateKeysPerSecond: number;
  /** Every range whose replicas change, in token order. */
  ranges: RangeProgress[];
  /** The range being copied (its end token) and where its copy resumes. */
  cursor?: { end: number; after?: RangeCursor };
  startedAtMs: number;
  updatedAtMs: number;
  finishedAtMs?: number;
  /**
   * When the step that finished the ring (joining shards active, leaving ones gone) saw it finished: the
   * cleanup waits until every handler's ring is at least that new, counted from here, however many steps
   * (a crash, a budget spent) the cleanup takes.
   */
  ringFinishedAtMs?: number;
  /**
   * Set once it is cancelled: how many ranges it had and how many had begun to move. Its ring is then
   * reversed and `ranges` are the moves back (status `cancelling`, then `cancelled`).
   */
  cancelledFrom?: { ranges: number; moved: number };
  /** Why its workflow stopped (it is then paused), for the status. */
  message?: string;
  /** Bumped by every save: a save from a stale read is refused. */
  revision: number;
}

export interface RebalanceJobStore {
  /** The current (or last) rebalance; one runs at a time. */
  current(): Promise<RebalanceJob | undefined>;
  /** Saves `job` if the stored one is still at `job.revision - 1` (or absent, for revision 1); false otherwise. */
  save(job: RebalanceJob): Promise<boolean>;
}

/** Starts the workflow that drives a rebalance (Step Functions in AWS, aws-local-stepfunctions locally). */
export interface RebalanceStarter {
  /** `run` names the execution (a resume starts a new one). False when it exists already. */
  start(input: { id: string; run: string }): Promise<boolean>;
}
