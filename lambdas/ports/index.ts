// The ground floor: the few methods the core needs from the outside world, and the data types they
// speak in. Adapters implement these; the core imports them; nothing here imports the core.
import type { CacheEntry } from './cache-entry';
import type { Consistency } from './consistency';
import type { Intent, KeySummary, StoredItem, TxnWriter } from './item';
import type { RingState } from './ring-state';
import type { DrMode } from './dr';
import type { RateLimit, StorageCharge, StorageQuota } from './quotas';

export type { CacheEntry } from './cache-entry';
export type { Consistency } from './consistency';
export * from './faults';
export type { BlobPointer, Intent, KeySummary, StoredItem, TxnWriter } from './item';
export type * from './orchestrator';
export type * from './quotas';
export type * from './audit';
export type * from './dr';
export type * from './rebalance';
export type {
  AddedReplica,
  MovePhase,
  RangeFence,
  RangeMove,
  RangeOwner,
  RejoinEntry,
  RingShard,
  RingState,
  ShardStatus,
} from './ring-state';

export interface Clock {
  /** Wall-clock epoch ms: what is stored (versions' times, TTLs, deadlines). */
  nowMs(): number;
  /** A clock that never steps back, for measuring elapsed time in this process (leases). */
  monotonicMs(): number;
}

export interface IdSource {
  /** A fresh random identifier (UUID v4 in production). */
  newId(): string;
  /** A fresh secret with at least 256 bits of entropy, URL-safe. */
  newSecret(): string;
}

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
}

export interface WriteResult {
  version: number;
  previous?: StoredItem;
}

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

/** A shard table's items as reads see them. */
export interface ShardItemReads {
  get(table: string, namespace: string, key: string, options: { consistent: boolean }): Promise<StoredItem | undefined>;
  /**
   * Items of keys of one shard, read consistently (absent keys are missing from the map). `atomic`: at
   * one instant (TransactGetItems, at most atomicKeysMax keys); else a batch read.
   */
  getMany(table: string, namespace: string, keys: readonly string[], options: { atomic: boolean }): Promise<Map<string, StoredItem>>;
}

/** A client's write of one key: the version check and the storage charge. */
export interface ShardItemWrites {
  /**
   * Writes atomically with the next version; throws PreconditionFailedError carrying the current item.
   * With a `charge`, the namespace's usage counter changes in the same transaction, only if the item is
   * still at the charge's version and the quota holds (else `quota.keys` / `quota.bytes`).
   */
  write(table: string, write: ItemWrite, charge?: StorageCharge): Promise<WriteResult>;
}

/** The copies kept in step with their owner: replication, repair, failover, rebalancing. */
export interface ShardCopies {
  /**
   * Stores a copy of an owner's item on a replica only if it is strictly newer than what the replica
   * holds (or what it holds has expired). Returns false when the replica already had this version or newer.
   * `listed`: the table is the key's owner (a repair of the owner's copy), so a live copy joins the listing index.
   */
  applyReplica(table: string, item: StoredItem, options: { nowSeconds: number; listed: boolean }): Promise<boolean>;
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
   * Places a transaction's intent on a key, atomically with its expectations, and returns the item
   * as it was (its committed content). Throws IntentConflictError when another transaction's intent
   * is there, PreconditionFailedError (carrying the item) when an expectation does not hold.
   */
  placeIntent(table: string, input: IntentPlacement): Promise<StoredItem | undefined>;
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

export type TxnStatus = 'pending' | 'committed' | 'aborted';

/** A key a transaction writes, as its record lists it for recovery. */
export interface TxnKeyRef {
  table: string;
  namespace: string;
  key: string;
  kind: Intent['kind'];
}

/**
 * A committed transaction's write as its decision records it: the version the key takes and its
 * content. The intent on the owner holds the same; this copy lets a failover apply the write on a
 * new owner when the owner that held the intent fails before applying it (docs/failover.md).
 */
export interface TxnCommittedWrite {
  namespace: string;
  key: string;
  token: number;
  version: number;
  kind: Intent['kind'];
  contentType: string;
  size: number;
  sha256: string;
  value?: Uint8Array;
}

export interface TxnRecord {
  txid: string;
  status: TxnStatus;
  createdAtMs: number;
  /** After this a pending transaction may be aborted by anyone (its coordinator is presumed gone). */
  deadlineMs: number;
  keys: TxnKeyRef[];
  /** A committed transaction's writes, recorded with its decision. */
  writes?: TxnCommittedWrite[];
  reason?: string;
  conflictKey?: string;
}

/** The transaction table: one record per writing transaction; the decision is one conditional write. */
export interface TxnRecordStore {
  begin(record: TxnRecord): Promise<void>;
  find(txid: string): Promise<TxnRecord | undefined>;
  /** pending -> status; returns the record as it ends up (someone else's decision stands). */
  decide(
    txid: string,
    status: Exclude<TxnStatus, 'pending'>,
    details?: { reason?: string; conflictKey?: string; writes?: TxnCommittedWrite[] },
  ): Promise<TxnRecord | undefined>;
  /** Records whose deadline is in [fromMs, toMs), oldest first, at most `limit` (the recovery sweeper's walk). */
  dueBetween(fromMs: number, toMs: number, limit: number): Promise<TxnRecord[]>;
}

/** A replica write that could not be made: replayed on the replica before it serves reads again. */
export interface Hint {
  /** The replica's table. */
  target: string;
  item: StoredItem;
  createdAtMs: number;
}

/** The failure log (the `hints` table). */
export interface HintStore {
  add(hint: Hint): Promise<void>;
  /** The oldest hints of a target in (key, version) order, at most `limit`. */
  list(target: string, limit: number): Promise<Hint[]>;
  remove(hint: Hint): Promise<void>;
  /** Hints waiting per target (bounded count, for status pages). */
  count(target: string): Promise<number>;
}

export type ShardHealthStatus = 'available' | 'unavailable' | 'recovering';

export interface ShardHealth {
  table: string;
  status: ShardHealthStatus;
  sinceMs: number;
  reason?: string;
}

/** Which shards may serve reads: a shard marked unavailable serves again only after its hints are replayed. */
export interface ShardHealthStore {
  /** Every shard with a health record; a shard without one is available. Adapters may cache briefly. */
  all(): Promise<Map<string, ShardHealth>>;
  markUnavailable(table: string, reason: string, nowMs: number): Promise<void>;
  /** unavailable -> recovering; false when the shard was not unavailable. */
  beginRecovery(table: string, nowMs: number): Promise<boolean>;
  /** recovering -> available; false when someone marked it unavailable again meanwhile. */
  completeRecovery(table: string, nowMs: number): Promise<boolean>;
}

/** Per-namespace defaults for requests that do not name a consistency. */
export interface NamespaceSettings {
  namespace: string;
  readConsistency: Consistency;
  writeConsistency: Consistency;
  /** How the namespace's writes reach a DR backup region (docs/dr.md); absent: `key-sync`. */
  drMode?: DrMode;
  /** The namespace's own request rate; absent: the deployment's default. */
  rate?: RateLimit;
  /** The namespace's storage quota; absent: none. */
  storage?: StorageQuota;
}

export interface NamespaceSettingsStore {
  settingsOf(namespace: string): Promise<NamespaceSettings | undefined>;
  saveSettings(settings: NamespaceSettings): Promise<void>;
}

/** Replication observations (lag, hints, repairs); adapters publish them as metrics. */
export interface ReplicationMetrics {
  replicaApplied(lagMs: number): void;
  hintWritten(target: string): void;
}

/** Failover observations (docs/operations.md, "Failover metrics"). */
export interface FailoverMetrics {
  /**
   * A write or strong read not answered from the shard it was routed to: its range was fenced
   * (`fenced`, answered a retryable 503) or the ring moved while it ran (`stale`, sent again).
   */
  routeRefused(reason: 'fenced' | 'stale'): void;
  /** A failover or move-back ended: its status, its time from request to report, and the ranges it moved. */
  failoverFinished(outcome: { status: FailoverStatus; action: FailoverAction; durationMs: number; rangesMoved: number }): void;
  /** A rejoining shard held this many copies its ranges' new owners never saw. */
  divergentFound(count: number): void;
}

export interface BlobStore {
  put(objectKey: string, bytes: Uint8Array, contentType: string): Promise<void>;
  get(objectKey: string): Promise<Uint8Array>;
  /** Size of an object, or undefined when it does not exist. */
  size(objectKey: string): Promise<number | undefined>;
  /** Lowercase hex sha256 of an object's bytes, computed by streaming. */
  sha256(objectKey: string): Promise<string>;
  copy(fromKey: string, toKey: string): Promise<void>;
  delete(objectKey: string): Promise<void>;
  presignPut(
    objectKey: string,
    options: { contentType: string; expiresInSeconds: number },
  ): Promise<{ url: string; headers: Record<string, string> }>;
  presignGet(objectKey: string, options: { expiresInSeconds: number }): Promise<string>;
}

/** The ring record of the control table; every change of it is fenced by its epoch. */
export interface RingStore {
  /** The ring in force, read consistently; undefined before the deployment's bootstrap wrote one. */
  readRing(): Promise<RingState | undefined>;
  /** Stores `initial` unless a ring exists; returns the ring in force either way. */
  ensureRing(initial: RingState): Promise<RingState>;
  /**
   * Replaces the ring in force by `next` (whose epoch is one more) in one conditional write, only if the
   * ring in force is still at `next.epoch - 1`. False when another change won: nothing was written.
   */
  publishRing(next: RingState): Promise<boolean>;
}

export type Role = 'user' | 'admin';

export interface ApiKeyRecord {
  keyId: string;
  /** Lowercase hex sha256 of the secret; the secret itself is never stored. */
  secretHash: string;
  namespace: string;
  role: Role;
  createdAt: string;
  revokedAt?: string;
  description?: string;
  /** After it (ISO time) the key no longer authenticates. */
  expiresAt?: string;
  /** The last time (ISO) the authorizer accepted the key, recorded at most once a minute. */
  lastUsedAt?: string;
  /** A rotated key's previous secret's hash, which also authenticates until `previousSecretExpiresAt`. */
  previousSecretHash?: string;
  previousSecretExpiresAt?: string;
  /** When the key was last rotated (ISO). */
  rotatedAt?: string;
}

/** A rotation: the new secret's hash, and the old one's kept for a grace period. */
export interface ApiKeyRotation {
  secretHash: string;
  previousSecretHash: string;
  previousSecretExpiresAt: string;
  rotatedAt: string;
  expiresAt?: string;
}

export interface ApiKeyStore {
  find(keyId: string): Promise<ApiKeyRecord | undefined>;
  create(record: ApiKeyRecord): Promise<void>;
  /** Marks the key revoked; returns the updated record, or undefined when the key does not exist. */
  revoke(keyId: string, revokedAt: string): Promise<ApiKeyRecord | undefined>;
  list(): Promise<ApiKeyRecord[]>;
  /**
   * Rotates a key not revoked, only while its secret is still `expectSecretHash` (two rotations at once:
   * one wins); returns the updated record, or undefined when the key is absent, revoked or rotated meanwhile.
   */
  rotate(keyId: string, rotation: ApiKeyRotation, expectSecretHash: string): Promise<ApiKeyRecord | undefined>;
  /** Records a use at `usedAt` unless one after `notBefore` is recorded already (one write a minute at most). */
  recordUse(keyId: string, usedAt: string, notBefore: string): Promise<void>;
}

/** An IAM principal allowed in: the role or user it is, and the namespace and role it acts as. */
export interface PrincipalMapping {
  /** The ARN as the admin gave it (a role or user, with its path if it has one). */
  principalArn: string;
  /** What callers are matched on: the same ARN without its path (docs/security.md, "IAM authentication"). */
  matchArn: string;
  namespace: string;
  role: Role;
  createdAt: string;
  description?: string;
}

export interface PrincipalMappingStore {
  find(matchArn: string): Promise<PrincipalMapping | undefined>;
  /** False when a mapping of that match ARN exists already: nothing was written. */
  create(mapping: PrincipalMapping): Promise<boolean>;
  /** The mapping removed, or undefined when there was none. */
  delete(matchArn: string): Promise<PrincipalMapping | undefined>;
  /** At most `limit` mappings, in match ARN order. */
  list(limit: number): Promise<PrincipalMapping[]>;
}

/** The shared cache (L2: Redis/ElastiCache). Implementations never throw: a failure is a miss. */
export interface RemoteCache {
  get(cacheKey: string): Promise<CacheEntry | undefined>;
  /** Version-guarded: stores only if the cache holds no version >= entry.version. */
  put(cacheKey: string, entry: CacheEntry, ttlMs: number): Promise<boolean>;
}

/** The read cache the KV service consults for eventual reads and writes through on every write. */
export interface ValueCache {
  get(namespace: string, key: string): Promise<CacheEntry | undefined>;
  /** Write-through of a write: always reaches every level. */
  put(namespace: string, key: string, entry: CacheEntry): Promise<void>;
  /**
   * Population by a read; may skip levels that already hold this version. Returns at once: this
   * instance's level holds the entry on return, a shared level learns it in the background.
   */
  refresh(namespace: string, key: string, entry: CacheEntry): void;
}

/** Where the maintenance job resumes its walk of the ring, and what its last run reported (for the status page). */
export interface MaintenanceState {
  nextRange: number;
  /** When the last anti-entropy slice began (absent: none yet, or saved before it was kept). */
  antiEntropyAtMs?: number;
  lastReport: unknown;
}

export interface MaintenanceStateStore {
  readMaintenanceState(): Promise<MaintenanceState | undefined>;
  saveMaintenanceState(state: MaintenanceState): Promise<void>;
}

/** Where the transaction sweeper resumes: deadlines before this are done. */
export interface SweeperState {
  sweptUntilMs: number;
}

export interface SweeperStateStore {
  readSweeperState(): Promise<SweeperState | undefined>;
  saveSweeperState(state: SweeperState): Promise<void>;
}

/** What starts a failover of a shard: a request that could not reach it, the probe, or an admin. */
export interface FailoverRequest {
  /** Unique per shard and ring epoch: starting the same one twice runs it once. */
  id: string;
  shard: number;
  reason: string;
  requestedAtMs: number;
  /**
   * `failOver` (the default): the shard's ranges go to live replicas. `moveBack`: the ranges a failover
   * took from the shard, now rejoined, go back to it (the vnode walk's owner again).
   */
  action?: FailoverAction;
}

export type FailoverAction = 'failOver' | 'moveBack';

/** `notDown`: the shard answered, nothing changed; `notReady`: a move-back found nothing to move or the shard not rejoined. */
export type FailoverStatus = 'running' | 'notDown' | 'notReady' | 'completed' | 'lost' | 'aborted';

/** One failover as its record in the control table keeps it (GET /v1/admin/failovers). */
export interface FailoverRecord extends FailoverRequest {
  status: FailoverStatus;
  updatedAtMs: number;
  /** The report of the finished workflow: confirmation, fence, each range's choice, publication. */
  report?: unknown;
}

export interface FailoverLog {
  save(record: FailoverRecord): Promise<void>;
  /** The most recent failovers first, at most `limit`. */
  recent(limit: number): Promise<FailoverRecord[]>;
}

/** Starts the failover workflow (Step Functions in AWS, aws-local-stepfunctions locally). */
export interface FailoverStarter {
  /** False when a run with this id exists already (started earlier): nothing new runs. */
  start(request: FailoverRequest): Promise<boolean>;
}
