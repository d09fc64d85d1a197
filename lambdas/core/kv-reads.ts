// KV reads (docs/consistency.md): strong reads from the key's owner through the range router, eventual reads
// from the cache or any replica that may serve, a large value from S3 or by a presigned URL.
import { RingstoreError } from './errors';
import { cacheEntryOf, itemOfCacheEntry, type IntentResolver } from './intents';
import type { BlobStore, CacheEntry, Clock, Consistency, StoredItem, ValueCache, ShardItemReads } from '../ports';
import { isLive } from './item';
import type { RangeRouter } from './range-router';
import { isShardFailure, type ReplicationService } from './replication';
import { tokenOf } from './ring';
import type { RingSource } from './ring-source';
import { validateKey } from './validation';
import type { ReadGate } from './write-hooks';

export interface KvReadLimits {
  keyBytesMax: number;
  directBodyBytesMax: number;
  presignedUrlTtlSeconds: number;
}

export interface KvReaderDeps {
  router: RangeRouter;
  items: Pick<ShardItemReads, 'get'>;
  blobs: Pick<BlobStore, 'get' | 'presignGet'>;
  ring: Pick<RingSource, 'current'>;
  clock: Pick<Clock, 'nowMs'>;
  limits: KvReadLimits;
  /** Eventual reads ask it which replicas may serve. */
  replication: Pick<ReplicationService, 'readOrder'>;
  gate: ReadGate;
  /** Serves eventual reads; absent: every read goes to DynamoDB. */
  cache?: ValueCache;
  /** Resolves transactions' intents a read meets (absent: intents are not expected). */
  intents?: IntentResolver;
}

export type ReadResult =
  | { kind: 'value'; item: StoredItem; value: Uint8Array }
  /** The value is too large for a Lambda response: the client fetches it from this presigned URL. */
  | { kind: 'redirect'; item: StoredItem; url: string };

export class KvReader {
  constructor(private readonly deps: KvReaderDeps) {}

  async get(namespace: string, key: string, consistency: Consistency): Promise<ReadResult> {
    const item = await this.readLive(namespace, key, consistency);
    if (item.value) return { kind: 'value', item, value: item.value };
    const objectKey = item.blob?.objectKey;
    if (!objectKey) throw new RingstoreError('internal', `item ${key} has neither a value nor a blob`);
    const { blobs, limits } = this.deps;
    if (item.size > limits.directBodyBytesMax) {
      const url = await blobs.presignGet(objectKey, { expiresInSeconds: limits.presignedUrlTtlSeconds });
      return { kind: 'redirect', item, url };
    }
    try {
      return { kind: 'value', item, value: await blobs.get(objectKey) };
    } catch (error) {
      // A lagging replica can point at a blob the owner already replaced (and deleted): the owner's
      // current version is the answer then.
      if (consistency === 'strong') throw error;
      return this.get(namespace, key, 'strong');
    }
  }

  /** A live key's item (its metadata for HEAD); 404 when it is absent, deleted or expired. */
  async readLive(namespace: string, key: string, consistency: Consistency): Promise<StoredItem> {
    validateKey(key, this.deps.limits);
    const nowSeconds = this.nowSeconds();
    const item = await this.deps.gate.read(namespace, key, {
      owner: () => this.readStrong(namespace, key),
      asAsked: () => this.readAsAsked(namespace, key, consistency, nowSeconds),
    });
    if (!isLive(item, nowSeconds)) throw notFound(key);
    return item;
  }

  /** Strong reads never use the cache (linearizable per key); eventual reads try it first. */
  private async readAsAsked(namespace: string, key: string, consistency: Consistency, nowSeconds: number) {
    const { cache } = this.deps;
    const entry = cache && consistency === 'eventual' ? await cache.get(namespace, key) : undefined;
    if (entry && !isLiveEntry(entry, nowSeconds)) throw notFound(key);
    if (entry?.value) return itemOfCacheEntry(namespace, key, entry);
    const item =
      consistency === 'strong' ? await this.readStrong(namespace, key) : await this.readEventual(namespace, key, entry?.version ?? 0);
    // Every read refreshes the cache, strong ones too; the version guard keeps only the newest. Off the
    // answer's path: this instance's L1 has it on return, Redis a moment later.
    if (cache && item) cache.refresh(namespace, key, cacheEntryOf(item));
    return item;
  }

  /** The owner with ConsistentRead, routed and confirmed by the range router: linearizable per key. */
  private async readStrong(namespace: string, key: string): Promise<StoredItem | undefined> {
    const { table, item } = await this.deps.router.ownerRead(namespace, key, tokenOf(namespace, key));
    return this.withoutIntent(table, item);
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
        let read = await this.deps.items.get(shard.table, namespace, key, { consistent: false });
        if (shard === owner && (read?.version ?? 0) < knownVersion) {
          read = await this.deps.items.get(shard.table, namespace, key, { consistent: true });
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

  private nowSeconds(): number {
    return Math.floor(this.deps.clock.nowMs() / 1000);
  }
}

function isLiveEntry(entry: CacheEntry, nowSeconds: number): boolean {
  return !entry.tombstone && (entry.expiresAtSeconds === undefined || entry.expiresAtSeconds > nowSeconds);
}

export function notFound(key: string): RingstoreError {
  return new RingstoreError('kv.notFound', `key ${key} not found`);
}
