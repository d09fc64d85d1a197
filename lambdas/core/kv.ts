// The KV use cases, composed from their parts: reads (kv-reads.ts), writes (kv-writes.ts), the large-value
// flow (kv-uploads.ts) and listing (kv-listing.ts), all routed by one range router (range-router.ts). What a
// capability adds around them (DR, quotas) comes in as hooks with no-op defaults (write-hooks.ts).
import type {
  BlobStore,
  Clock,
  Consistency,
  FailoverMetrics,
  FaultInjector,
  IdSource,
  ShardHealthStore,
  StoredItem,
  ValueCache,
  ShardIndexes,
  ShardItemReads,
  ShardItemWrites,
} from '../ports';
import type { IntentResolver } from './intents';
import { type BatchGetEntry, type BatchGetOptions, KvBatchReader } from './kv-batch-reads';
import { type IncrementAck, type IncrementInput, KvIncrements } from './kv-increments';
import { KvListing, type ListInput, type ListResult } from './kv-listing';
import { KvReader, type ReadResult } from './kv-reads';
import { type CommitInput, KvUploads, type UploadTicket } from './kv-uploads';
import { type DeleteInput, KvWriter, type PutInput, type WriteAck } from './kv-writes';
import { RangeRouter } from './range-router';
import type { ReplicationService } from './replication';
import type { RingSource } from './ring-source';
import { noWriteHooks, openReadGate, type OwnerWriter, plainOwnerWriter, type ReadGate, type WriteHooks } from './write-hooks';

export type { Consistency } from '../ports';
export type { BatchGetEntry, BatchGetOptions, BatchValue } from './kv-batch-reads';
export type { IncrementAck, IncrementInput } from './kv-increments';
export type { ListInput, ListResult } from './kv-listing';
export type { ReadResult } from './kv-reads';
export type { CommitInput, UploadTicket } from './kv-uploads';
export type { DeleteInput, PutInput, WriteAck } from './kv-writes';

export interface KvLimits {
  keyBytesMax: number;
  valueBytesMax: number;
  directBodyBytesMax: number;
  inlineValueBytesMax: number;
  listLimitMax: number;
  ttlSecondsMax: number;
  presignedUrlTtlSeconds: number;
  entityTagsMax: number;
  batchGetKeysMax: number;
  batchGetValueBytesMax: number;
}

export interface KvDeps {
  shards: Pick<ShardItemReads, 'get'> & ShardItemWrites & Pick<ShardIndexes, 'list'>;
  blobs: BlobStore;
  ring: RingSource;
  clock: Clock;
  ids: IdSource;
  limits: KvLimits;
  /** Strong writes fan out through it; eventual reads ask it which replicas may serve. */
  replication: Pick<ReplicationService, 'fanOut' | 'readOrder'>;
  /** Listing refuses while a shard may not serve reads; an owner a write cannot reach is marked. */
  health: Pick<ShardHealthStore, 'all' | 'markUnavailable'>;
  /** Serves eventual reads and is written through on every write; absent: every read goes to DynamoDB. */
  cache?: ValueCache;
  /** Crash points and broken modes: test runs only. */
  faults?: FaultInjector;
  /** Resolves transactions' intents met by reads and writes (absent: intents are not expected). */
  intents?: IntentResolver;
  /** Counts the requests a fenced or moved range refused. */
  failoverMetrics?: FailoverMetrics;
  /**
   * Waits on this process's clock. With it, a write or strong read of a fenced range waits for the fence to
   * lift instead of answering 503 at once (range-router.ts), and a counted write backs off between attempts.
   */
  sleep?: (ms: number) => Promise<void>;
  /** Around every write: default none. */
  writeHooks?: WriteHooks;
  /** How the owner's copy is written: default one conditional write. */
  owners?: OwnerWriter;
  /** Which way a read goes: default as asked (cache, replicas, owner). */
  readGate?: ReadGate;
}

export class KvService {
  /** The routing every write and strong read of the ring goes through: for services built beside this one. */
  readonly router: RangeRouter;
  private readonly reader: KvReader;
  private readonly batchReader: KvBatchReader;
  private readonly writer: KvWriter;
  private readonly increments: KvIncrements;
  private readonly uploads: KvUploads;
  private readonly listing: KvListing;

  constructor(deps: KvDeps) {
    const { shards, blobs, ring, clock, ids, limits, replication, health, cache, faults, intents, failoverMetrics, sleep } = deps;
    const hooks = deps.writeHooks ?? noWriteHooks;
    const optional = { ...(cache ? { cache } : {}), ...(intents ? { intents } : {}) };
    this.router = new RangeRouter({
      ring,
      items: shards,
      clock,
      ...(sleep ? { sleep } : {}),
      ...(faults ? { faults } : {}),
      ...(failoverMetrics ? { failoverMetrics } : {}),
    });
    const { router } = this;
    this.reader = new KvReader({
      router,
      items: shards,
      blobs,
      ring,
      clock,
      limits,
      replication,
      gate: deps.readGate ?? openReadGate,
      ...optional,
    });
    this.batchReader = new KvBatchReader({ reader: this.reader, blobs, limits });
    const owners = deps.owners ?? plainOwnerWriter(shards);
    this.writer = new KvWriter({
      router,
      reader: this.reader,
      owners,
      hooks,
      blobs,
      clock,
      ids,
      limits,
      replication,
      health,
      ...optional,
      ...(faults ? { faults } : {}),
    });
    this.increments = new KvIncrements({
      reader: this.reader,
      writer: this.writer,
      hooks,
      clock,
      ids,
      limits,
      ...(sleep ? { sleep } : {}),
    });
    this.uploads = new KvUploads({ writer: this.writer, hooks, blobs, clock, ids, limits });
    this.listing = new KvListing({ shards, ring, health, clock, limits });
  }

  get(namespace: string, key: string, consistency: Consistency): Promise<ReadResult> {
    return this.reader.get(namespace, key, consistency);
  }

  /** The metadata of a live key (HEAD). */
  head(namespace: string, key: string, consistency: Consistency): Promise<StoredItem> {
    return this.reader.readLive(namespace, key, consistency);
  }

  /** Up to `limits.batchGetKeysMax` keys, each read as `get` reads it, in the order asked (kv-batch-reads.ts). */
  batchGet(namespace: string, keys: readonly string[], options: BatchGetOptions): Promise<BatchGetEntry[]> {
    return this.batchReader.get(namespace, keys, options);
  }

  put(namespace: string, key: string, input: PutInput): Promise<WriteAck> {
    return this.writer.put(namespace, key, input);
  }

  /** Adds `input.by` to the key's decimal counter as one versioned write (kv-increments.ts); a missing key counts as 0. */
  increment(namespace: string, key: string, input: IncrementInput): Promise<IncrementAck> {
    return this.increments.increment(namespace, key, input);
  }

  delete(namespace: string, key: string, input: DeleteInput): Promise<WriteAck> {
    return this.writer.delete(namespace, key, input);
  }

  /** Keys of a namespace in key order across every shard, `limit` at a time. */
  list(namespace: string, input: ListInput): Promise<ListResult> {
    return this.listing.list(namespace, input);
  }

  /** Step 1 of the large-value flow: a presigned PUT the client sends the bytes to. */
  createUpload(namespace: string, key: string, input: { contentType: string; size?: number }): Promise<UploadTicket> {
    return this.uploads.create(namespace, key, input);
  }

  /** Step 2: verify the uploaded bytes and make them the key's value, versioned like any write. */
  commitUpload(namespace: string, key: string, uploadId: string, input: CommitInput): Promise<WriteAck> {
    return this.uploads.commit(namespace, key, uploadId, input);
  }
}
