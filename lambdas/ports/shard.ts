// A shard table's ports, narrow by use (item reads, item writes, copies, indexes, transactions), and the
// write preconditions, listing pages and version entries they speak in.
import type { Intent, KeySummary, StoredItem, TxnWriter } from './item';
import type { StorageCharge } from './quotas';

/**
 * What must hold for a write to happen; the store evaluates it atomically with the write. A tombstone's
 * or an expired item's version is no live version: it is in no `versions` and in no `exceptVersions`.
 * Version lists are non-empty and bounded (`limits.entityTagsMax`).
 */
export type WritePrecondition =
  | { kind: 'none' }
  /** The key has a live value (deletes, If-Match: *), at none of `exceptVersions` when given. */
  | { kind: 'live'; exceptVersions?: readonly number[] }
  /** The key has no live value: never written, deleted, or expired (If-None-Match: *). */
  | { kind: 'absent' }
  /** The key is live at one of these versions (If-Match with entity tags). */
  | { kind: 'versionIn'; versions: readonly number[] }
  /** The key is not live at any of these versions: absent, or live at another (If-None-Match with entity tags). */
  | { kind: 'versionNotIn'; versions: readonly number[] };

export interface ItemWrite {
  namespace: string;
  key: string;
  token: number;
  /** A tombstone when absent. */
  content?: {
    contentType: string;
    size: number;
    sha256: string;
    expiresAtSeconds?: number;
    value?: Uint8Array;
    blob?: { objectKey: string };
  };
  precondition: WritePrecondition;
  /** Evaluation time of `absent`/`live` (expired keys count as absent). */
  nowSeconds: number;
  /** Stored with the version (epoch ms), for the replication-lag metric. */
  modifiedAtMs: number;
  /** A DR key-sync write's notice id, stored on the item (StoredItem.writeId). */
  writeId?: string;
}

export interface WriteResult {
  version: number;
  previous?: StoredItem;
}

/** A key's item carrying another transaction's intent: the key is locked until the intent is resolved. */
export type LockedItem = StoredItem & { intent: Intent };

/** The write's own condition did not hold; nothing was written. `current`: the item as it stood (absent: none). */
export interface PreconditionFailed {
  outcome: 'preconditionFailed';
  current?: StoredItem;
}

/** Another transaction's intent is on the key; nothing was written. `current` carries it, for resolution. */
export interface KeyLocked {
  outcome: 'locked';
  current: LockedItem;
}

/**
 * How a conditional write of one key ended: the expected outcomes are values, so a caller branches on
 * `outcome` (faults, a shard down, a timeout, are still thrown).
 */
export type ItemWriteOutcome = ({ outcome: 'written' } & WriteResult) | PreconditionFailed | KeyLocked;

/** How a transaction's intent placement ended; `placed` carries the item as it was (its committed content). */
export type IntentPlacementOutcome = { outcome: 'placed'; previous?: StoredItem } | PreconditionFailed | KeyLocked;

/**
 * One key of an atomic write on one shard: the stored version it was read at (absent: no item), and
 * the write it ends with (absent: the key is only checked, its version must still hold).
 */
export interface AtomicEntry {
  key: string;
  token: number;
  seenVersion: number | undefined;
  write?: {
    kind: Intent['kind'];
    contentType: string;
    size: number;
    sha256: string;
    value?: Uint8Array;
  };
}

export interface AtomicWrite {
  namespace: string;
  entries: AtomicEntry[];
  /** Makes a retried request (the SDK's retry of a request whose answer was lost) a no-op: the transaction id. */
  idempotencyToken: string;
  nowSeconds: number;
  modifiedAtMs: number;
  /** The transaction, recorded on each key it writes (StoredItem.writtenBy). */
  writtenBy?: TxnWriter;
}

/** Refused: a key was no longer as read (or a concurrent transaction held it); nothing was written. */
export type AtomicWriteResult = { committed: true } | { committed: false; key?: string };

/** A read of one partition of the listing index: one shard's keys of one bucket of a namespace. */
export interface ListQuery {
  namespace: string;
  /** The listing bucket (token mod shardSchema.keyIndex.buckets). */
  bucket: number;
  prefix: string;
  /** Return keys strictly after this one. */
  afterKey?: string;
  limit: number;
  nowSeconds: number;
}

export type ListPage =
  | { items: KeySummary[]; more: false }
  /** The shard stopped early: it may hold more matching keys after `resumeAfter` (the last key it examined). */
  | { items: KeySummary[]; more: true; resumeAfter: string };

/** A key's version as the token-ordered index holds it (anti-entropy compares these). */
export interface VersionEntry {
  namespace: string;
  key: string;
  token: number;
  version: number;
  tombstone: boolean;
  /** The content's SHA-256 (absent on an index built before it was projected): equal versions compare by it. */
  sha256?: string;
}

/** What a table holds of a key, as the change feed weighs a write an owner made after it lost the key's range. */
export interface HeldVersion {
  version: number;
  /**
   * The version of the last copy written here (a replica's, a move's, a repair's): every version up to it reached
   * this table by a copy. An owner write leaves it behind; absent when no copy was ever written since the item began.
   */
  copiedVersion?: number;
  modifiedAtMs?: number;
}

/** A shard table's items as reads see them. */
export interface ShardItemReads {
  get(table: string, namespace: string, key: string, options: { consistent: boolean }): Promise<StoredItem | undefined>;
  /** The version of a key a table holds and the version of its last copy there, read consistently; undefined if absent. */
  heldVersion(table: string, namespace: string, key: string): Promise<HeldVersion | undefined>;
  /**
   * Items of keys of one shard, read consistently (absent keys are missing from the map). `atomic`: at
   * one instant (TransactGetItems, at most atomicKeysMax keys); else a batch read.
   */
  getMany(table: string, namespace: string, keys: readonly string[], options: { atomic: boolean }): Promise<Map<string, StoredItem>>;
}

/** A client's write of one key: the version check and the storage charge. */
export interface ShardItemWrites {
  /**
   * Writes atomically with the next version, unless the precondition fails or a transaction's intent locks
   * the key (outcomes carrying the current item). With a `charge`, the namespace's usage counter changes in
   * the same transaction, only if the item is still at the charge's version (else `preconditionFailed`) and
   * the quota holds (else it throws `quota.keys` / `quota.bytes`; `txn.conflict` when a concurrent
   * transaction on the item or the counter cancelled it).
   */
  write(table: string, write: ItemWrite, charge?: StorageCharge): Promise<ItemWriteOutcome>;
}

/** The copies kept in step with their owner: replication, repair, failover, rebalancing. */
export interface ShardCopies {
  /**
   * Stores a copy of an owner's item on a replica only if it is strictly newer than what the replica
   * holds (or what it holds has expired). Returns false when the replica already had this version or newer.
   * `listed`: the table is the key's owner (a repair of the owner's copy), so a live copy joins the listing index.
   * `ownerWrite`: the owner takes a committed write no owner made (a stranded transaction's, rolled forward from its
   * record when its owner changed): stored without the copy mark and with its transaction writer (`writtenBy`), so the
   * change feed sees the write it is, with its txid.
   */
  applyReplica(table: string, item: StoredItem, options: { nowSeconds: number; listed: boolean; ownerWrite?: boolean }): Promise<boolean>;
  /**
   * Puts the table's live copies of these keys into the listing index: the table has become their owner
   * (a failover handed it their range). Tombstones and absent keys are left alone. Returns how many joined.
   */
  listAsOwner(table: string, entries: readonly VersionEntry[]): Promise<number>;
  /**
   * A rejoining shard's copy replaced by the owner's (`item`), or removed (`item` undefined), only while
   * it is still at `expectVersion`: the copy the owner never saw (docs/failover.md, "Return"). Unlike
   * applyReplica it may move the copy to an older or equal version. False when the copy changed.
   */
  resetCopy(table: string, ref: { namespace: string; key: string; expectVersion: number }, item: StoredItem | undefined): Promise<boolean>;
}

/** The shard's two indexes: the listing (owners' live keys) and the token order (every copy). */
export interface ShardIndexes {
  /** The owner's live keys of one listing partition, in key order (replicas' copies are not listed). */
  list(table: string, query: ListQuery): Promise<ListPage>;
  /** The versions of every key whose token is in (start, end], in token order, read from the token index. */
  versionsInRange(table: string, range: { start: number; end: number }): Promise<VersionEntry[]>;
}

/** What transactions do on a shard: one-shard atomic writes and intents. */
export interface ShardTransactions {
  /**
   * Writes and checks keys of one shard in one atomic request (TransactWriteItems, at most atomicKeysMax
   * entries): each key must hold the version it was read at and no intent; each write gets that version + 1.
   */
  writeAtomically(table: string, input: AtomicWrite): Promise<AtomicWriteResult>;
  /**
   * Places a transaction's intent on a key, atomically with its expectations: `placed` with the item as it
   * was (its committed content), `locked` when another transaction's intent is there, `preconditionFailed`
   * when an expectation does not hold. Placing the same transaction's intent again is `placed`.
   */
  placeIntent(table: string, input: IntentPlacement): Promise<IntentPlacementOutcome>;
  /** Makes the intent of `txid` the key's content with the next version; undefined when it is not there. */
  applyIntent(
    table: string,
    input: { namespace: string; key: string; txid: string; kind: Intent['kind']; nowSeconds: number; modifiedAtMs: number },
  ): Promise<StoredItem | undefined>;
  /** Removes the intent of `txid` (abort); false when it was not there. */
  clearIntent(table: string, input: { namespace: string; key: string; txid: string }): Promise<boolean>;
  intentsOf(keys: readonly KeyRef[]): Promise<Array<Pick<Intent, 'txid' | 'kind'> | undefined>>;
}

/**
 * Every port of a shard table, as its adapter implements them (dynamodb-shard-store.ts). Each method takes
 * the table it acts on: one DynamoDB shard table per call. A service names the narrow ports it uses
 * (ShardItemReads, ShardItemWrites, ShardCopies, ShardIndexes, ShardTransactions).
 */
export interface ShardStore extends ShardItemReads, ShardItemWrites, ShardCopies, ShardIndexes, ShardTransactions {}

/** A key on one shard table. */
export interface KeyRef {
  table: string;
  namespace: string;
  key: string;
}

export interface IntentPlacement {
  namespace: string;
  key: string;
  token: number;
  intent: Intent;
  /** The version the key must be at (0: not live). */
  expectVersion?: number;
  mustBeLive: boolean;
  nowSeconds: number;
}
