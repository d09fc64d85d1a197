// The KV use cases: route a key to its owner shard, version every write, keep large values in S3.
import { createHash } from 'node:crypto';
import { type Conditions, failureOf, planWrite, type WriteKind, type WritePlan } from './conditions';
import { IntentConflictError, PreconditionFailedError, RingstoreError, invariant, isRingstoreError } from './errors';
import { cacheEntryOf, type IntentResolver } from './intents';
import type {
  FailoverMetrics,
  FaultInjector,
  KeySummary,
  StoredItem,
  BlobStore,
  Clock,
  Consistency,
  IdSource,
  ItemWrite,
  ShardHealthStore,
  ShardStore,
  ValueCache,
  WritePrecondition,
  WriteResult,
  CacheEntry,
  DrMode,
  StorageQuota,
} from '../ports';
import type { DrShipper, PendingGate } from './dr';
import type { DrWriteGuard } from './dr-promotion';
import { isLive, tombstoneRetentionSeconds } from './item';
import { type Ring, tokenOf } from './ring';
import { isReadable, isShardFailure, type ReplicationService } from './replication';
import { validateKey } from './validation';
import type { RingLease, RingSource } from './ring-source';
import { blobPrefixes, shardSchema } from '../../schemas/topology';
import { mergeListing } from './listing';
import { hasStorageBound, storageChargeOf } from './quotas';

export type { Consistency } from '../ports';

/** Rounds of index reads one listing page may take (docs/api.md: a page may hold fewer keys than `limit`). */
const listRoundsMax = 4;

export interface KvLimits {
  keyBytesMax: number;
  valueBytesMax: number;
  directBodyBytesMax: number;
  inlineValueBytesMax: number;
  listLimitMax: number;
  ttlSecondsMax: number;
  presignedUrlTtlSeconds: number;
  entityTagsMax: number;
}

export interface KvDeps {
  shards: ShardStore;
  blobs: BlobStore;
  ring: RingSource;
  clock: Clock;
  ids: IdSource;
  limits: KvLimits;
  /** Strong writes fan out through it; eventual reads ask it which replicas may serve. */
  replication: ReplicationService;
  /** Listing refuses while a shard may not serve reads. */
  health: ShardHealthStore;
  /** Serves eventual reads and is written through on every write; absent: every read goes to DynamoDB. */
  cache?: ValueCache;
  /** Crash points and broken modes: test runs only. */
  faults?: FaultInjector;
  /** Resolves transactions' intents met by reads and writes (absent: intents are not expected). */
  intents?: IntentResolver;
  /** Counts the requests a fenced or moved range refused. */
  failoverMetrics?: FailoverMetrics;
  /** DR primary (docs/dr.md): a `key-sync` write is acknowledged once the backup's queue holds its key message. */
  dr?: Pick<DrShipper, 'announce'>;
  /** DR backup (promoted or not): reads check the pending set, waiting for pending keys and refusing lost ones. */
  backupGate?: PendingGate;
  /**
   * DR: whether this region may acknowledge writes (docs/dr.md, "Promotion"), checked before a write and
   * again before its acknowledgement: a primary holds a lease from its backup, a backup waits for promotion.
   */
  writeGuard?: DrWriteGuard;
  /**
   * DR backup, once promoted: a write of a key lost in the disaster settles it (docs/dr.md,
   * "Reconciliation"): its lost entries are removed once the write is stored, before it is acknowledged,
   * so the key reads at this write whatever version the lost one had.
   */
  settleLost?: (namespace: string, key: string) => Promise<unknown>;
  /**
   * Waits on this process's clock. With it, a write or strong read of a fenced range waits for the fence to
   * lift (up to fenceWaitMs) instead of answering 503 at once: a rebalance's cut-over fences a range for
   * about a second (docs/rebalancing.md), which a request rides out.
   */
  sleep?: (ms: number) => Promise<void>;
}

/** How long a request waits for a range a failover fenced (its hand-over) before its retryable 503. */
export const fenceWaitMs = 2_500;

/**
 * How long a write waits for a range a rebalance fenced (its cut-over; strong reads are not held back).
 * The fence is the cut-over's lease wait (0.35 s), the wave's transactions settled and its catch-up, and the waiting
 * request sees it lifted at its next fresh ring read (fencePollMs): about 1 s. A step that crashed under the fence is retried
 * after up to a second more and does all of that again, which under load took longer than 5 s (the fault
 * suite saw a strong GET answer 503 when two suites ran at once). 10 s rides that out, well inside the
 * handlers' timeouts (28 s). A failover's fence is not waited as long: its clients are better served by a
 * quick retryable 503 while a shard is down.
 */
export const cutoverFenceWaitMs = 10_000;

/** How often a request waiting on a fence reads the ring again (a fresh read each time: RingSource.fresh). */
export const fencePollMs = 100;

/** Plain writes that meet a transaction's intent resolve it and try again, this many times in all. */
export const intentWriteAttemptsMax = 3;

/** A write or strong read that finds its ring outdated on return is routed again, this many times in all. */
export const ringRouteAttemptsMax = 3;

/**
 * A write counted against a storage quota that finds its key changed since it read it (or met another
 * writer's transaction on it) reads it again, this many times in all: each round one of the key's
 * concurrent writers wins, so this many writers of one key at once all get through.
 */
export const chargedWriteAttemptsMax = 10;

/** The longest pause before a counted write's next attempt: its writers meet at one counter item. */
export const chargedWriteBackoffMsMax = 20;

export interface PutInput extends Conditions {
  value: Uint8Array;
  contentType: string;
  ttlSeconds?: number;
  /** Default `eventual`; the HTTP layer applies the namespace's default first. */
  consistency?: Consistency;
  /** How the write reaches a DR backup region; default `key-sync` (ignored without DR). */
  drMode?: DrMode;
  /** The namespace's storage quota: the write is counted against it, exactly (docs/security.md, "Quotas"). */
  storageQuota?: StorageQuota;
}

export interface DeleteInput extends Conditions {
  consistency?: Consistency;
  drMode?: DrMode;
  storageQuota?: StorageQuota;
}

export interface WriteAck {
  key: string;
  version: number;
  consistency: Consistency;
  /** Shards that held this version when the write was acknowledged (strong writes; the owner included). */
  copies?: number;
}

export type ReadResult =
  | { kind: 'value'; item: StoredItem; value: Uint8Array }
  /** The value is too large for a Lambda response: the client fetches it from this presigned URL. */
  | { kind: 'redirect'; item: StoredItem; url: string };

export interface ListInput {
  prefix: string;
  limit: number;
  cursor?: string;
}

export interface ListResult {
  items: KeySummary[];
  cursor?: string;
}

export interface UploadTicket {
  uploadId: string;
  url: string;
  method: 'PUT';
  headers: Record<string, string>;
  expiresAt: string;
}

export interface CommitInput extends Conditions {
  sha256: string;
  contentType: string;
  ttlSeconds?: number;
  consistency?: Consistency;
  drMode?: DrMode;
  storageQuota?: StorageQuota;
}

const uploadIdPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export class KvService {
  /** The broken mode `staleRingWrites` only (tests): the ring writes keep routing by. */
  private firstLease?: RingLease;

  constructor(private readonly deps: KvDeps) {}

  async get(namespace: string, key: string, consistency: Consistency): Promise<ReadResult> {
    const item = await this.readLive(namespace, key, consistency);
    if (item.value) return { kind: 'value', item, value: item.value };
    const objectKey = item.blob?.objectKey;
    if (!objectKey) throw new RingstoreError('internal', `item ${key} has neither a value nor a blob`);
    if (item.size > this.deps.limits.directBodyBytesMax) {
      const url = await this.deps.blobs.presignGet(objectKey, { expiresInSeconds: this.deps.limits.presignedUrlTtlSeconds });
      return { kind: 'redirect', item, url };
    }
    try {
      return { kind: 'value', item, value: await this.deps.blobs.get(objectKey) };
    } catch (error) {
      // A lagging replica can point at a blob the owner already replaced (and deleted): the owner's
      // current version is the answer then.
      if (consistency === 'strong') throw error;
      return this.get(namespace, key, 'strong');
    }
  }

  /** The metadata of a live key (HEAD). */
  async head(namespace: string, key: string, consistency: Consistency): Promise<StoredItem> {
    return this.readLive(namespace, key, consistency);
  }

  async put(namespace: string, key: string, input: PutInput): Promise<WriteAck> {
    validateKey(key, this.deps.limits);
    await this.deps.writeGuard?.assertWritable();
    const { limits } = this.deps;
    const size = input.value.byteLength;
    if (size > limits.directBodyBytesMax) {
      throw new RingstoreError(
        'kv.valueTooLarge',
        `a direct PUT body is at most ${limits.directBodyBytesMax} bytes (got ${size}); ` +
          `upload larger values (up to ${limits.valueBytesMax} bytes) with POST /v1/kv/{key}/uploads, as the SDK and CLI do`,
        { details: { size, limit: limits.directBodyBytesMax, uploadFlow: 'POST /v1/kv/{key}/uploads' } },
      );
    }
    const plan = planWrite(key, input, 'put', limits.entityTagsMax);
    const expiresAtSeconds = this.expiresAt(input.ttlSeconds);
    const guard = guardOf(plan, input, 'put');
    const content = { contentType: input.contentType, size, sha256: sha256Hex(input.value), expiresAtSeconds };
    if (size <= limits.inlineValueBytesMax) {
      return this.writeContent(namespace, key, guard, { ...content, value: input.value }, input);
    }
    // Larger values go to S3 first, under a fresh key, so the item switches from one complete value to another.
    const objectKey = this.blobKey(namespace);
    await this.deps.blobs.put(objectKey, input.value, input.contentType);
    return this.writeContent(namespace, key, guard, { ...content, blob: { objectKey } }, input);
  }

  async delete(namespace: string, key: string, input: DeleteInput): Promise<WriteAck> {
    validateKey(key, this.deps.limits);
    await this.deps.writeGuard?.assertWritable();
    const plan = planWrite(key, input, 'delete', this.deps.limits.entityTagsMax);
    if (plan.kind === 'refuseByKeyState') {
      // Nothing can be deleted: a strong read tells which failure it is (readLive is the 404 when absent).
      const item = await this.readLive(namespace, key, 'strong');
      const failure = failureOf(key, input, 'delete', item, this.nowSeconds());
      invariant(failure, `a delete under If-None-Match: * fails on a live key (${key})`);
      throw failure;
    }
    return this.writeContent(namespace, key, guardOf(plan, input, 'delete'), undefined, input);
  }

  /** Keys of a namespace in key order across every shard, `limit` at a time. */
  async list(namespace: string, input: ListInput): Promise<ListResult> {
    const { limit, prefix } = input;
    if (!Number.isInteger(limit) || limit < 1 || limit > this.deps.limits.listLimitMax) {
      throw new RingstoreError('request.invalid', `limit must be an integer from 1 to ${this.deps.limits.listLimitMax}`, {
        details: { field: 'limit' },
      });
    }
    const afterKey = input.cursor === undefined ? undefined : decodeCursor(input.cursor, prefix);
    const ring = await this.deps.ring.current();
    const nowSeconds = this.nowSeconds();
    // The listing index holds each live key once, on its owner (topology, shardSchema.keyIndex): a
    // shard that cannot be read would hide the keys it owns, so the listing waits for it (or for its
    // ranges to fail over) rather than answer an incomplete page. A shard that owns no range (its
    // ranges failed over) is not read, and a copy listed on a shard that no longer owns its key (left
    // there by a failover) is not shown: the owner's copy is.
    const owners = ring.shards.filter((shard) => ring.ownsAnyRange(shard.id));
    const health = await this.deps.health.all();
    const unreadable = owners.filter((shard) => !isReadable(health, shard.table));
    if (unreadable.length > 0) {
      throw new RingstoreError(
        'shard.unavailable',
        `shard ${unreadable.map((shard) => shard.table).join(', ')} is unavailable: a listing would miss the keys it owns`,
        { retryable: true },
      );
    }
    const buckets = Array.from({ length: shardSchema.keyIndex.buckets }, (_, bucket) => bucket);
    // Always checked: a range moved back to its walk owner leaves no override, but the shard that held it
    // meanwhile still lists its copies until they are overwritten.
    const ownedHere = (table: string, key: string) => ring.ownerOf(tokenOf(namespace, key)).table === table;
    const merged = await mergeListing({
      partitions: owners.flatMap((shard) => buckets.map((bucket) => ({ table: shard.table, bucket }))),
      read: async (partition, after, partitionLimit) => {
        const page = await this.deps.shards.list(partition.table, {
          namespace,
          bucket: partition.bucket,
          prefix,
          ...(after === undefined ? {} : { afterKey: after }),
          limit: partitionLimit,
          nowSeconds,
        });
        // The page's resume point is what it examined, shown or not, so the merge stays exact.
        return { ...page, items: page.items.filter((summary) => ownedHere(partition.table, summary.key)) };
      },
      afterKey,
      limit,
      roundsMax: listRoundsMax,
    });
    return merged.resumeAfter === undefined
      ? { items: merged.items }
      : { items: merged.items, cursor: encodeCursor(merged.resumeAfter, prefix) };
  }

  /** Step 1 of the large-value flow: a presigned PUT the client sends the bytes to. */
  async createUpload(namespace: string, key: string, input: { contentType: string; size?: number }): Promise<UploadTicket> {
    validateKey(key, this.deps.limits);
    await this.deps.writeGuard?.assertWritable();
    if (input.size !== undefined && input.size > this.deps.limits.valueBytesMax) {
      throw tooLarge(input.size, this.deps.limits.valueBytesMax);
    }
    const uploadId = this.deps.ids.newId();
    const expiresInSeconds = this.deps.limits.presignedUrlTtlSeconds;
    const { url, headers } = await this.deps.blobs.presignPut(uploadKey(namespace, key, uploadId), {
      contentType: input.contentType,
      expiresInSeconds,
    });
    const expiresAt = new Date(this.deps.clock.nowMs() + expiresInSeconds * 1000).toISOString();
    return { uploadId, url, method: 'PUT', headers, expiresAt };
  }

  /** Step 2: verify the uploaded bytes and make them the key's value, versioned like any write. */
  async commitUpload(namespace: string, key: string, uploadId: string, input: CommitInput): Promise<WriteAck> {
    validateKey(key, this.deps.limits);
    await this.deps.writeGuard?.assertWritable();
    const plan = planWrite(key, input, 'put', this.deps.limits.entityTagsMax);
    const expiresAtSeconds = this.expiresAt(input.ttlSeconds);
    if (!uploadIdPattern.test(uploadId)) {
      throw new RingstoreError('kv.uploadNotFound', `upload ${uploadId} does not exist for key ${key}`);
    }
    const { blobs, limits } = this.deps;
    const uploadObject = uploadKey(namespace, key, uploadId);
    const size = await blobs.size(uploadObject);
    if (size === undefined) {
      throw new RingstoreError('kv.uploadNotFound', `upload ${uploadId} for key ${key} has no bytes: PUT them to the upload URL first`);
    }
    if (size > limits.valueBytesMax) {
      await blobs.delete(uploadObject);
      throw tooLarge(size, limits.valueBytesMax);
    }
    const sha256 = await blobs.sha256(uploadObject);
    if (sha256 !== input.sha256.toLowerCase()) {
      throw new RingstoreError('kv.checksumMismatch', `uploaded bytes have sha256 ${sha256}, not ${input.sha256}`, {
        details: { field: 'sha256', actual: sha256 },
      });
    }
    // Refused only now: a missing or bad upload answers as it would without conditions (RFC 9110 §13.2.1).
    // The upload is kept, so the client may commit it again with other conditions.
    const guard = guardOf(plan, input, 'put');
    const content = { contentType: input.contentType, size, sha256, expiresAtSeconds };
    let ack: WriteAck;
    if (size <= limits.inlineValueBytesMax) {
      ack = await this.writeContent(namespace, key, guard, { ...content, value: await blobs.get(uploadObject) }, input);
    } else {
      // Uploads expire by a lifecycle rule; committed bytes move under blobs/ where they stay.
      const objectKey = this.blobKey(namespace);
      await blobs.copy(uploadObject, objectKey);
      ack = await this.writeContent(namespace, key, guard, { ...content, blob: { objectKey } }, input);
    }
    await blobs.delete(uploadObject);
    return ack;
  }

  private async readLive(namespace: string, key: string, consistency: Consistency): Promise<StoredItem> {
    validateKey(key, this.deps.limits);
    const { cache, backupGate } = this.deps;
    const nowSeconds = this.nowSeconds();
    if (backupGate) {
      // A backup region's copy may lag the primary: every read checks the key's pending entries, then
      // reads the owner strongly (docs/dr.md). The cache is not used: the appliers do not write through it.
      const gated = await backupGate.read(namespace, key, () => this.readStrong(namespace, key));
      if (!isLive(gated, nowSeconds)) throw notFound(key);
      return gated;
    }
    // Strong reads never use the cache (linearizable per key); eventual reads try it first.
    const entry = cache && consistency === 'eventual' ? await cache.get(namespace, key) : undefined;
    if (entry && !isLiveEntry(entry, nowSeconds)) throw notFound(key);
    if (entry?.value) return itemOf(namespace, key, entry, entry.value);
    const item =
      consistency === 'strong' ? await this.readStrong(namespace, key) : await this.readEventual(namespace, key, entry?.version ?? 0);
    // Every read refreshes the cache, strong ones too; the version guard keeps only the newest. Off the
    // answer's path: this instance's L1 has it on return, Redis a moment later.
    if (cache && item) cache.refresh(namespace, key, cacheEntryOf(item));
    if (!isLive(item, nowSeconds)) throw notFound(key);
    return item;
  }

  /**
   * The owner with ConsistentRead: linearizable per key. Routed by a leased ring and answered only if
   * that shard still owned the key once the read returned (ring-source: fencing).
   */
  private async readStrong(namespace: string, key: string): Promise<StoredItem | undefined> {
    const token = tokenOf(namespace, key);
    for (let attempt = 1; ; attempt += 1) {
      const lease = await this.strongReadRoute(token, key);
      const [owner, ...others] = lease.ring.replicasOf(token);
      // The deliberately broken mode the linearizability checker must catch (tests only).
      const broken = this.deps.faults?.isBroken('strongReadFromReplica') && others.length > 0;
      const shard = broken ? others[others.length - 1]! : owner!;
      const cutOver = lease.ring.isFenced(token);
      let item: StoredItem | undefined | typeof notCarriedYet;
      try {
        item = cutOver
          ? await this.readUnderCutOver(lease.ring, token, shard.table, namespace, key)
          : await this.deps.shards.get(shard.table, namespace, key, { consistent: !broken });
      } catch (error) {
        // The owner of a range being cut over did not answer: wait for the cut-over like a write.
        if (!cutOver || !isShardFailure(error)) throw error;
        await this.ownedRange(token, key);
        continue;
      }
      if (item === notCarriedYet) {
        // The copies differ: wait for the cut-over (or see it published already), then read the owner.
        await this.ownedRange(token, key, 'fresh');
        continue;
      }
      const owned = cutOver ? await this.deps.ring.ownerUnchangedSince(lease, token) : await this.deps.ring.stillOwner(lease, token);
      if (owned) return this.withoutIntent(shard.table, item);
      this.deps.failoverMetrics?.routeRefused('stale');
      if (attempt >= ringRouteAttemptsMax) throw ownerMoving(key, token, lease.ring);
    }
  }

  /**
   * A strong read of a range fenced for its cut-over: the old owner's item, if its new owner holds the same
   * version (or neither holds the key); else notCarriedYet, and the read waits for the cut-over. The old
   * owner alone is not enough: a write routed before the fence can land there after the fenced catch-up
   * read the range, unacknowledged and never carried (its handler sends it again, to the new owner). Had a
   * read answered it, a later read of the new owner would go back a version. Whatever the new owner holds
   * under the fence is there for good (copies are version-guarded), so a version both hold survives the
   * cut-over. Both are read at once: one read's time, not two.
   */
  private async readUnderCutOver(
    ring: Ring,
    token: number,
    ownerTable: string,
    namespace: string,
    key: string,
  ): Promise<StoredItem | undefined | typeof notCarriedYet> {
    const incoming = ring.incomingOwnerTableOf(token);
    const [owned, carried] = await Promise.all([
      this.deps.shards.get(ownerTable, namespace, key, { consistent: true }),
      incoming && incoming !== ownerTable ? this.deps.shards.get(incoming, namespace, key, { consistent: true }) : undefined,
    ]);
    if (!incoming || incoming === ownerTable || sameVersion(owned, carried)) return owned;
    return notCarriedYet;
  }

  /**
   * The leased ring a strong read routes by. A range a rebalance fenced for its cut-over is read from its
   * owner still, and the read confirmed after it by a fresh ring read (ownerUnchangedSince): under the
   * fence no write is acknowledged anywhere new, so the owner is current until the cut-over publishes. A
   * failover's fence (the owner is thought down) is waited for, as a write waits for either.
   */
  private async strongReadRoute(token: number, key: string): Promise<RingLease> {
    const lease = await this.deps.ring.lease();
    return !lease.ring.isFenced(token) || lease.ring.rangeOf(token).move ? lease : this.ownedRange(token, key);
  }

  /**
   * A leased ring to route a write or strong read of `token` with; a fenced range answers a retryable 503.
   * `fresh`: the first look too is a fresh ring read (the caller saw its leased ring's fence outrun).
   */
  private async ownedRange(token: number, key: string, firstLook: 'leased' | 'fresh' = 'leased'): Promise<RingLease> {
    const { clock, sleep } = this.deps;
    const startedMs = clock.monotonicMs();
    for (let polls = 0; ; polls += 1) {
      // While it waits, each look is a fresh ring read: the request goes on as soon as the fence is lifted,
      // not when its cached lease runs out (up to a lease later).
      const lease = polls === 0 && firstLook === 'leased' ? await this.deps.ring.lease() : await this.deps.ring.fresh();
      if (!lease.ring.isFenced(token)) return lease;
      const waitMs = lease.ring.rangeOf(token).move ? cutoverFenceWaitMs : fenceWaitMs;
      if (!sleep || clock.monotonicMs() - startedMs >= waitMs) {
        this.deps.failoverMetrics?.routeRefused('fenced');
        throw ownerMoving(key, token, lease.ring);
      }
      await sleep(fencePollMs);
    }
  }

  /** Whether the shard a write was routed to by `lease` still owned the key once the write returned. */
  private async stillOwner(lease: RingLease, token: number): Promise<boolean> {
    // The deliberately broken mode the failover suite must catch (tests only): no fencing at all.
    if (this.deps.faults?.isBroken('staleRingWrites')) return true;
    const owner = await this.deps.ring.stillOwner(lease, token);
    if (!owner) this.deps.failoverMetrics?.routeRefused('stale');
    return owner;
  }

  /** The ring lease a write routes by: the current one, or in the broken mode the first one ever held. */
  private async writeLease(token: number, key: string): Promise<RingLease> {
    if (this.deps.faults?.isBroken('staleRingWrites')) return (this.firstLease ??= await this.deps.ring.lease());
    return this.ownedRange(token, key);
  }

  /**
   * The item as a reader must see it: a committed transaction's intent is rolled forward, an aborted
   * or expired one cleared; a pending one leaves the committed content (it never blocks a read).
   */
  private async withoutIntent(table: string, item: StoredItem | undefined): Promise<StoredItem | undefined> {
    if (!item?.intent || !this.deps.intents) return item;
    const resolution = await this.deps.intents.resolve(table, item);
    if (resolution.state === 'pending') {
      const { intent: _pending, ...committed } = item;
      return committed;
    }
    return resolution.item;
  }

  /**
   * Any replica that may serve reads, spread by rotation; an unreachable one is skipped. A replica
   * older than a version this instance already knows (from its cache) is skipped too, and the owner
   * is the last resort: an instance never reads a version older than one it has served or written.
   */
  private async readEventual(namespace: string, key: string, knownVersion: number): Promise<StoredItem | undefined> {
    // Replicas still being backfilled (re-replication) do not serve reads: they may lack older keys.
    const replicas = (await this.deps.ring.current()).servingReplicasOf(tokenOf(namespace, key));
    const [owner] = replicas;
    const order = await this.deps.replication.readOrder(replicas);
    if (!order.includes(owner!)) order.push(owner!);
    let failure: RingstoreError | undefined;
    for (const shard of order) {
      try {
        // Every copy is read eventually consistent (half a read unit); the owner is read again with
        // ConsistentRead only when that answer is older than a version this instance knows.
        let read = await this.deps.shards.get(shard.table, namespace, key, { consistent: false });
        if (shard === owner && (read?.version ?? 0) < knownVersion) {
          read = await this.deps.shards.get(shard.table, namespace, key, { consistent: true });
        }
        const item = shard === owner ? await this.withoutIntent(shard.table, read) : read;
        if ((item?.version ?? 0) >= knownVersion || shard === owner) return item;
      } catch (error) {
        if (!isShardFailure(error)) throw error;
        failure = error;
      }
    }
    throw failure ?? new RingstoreError('shard.unavailable', `no replica of ${key} could serve the read`, { retryable: true });
  }

  private async writeContent(
    namespace: string,
    key: string,
    guard: WriteGuard,
    content: ItemWrite['content'],
    options: { consistency?: Consistency; drMode?: DrMode; storageQuota?: StorageQuota },
  ): Promise<WriteAck> {
    const { faults } = this.deps;
    const consistency = options.consistency ?? 'eventual';
    const token = tokenOf(namespace, key);
    const request = { namespace, key, token, content, precondition: guard.precondition, ...this.writeTimes() };
    const { result, replicas, backfilling, listedOn, write } = await this.routedOwnerWrite(token, request, guard, options.storageQuota);
    faults?.reach('write.afterOwner');
    const item = storedItemOf(write, result.version);
    await this.deps.settleLost?.(namespace, key);
    // The backup region hears of a key-sync write before it is acknowledged, alongside a strong write's copies.
    const announced = this.announceToBackup(item, options.drMode);
    // Awaited below; marked handled now so a refusal while the cache write runs is not an unhandled rejection.
    announced.catch(() => undefined);
    await this.deps.cache?.put(namespace, key, cacheEntryOf(item));
    const replacedBlob = result.previous?.blob?.objectKey;
    // Best effort: an object left behind by a failed delete costs storage, never correctness.
    if (replacedBlob) await this.deps.blobs.delete(replacedBlob).catch(() => undefined);
    if (consistency === 'eventual' || replicas.length === 0) {
      await announced;
      // A DR primary acknowledges only within its lease: never after a promotion fenced it.
      await this.deps.writeGuard?.assertWritable();
      return { key, version: result.version, consistency };
    }
    // Strong: acknowledged when the owner and at least one replica hold the version; every other
    // replica holds it too or has a hint that replays it before that replica serves again.
    const [{ holders, outcomes }] = await Promise.all([this.deps.replication.fanOut(item, replicas, backfilling, listedOn), announced]);
    if (holders < 2) {
      throw new RingstoreError(
        'shard.unavailable',
        `no replica of ${key} could take version ${result.version}: the write is not acknowledged ` +
          '(the owner holds it and replicates it when a replica returns; retry, or read strongly to see whether it applied)',
        { retryable: true, details: { version: result.version, replicas: outcomes } },
      );
    }
    await this.deps.writeGuard?.assertWritable();
    return { key, version: result.version, consistency, copies: holders };
  }

  /** Sends a key-sync write's key message to the backup region (a no-op without DR, or for `async` namespaces). */
  private async announceToBackup(item: StoredItem, drMode: DrMode = 'key-sync'): Promise<void> {
    if (!this.deps.dr || drMode === 'async') return;
    try {
      await this.deps.dr.announce(item);
    } catch (error) {
      throw new RingstoreError(
        'dr.backupUnreachable',
        `version ${item.version} of ${item.key} is stored, but the backup region could not be told of it, so the write is not ` +
          'acknowledged (the stream still ships it); retry, or read strongly to see whether it applied',
        { retryable: true, cause: error, details: { version: item.version } },
      );
    }
  }

  /** When a write is made: its stored time (ms) and the second its conditions are judged at. */
  private writeTimes(): { modifiedAtMs: number; nowSeconds: number } {
    const modifiedAtMs = this.deps.clock.nowMs();
    return { modifiedAtMs, nowSeconds: Math.floor(modifiedAtMs / 1000) };
  }

  /**
   * The owner's write, routed by a leased ring and acknowledged only if that shard still owned the key
   * once the write returned: a write that landed on a shard a failover took the range from is sent
   * again to the new owner, which has not seen it (the stray copy is reconciled when the old owner
   * rejoins: docs/failover.md). Returns the result, the key's other replicas, and the write as sent.
   */
  private async routedOwnerWrite(token: number, first: ItemWrite, guard: WriteGuard, storageQuota?: StorageQuota) {
    const { faults } = this.deps;
    const { key, content } = first;
    for (let attempt = 1, write = first; ; attempt += 1, write = { ...first, ...this.writeTimes() }) {
      const lease = await this.writeLease(token, key);
      const [owner, ...replicas] = lease.ring.replicasOf(token);
      // Replicas still being backfilled take the write but do not count as copies of it.
      const backfilling = lease.ring.backfillingTablesOf(token);
      let result: WriteResult;
      try {
        faults?.reach('write.beforeOwner');
        result = await this.writeOwner(owner!.table, write, storageQuota);
      } catch (error) {
        if (content?.blob) await this.deps.blobs.delete(content.blob.objectKey).catch(() => undefined);
        // An owner that cannot be reached is marked, as a replica is (throttling is not an outage): eventual
        // reads skip it, and with automatic failover on, the mark starts its failover.
        if (isRingstoreError(error, 'shard.unavailable')) {
          await this.deps.health.markUnavailable(owner!.table, error.message, this.deps.clock.nowMs()).catch(() => undefined);
        }
        if (error instanceof PreconditionFailedError) {
          throw failureOf(key, guard.conditions, guard.kind, error.current as StoredItem | undefined, write.nowSeconds) ?? error;
        }
        throw error;
      }
      if (await this.stillOwner(lease, token)) {
        return { result, replicas, backfilling, listedOn: lease.ring.incomingOwnerTableOf(token), write };
      }
      // Sent again, it would be a second application of a write the owner's range may have carried.
      const carried = await this.carriedTo(token, owner!.table, write, result.version);
      if (carried) return { result, ...carried, write };
      if (attempt >= ringRouteAttemptsMax) throw ownerMoving(key, token, lease.ring);
    }
  }

  /**
   * A write landed on `table` while the key's range changed owner or was fenced: where it is in effect, the
   * ring's route for it then (once no fence holds the range), or undefined when it must be sent again.
   * It is in effect when `table` still owns the range (a cut-over that gave up, a fence lifted), or when the
   * owner now holds exactly this write: a cut-over's fenced catch-up copies the old owner's versions as they
   * are, so a write that landed before it is on the new owner already. One that landed after it, or that a
   * failover's new owner never saw, is sent again: no strong read answered it meanwhile (readUnderCutOver),
   * so it takes effect once, there. If the new owner is past its version, it may have been carried and
   * overwritten since: a 503 whose outcome the client reads before it retries (docs/rebalancing.md, "Limits").
   */
  private async carriedTo(token: number, table: string, write: ItemWrite, version: number) {
    const lease = await this.ownedRange(token, write.key);
    const [owner, ...replicas] = lease.ring.replicasOf(token);
    const route = { replicas, backfilling: lease.ring.backfillingTablesOf(token), listedOn: lease.ring.incomingOwnerTableOf(token) };
    if (owner!.table === table) return route;
    const held = await this.deps.shards.get(owner!.table, write.namespace, write.key, { consistent: true });
    const isThisWrite =
      held?.version === version &&
      held.modifiedAtMs === write.modifiedAtMs &&
      held.tombstone === (write.content === undefined) &&
      (write.content === undefined || held.sha256 === write.content.sha256);
    if (isThisWrite) return (await this.stillOwner(lease, token)) ? route : undefined;
    // Past this version: the new owner took other writes, and whether this one came before them (carried)
    // or not cannot be told. Sent again it might apply twice; answered, it might be lost: neither.
    if ((held?.version ?? 0) > version) throw outcomeUnknown(write.key, version, table);
    return undefined;
  }

  /** The owner's write; a transaction's intent in the way is resolved first (a pending one: 409, retryable). */
  private async writeOwner(table: string, write: ItemWrite, storageQuota?: StorageQuota) {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return hasStorageBound(storageQuota)
          ? await this.writeCharged(table, write, storageQuota)
          : await this.deps.shards.write(table, write);
      } catch (error) {
        if (!(error instanceof IntentConflictError) || !this.deps.intents || attempt >= intentWriteAttemptsMax) throw error;
        const resolution = await this.deps.intents.resolve(table, error.current as StoredItem);
        if (resolution.state === 'pending') {
          throw new RingstoreError('txn.conflict', `key ${write.key} is locked by transaction ${resolution.record.txid}; retry`, {
            retryable: true,
            details: { key: write.key, txid: resolution.record.txid },
          });
        }
      }
    }
  }

  /**
   * The owner's write counted against the namespace's storage quota: the owner's item is read strongly,
   * and the write and the usage counter's change go in one transaction that holds only if the item is
   * still as read (docs/security.md, "Quotas"). A writer that lost a race to another reads again.
   */
  private async writeCharged(table: string, write: ItemWrite, quota: StorageQuota): Promise<WriteResult> {
    for (let attempt = 1; ; attempt += 1) {
      const previous = await this.deps.shards.get(table, write.namespace, write.key, { consistent: true });
      try {
        return await this.deps.shards.write(table, write, storageChargeOf(previous, write.content, quota));
      } catch (error) {
        const current = error instanceof PreconditionFailedError ? (error.current as StoredItem | undefined) : undefined;
        // Another writer's transaction on the item or the counter at the same instant: nothing was written.
        const collided = isRingstoreError(error, 'txn.conflict') && !(error instanceof IntentConflictError);
        // The write's own precondition failed against the item as read: that is the answer.
        const raced = error instanceof PreconditionFailedError && current?.version !== previous?.version;
        if (!collided && !raced) throw error;
        if (attempt >= chargedWriteAttemptsMax) {
          throw new RingstoreError('txn.conflict', `key ${write.key} is being written by others at the same time; retry`, {
            retryable: true,
            details: { key: write.key },
          });
        }
        // Writers of different keys pause for different times (their tokens differ, and so do the bits each
        // attempt takes), so those that met at the counter spread out instead of meeting again.
        await this.deps.sleep?.(((write.token >>> attempt) % chargedWriteBackoffMsMax) + 1);
      }
    }
  }

  private expiresAt(ttlSeconds: number | undefined): number | undefined {
    if (ttlSeconds === undefined) return undefined;
    if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > this.deps.limits.ttlSecondsMax) {
      throw new RingstoreError('kv.ttlInvalid', `ttlSeconds must be an integer from 1 to ${this.deps.limits.ttlSecondsMax}`, {
        details: { field: 'ttlSeconds' },
      });
    }
    // Rounded up: a key lives at least ttlSeconds (at most one second more), never less.
    return Math.ceil(this.deps.clock.nowMs() / 1000) + ttlSeconds;
  }

  private nowSeconds(): number {
    return Math.floor(this.deps.clock.nowMs() / 1000);
  }

  private blobKey(namespace: string): string {
    return `${blobPrefixes.blobs}${namespace}/${this.deps.ids.newId()}`;
  }
}

const emptyContent = { contentType: '', size: 0, sha256: '' };

/** A strong read under a cut-over's fence found a version on the old owner its new owner does not hold yet. */
const notCarriedYet = Symbol('notCarriedYet');

/** Whether two copies of a key hold the same version, as a copy carries it (or neither holds the key). */
function sameVersion(a: StoredItem | undefined, b: StoredItem | undefined): boolean {
  if (!a || !b) return a === b;
  return a.version === b.version && a.modifiedAtMs === b.modifiedAtMs && a.tombstone === b.tombstone;
}

/** The item the owner now holds after a write (as the owner table's stream would carry it). */
function storedItemOf(write: Omit<ItemWrite, 'precondition'>, version: number): StoredItem {
  const { namespace, key, token, content, modifiedAtMs } = write;
  if (!content) {
    return {
      namespace,
      key,
      token,
      version,
      modifiedAtMs,
      ...emptyContent,
      tombstone: true,
      expiresAtSeconds: write.nowSeconds + tombstoneRetentionSeconds,
    };
  }
  return {
    namespace,
    key,
    token,
    version,
    modifiedAtMs,
    tombstone: false,
    contentType: content.contentType,
    size: content.size,
    sha256: content.sha256,
    ...(content.expiresAtSeconds === undefined ? {} : { expiresAtSeconds: content.expiresAtSeconds }),
    ...(content.value === undefined ? {} : { value: content.value }),
    ...(content.blob === undefined ? {} : { blob: { objectKey: content.blob.objectKey } }),
  };
}

function isLiveEntry(entry: CacheEntry, nowSeconds: number): boolean {
  return !entry.tombstone && (entry.expiresAtSeconds === undefined || entry.expiresAtSeconds > nowSeconds);
}

function itemOf(namespace: string, key: string, entry: CacheEntry, value: Uint8Array): StoredItem {
  return {
    namespace,
    key,
    version: entry.version,
    token: tokenOf(namespace, key),
    contentType: entry.contentType,
    size: entry.size,
    sha256: entry.sha256,
    tombstone: false,
    ...(entry.expiresAtSeconds === undefined ? {} : { expiresAtSeconds: entry.expiresAtSeconds }),
    value,
  };
}

/** Uploads are addressed by namespace, key and id, so one namespace can never commit another's bytes. */
export function uploadKey(namespace: string, key: string, uploadId: string): string {
  return `${blobPrefixes.uploads}${namespace}/${sha256Hex(key).slice(0, 32)}/${uploadId}`;
}

/** A write's precondition with the conditions it came from, which explain a failure. */
interface WriteGuard {
  precondition: WritePrecondition;
  conditions: Conditions;
  kind: WriteKind;
}

/** The guard of a write that may happen; a plan no key state satisfies is refused here, before any blob is stored. */
function guardOf(plan: WritePlan, conditions: Conditions, kind: WriteKind): WriteGuard {
  if (plan.kind === 'refuse') throw plan.error;
  if (plan.kind !== 'write') throw new RingstoreError('internal', `a ${kind} cannot be planned as ${plan.kind}`);
  return { precondition: plan.precondition, conditions, kind };
}

/** A key whose range is changing owner (a failover or a rebalance's cut-over): retry after the ring moves on. */
function ownerMoving(key: string, token: number, ring: Ring): RingstoreError {
  const why = ring.rangeOf(token).move || ring.rebalancing ? 'moving to another shard (a rebalance)' : 'being replaced by a failover';
  return new RingstoreError('shard.failingOver', `the owner of ${key} is ${why}; retry in a moment`, {
    retryable: true,
  });
}

function outcomeUnknown(key: string, version: number, table: string): RingstoreError {
  return new RingstoreError(
    'shard.failingOver',
    `version ${version} of ${key} was written on ${table} while its range changed owner, and the new owner has taken later ` +
      'writes since: whether this one is among them cannot be told, so it is not acknowledged; read strongly to see whether it applied',
    // Not retryable: sent again blindly, a write that is in effect would be applied twice (as a transaction's unknown outcome).
    { retryable: false, details: { version } },
  );
}

function notFound(key: string): RingstoreError {
  return new RingstoreError('kv.notFound', `key ${key} not found`);
}

function tooLarge(size: number, limit: number): RingstoreError {
  return new RingstoreError('kv.valueTooLarge', `value is ${size} bytes; the limit is ${limit}`, { details: { size, limit } });
}

interface CursorBody {
  after: string;
  prefix: string;
}

export function encodeCursor(afterKey: string, prefix: string): string {
  const body: CursorBody = { after: afterKey, prefix };
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, prefix: string): string {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    body = undefined;
  }
  const parsed = body as Partial<CursorBody> | undefined;
  if (!parsed || typeof parsed.after !== 'string' || typeof parsed.prefix !== 'string') {
    throw new RingstoreError('kv.cursorInvalid', 'cursor is not one this API returned', { details: { field: 'cursor' } });
  }
  if (parsed.prefix !== prefix || !parsed.after.startsWith(prefix)) {
    throw new RingstoreError('kv.cursorInvalid', `cursor belongs to a listing of prefix "${parsed.prefix}", not "${prefix}"`, {
      details: { field: 'cursor' },
    });
  }
  return parsed.after;
}
