// The one place that names every table, index, bucket, queue, route and handler of Ringstore.
// The CDK app (cdk/) and the local cloud (cdk/local/) both build from these values.

/** Shared defaults of a deployment; every one can be overridden per stage. */
export const defaults = {
  stage: 'local',
  shardCount: 4,
  replicationFactor: 3,
  vnodesPerShard: 16,
} as const;

/**
 * Per-namespace quotas (docs/security.md, "Quotas"). The rate and burst are what a namespace without its
 * own gets when the environment names none (the local cloud); a deployment's come from CDK context.
 */
export const quotaDefaults = {
  requestsPerSecond: 1000,
  burst: 2000,
  /** Bounds of what an admin may set: one request a minute at least; API Gateway's own account limit is 10,000 a second. */
  requestsPerSecondMin: 1 / 60,
  requestsPerSecondMax: 10_000,
  burstMax: 20_000,
  /** The storage quota's bounds: a count and a byte total DynamoDB's numbers hold exactly. */
  keysMax: 1_000_000_000,
  bytesMax: 2 ** 50,
} as const;

/** Limits that mirror API Gateway + Lambda so the local gateway behaves like AWS. */
export const limits = {
  /** Largest value a key can hold, however it arrives. */
  valueBytesMax: 10 * 1024 * 1024,
  /** Largest body accepted by `PUT /v1/kv/{key}`; larger values use the upload flow. */
  directBodyBytesMax: 4 * 1024 * 1024,
  /** Values larger than this are kept in S3; the item keeps a pointer and the sha256. */
  inlineValueBytesMax: 350 * 1000,
  /** Lambda synchronous invocation payload limit (request event and response), bytes. */
  lambdaPayloadBytesMax: 6 * 1024 * 1024,
  /** API Gateway REST API request body limit, bytes. */
  apiGatewayBodyBytesMax: 10 * 1024 * 1024,
  /** API Gateway REST integration timeout. */
  apiGatewayTimeoutMs: 29_000,
  keyBytesMax: 1024,
  listLimitMax: 1000,
  listLimitDefault: 100,
  ttlSecondsMax: 10 * 365 * 24 * 3600,
  presignedUrlTtlSeconds: 900,
  /** API Gateway caches an authorizer's answer per API key this long: a revoked key stops working after it. */
  authorizerCacheTtlSeconds: 60,
  /**
   * Entity tags in one If-Match or If-None-Match header: each becomes an operand of the write's
   * DynamoDB condition, whose expression is bounded in size.
   */
  entityTagsMax: 32,
  /** Characters of a Content-Type (a media type with its parameters), as stored and echoed back. */
  contentTypeCharsMax: 256,
  /** Keys one `POST /v1/batch/get` reads, as DynamoDB's BatchGetItem: each is read (and counted) as a GET. */
  batchGetKeysMax: 100,
  /**
   * Bytes of values one batch answer carries inline (before base64): with the keys and base64's third it stays
   * under the Lambda response limit. Past it, an inline value is left out (`valueOmitted`) for a GET of its own.
   */
  batchGetValueBytesMax: 3 * 1024 * 1024,
} as const;

/** Namespaces come from API keys; `#` separates namespace and key in partition keys, so it is excluded. */
export const namespacePattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** DynamoDB's key attribute types, named as dynamodb-toolbox names them (CDK and the local cloud map them). */
export type KeyAttributeType = 'string' | 'number' | 'binary';

/** A key attribute of a table or index: its name and type are written here once. */
export interface KeyAttribute {
  readonly name: string;
  readonly type: KeyAttributeType;
}

const stringKey = <Name extends string>(name: Name) => ({ name, type: 'string' }) as const;
const numberKey = <Name extends string>(name: Name) => ({ name, type: 'number' }) as const;

/** Attribute and index names of a shard table item (docs/architecture.md, "Tables"). */
export const shardSchema = {
  partitionKey: stringKey('pk'), // `${namespace}#${key}`
  // tb = token bucket (top 8 bits of tok). Range work (rebalancing, anti-entropy) walks a token range
  // here and compares versions from the index alone; it reads values from the table only for the
  // keys it copies. Projecting ALL would copy every value (up to 350 KB) into the index: twice the
  // write cost and storage, for reads that only rebalancing makes.
  tokenIndex: {
    name: 'byToken',
    partitionKey: numberKey('tb'),
    sortKey: numberKey('tok'),
    projection: 'INCLUDE',
    // sha: a rejoining shard's copy at the owner's version but with other content is found from the index.
    nonKeyAttributes: ['v', 'tomb', 'sha'],
  },
  // Listing (docs/capacity.md, "Listing index"). Only the owner's copy of a live key is indexed: `lp`
  // is set by owner writes and removed by deletes, and replicas never carry it, so a logical write
  // costs one listing-index write instead of RF, and a listing reads each key once. The partition key
  // is write-sharded, `<namespace>#<bucket>` with bucket = token mod `buckets`, so one busy namespace
  // spreads its index writes over `buckets` partitions of each shard; a listing merges the buckets.
  // Changing `buckets` changes where existing keys are indexed: it needs a reindex (docs/operations.md).
  keyIndex: {
    name: 'byKey',
    partitionKey: stringKey('lp'),
    sortKey: stringKey('k'),
    projection: 'INCLUDE',
    nonKeyAttributes: ['v', 'size', 'ct', 'ttl'],
    buckets: 8,
  },
  ttlAttribute: 'ttl',
} as const;

/**
 * Control table: one partition per record kind (the ring, API keys, shard health, namespace settings,
 * the maintenance and sweeper state), the record's id as the sort key.
 */
export const controlSchema = { partitionKey: stringKey('pk'), sortKey: stringKey('sk') } as const;

/**
 * Hints table (the failure log): pk = the replica table a write could not reach, sk = `<ns>#<key>#<version>`
 * with the version zero-padded, so one query returns a shard's hints per key in version order.
 */
export const hintsSchema = { partitionKey: stringKey('target'), sortKey: stringKey('sk') } as const;

/**
 * Transaction table: pk = txid. The `byDeadline` index lets the recovery sweeper walk transactions in
 * deadline order: pk = `<the deadline's minute>#<bucket>` with bucket = a hash of the txid mod `buckets`,
 * sk = the deadline (ms). The buckets spread a minute's transactions over that many index partitions
 * (one partition at the end of time would take them all); the sweeper merges them per minute. Keys
 * only: the record's decision (an update of `status`) then rewrites no index entry, and the sweeper
 * reads the records it walks from the table.
 */
export const txnSchema = {
  partitionKey: stringKey('txid'),
  deadlineIndex: { name: 'byDeadline', partitionKey: stringKey('db'), sortKey: numberKey('dl'), projection: 'KEYS_ONLY', buckets: 8 },
  ttlAttribute: 'ttl',
} as const;

/**
 * Pending table (backup region, docs/dr.md): pk = a hash of `<namespace>#<key>` (one partition per key:
 * a read's gate is one consistent query of it), sk = the version the backup waits for.
 */
export const pendingSchema = { partitionKey: stringKey('kh'), sortKey: numberKey('v') } as const;

/**
 * Feed table (the change feed, docs/watch.md): pk = `<namespace>#<bucket>` (the key's topic, its first path segment,
 * hashed into `watchDefaults.buckets` partitions), sk = the entry's position (time-ordered, unique). Entries expire
 * with the retention (DynamoDB TTL on `ttl`).
 */
export const feedSchema = { partitionKey: stringKey('p'), sortKey: stringKey('s'), ttlAttribute: 'ttl' } as const;

/** The change feed's settings (docs/watch.md); each bounds a wait, a size or a cost. */
export const watchDefaults = {
  /** How long the feed keeps a change: a cursor older than this is refused with 410 watch.cursorExpired. */
  retentionSeconds: 24 * 3600,
  /** Partitions of a namespace's feed: a watcher of one topic reads one, of a broader prefix all of them. */
  buckets: 8,
  /**
   * How far a watcher's read trails the clock: an entry stamped before it has landed, unless its append took longer
   * than this less the skew allowance, and then its appender stamps it again (docs/watch.md, "No gap").
   */
  settleMs: 250,
  /** The clock skew between appenders and watchers the settle time allows for. */
  skewAllowanceMs: 50,
  /** Entries one append request carries (DynamoDB's BatchWriteItem takes 25). */
  appendBatchMax: 25,
  /** Appends of one request stamped again before the stream retries the batch. */
  restampAttemptsMax: 6,
  /** Changes an appender remembers having appended, so that a retried stream batch does not append them again. */
  appendedRememberedMax: 10_000,
  /** How far ahead of the clock a slow append's entries are stamped again, at most (twice what it took). */
  restampLeadMaxMs: 10_000,
  /** A change carries its value when at most this (an entry stays within one 1 KB write unit). */
  inlineValueBytesMax: 512,
  /** How often a waiting watcher reads its partitions again, at least (sooner when a change it saw settles). */
  pollMs: 250,
  /** How often a waiting watcher reads its partitions, at most: changes settling one after another share a read. */
  readIntervalMinMs: 100,
  /** A long poll's longest wait: well within API Gateway's 29 s integration timeout. */
  waitSecondsMax: 20,
  limitDefault: 100,
  limitMax: 1000,
  /** Query pages one partition read goes through when the prefix filters entries out, before it ends the answer early. */
  pagesPerReadMax: 4,
  /** The oldest cursor a 410 offers lies this far inside the retention, so that it is still served when used. */
  expiredCursorGraceMs: 60_000,
} as const;

/** Cross-region disaster recovery settings (docs/dr.md); each bounds a wait, a batch or a rate. */
export const drDefaults = {
  /** How long a backup read of a pending key waits for its value before answering 503 replication.pending. */
  pendingWaitMs: 1_000,
  pendingPollMs: 50,
  /** Values uploaded at once by one shipper invocation. */
  shipConcurrency: 8,
  /** SQS SendMessageBatch takes at most 10 messages (and 256 KiB in all). */
  keyBatchMax: 10,
  /** Key messages per key-applier invocation (the SQS event source mapping's batch size; FIFO allows 10). */
  keyApplierBatchSize: 10,
  /**
   * The primary's lease to acknowledge writes (docs/dr.md, "Promotion"): it re-reads the backup's DR
   * state this often (one cross-region read per half lease per busy instance), and a promotion waits
   * this long plus the margin after fencing before it drains the key queue.
   */
  leaseMs: 5_000,
  leaseMarginMs: 1_000,
  /** How stale a backup's view of its own DR state may be (writes open this long after a promotion at most). */
  stateRefreshMs: 1_000,
  /** A key queue that does not empty within this fails the promotion (the region stays closed). */
  drainTimeoutMs: 5 * 60_000,
  /** How long a promotion waits for values still in transit before marking their keys lost. */
  valueWaitMs: 30_000,
  promotionPollMs: 250,
  /** Lost keys a promotion's report lists (its count covers all). */
  lostReportedMax: 1_000,
  /** Pending entries read per scan page (status and promotion). */
  scanPageSize: 500,
  /**
   * Maintenance in a backup retries keys pending for longer than this whose value is in the bucket
   * (a lost or failed object-created event), reading at most sweepPagesMax pages a run.
   */
  sweepAfterMs: 60_000,
  sweepPagesMax: 4,
  /**
   * Maintenance in a primary settles its backup's write notices older than this (a writer that died
   * between its notice and its owner write left them; docs/dr.md), reading at most sweepPagesMax pages.
   */
  noticeSettleAfterMs: 60_000,
  /** Token ranges a primary's initial sync ships per maintenance run. */
  syncRangesPerRun: 8,
  /**
   * Values this large or larger travel to the backup's bucket as multipart uploads, in parts of
   * `multipartPartBytes` (S3's minimum is 5 MiB) sent `multipartConcurrency` at once: parallel streams
   * fill a long, fat link that one TCP stream cannot.
   */
  multipartFromBytes: 8 * 1024 * 1024,
  multipartPartBytes: 5 * 1024 * 1024,
  multipartConcurrency: 4,
  /**
   * Reconciliation (docs/dr.md): the old primary offers lost keys' values back this many at once, for at
   * most this long per call (below the API's timeout; the caller continues from `next`).
   */
  offer: { concurrency: 8, timeBudgetMs: 20_000, failuresReportedMax: 20 },
  /** Lost entries GET /v1/admin/dr/lost reads per page (each costs a read of the key and of its offer). */
  lostListLimitMax: 100,
  lostListLimitDefault: 50,
} as const;

/** Transaction limits: enforced with 400s, documented in docs/api.md. */
export const txnLimits = {
  /** Ops per transaction; far more than DynamoDB's 100-item TransactWriteItems (intents are per key). */
  txnOpsMax: 1_000,
  /**
   * Bytes of values written, and separately of values read, per transaction: the plan and the values
   * travel through the state machine's state, which Step Functions caps at 256 KB (base64 adds a third).
   */
  txnValueBytesMax: 160 * 1024,
  txnReadBytesMax: 160 * 1024,
  txnTimeoutMsDefault: 5_000,
  /** Below API Gateway's 29 s integration timeout, with time left to decide and commit after it. */
  txnTimeoutMsMax: 20_000,
  /** Attempts to place one intent while resolving other transactions' intents on the key. */
  intentAttemptsMax: 4,
  /**
   * Keys of a transaction that commits in one atomic write when they all live on one shard
   * (DynamoDB's TransactWriteItems and TransactGetItems take at most 100 items); larger ones use 2PC.
   */
  atomicKeysMax: 100,
  /** Keys of one shard a transaction step works on at once: bounds a large transaction's burst. */
  intentConcurrencyMax: 16,
  /** Records swept per sweeper run; the next run continues. */
  sweepBatchMax: 500,
  /** How long decided records are kept (DynamoDB TTL): presumed commit covers a record gone after that. */
  recordRetentionSeconds: 24 * 3600,
  /** How often the sweeper runs in AWS, and locally. */
  sweeperEveryMinutes: 1,
  localSweeperIntervalMs: 2_000,
} as const;

/**
 * Block volumes (docs/volumes.md): 4 KiB blocks kept as keys of the namespace's volume keyspace, one item per
 * block, grouped for placement so that a write within a group is one atomic write on one shard.
 */
export const volumeLimits = {
  blockBytes: 4096,
  /**
   * Blocks of a placement group (64 MiB): its blocks share one ring token, so they live on one shard and a
   * write among them commits in one `TransactWriteItems`; each block is still an item of its own (its own
   * partition key), so consecutive blocks never share a DynamoDB partition.
   */
  groupBlocks: 16_384,
  /**
   * Largest read or write of one request, applied (or read) at one instant: 65 blocks at an unaligned
   * offset, within DynamoDB's 100 items of one transactional call and its 4 MB.
   */
  ioBytesMax: 256 * 1024,
  /** Largest volume: 16 TiB. */
  sizeBytesMax: 2 ** 44,
  /** Blocks one `DELETE /v1/volumes/{volume}` removes before it answers `202` (the client calls again). */
  deleteBlocksPerRequest: 2_000,
  /** Tries of a write whose read-modify-write of a partial block met a concurrent write of it. */
  writeAttemptsMax: 5,
  /** A writer's lease without renewal (docs/volumes.md, "One writer"): another holder may take over after it. */
  leaseSecondsDefault: 30,
  leaseSecondsMax: 300,
  /** Placement groups' fences an attach raises at once (a 1 TiB volume has 16,384). */
  fenceConcurrency: 16,
  /**
   * Snapshots a volume keeps at once (docs/volumes.md, "Snapshots"): a read of the oldest reads one copy index per
   * block whatever their number, and a block keeps at most one copy per snapshot.
   */
  snapshotsMax: 32,
} as const;

/** A volume's name: as a namespace's (one path segment, no `/`). */
export const volumeNamePattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/**
 * The keyspace of a namespace's volumes is the namespace `<namespace>:volumes`: `:` is outside namespacePattern,
 * so no API key's namespace is ever one, and blocks never appear in the namespace's own listings or counts.
 * Its keys are placed by the part before their first `/` (ring.ts, tokenOf).
 */
export const volumeNamespaceSuffix = ':volumes';

/** Replication settings (docs/consistency.md); each bounds a wait, a batch or a rate. */
export const replicationDefaults = {
  /** How long a handler trusts its copy of the shard health records before re-reading them. */
  healthRefreshMs: 1_000,
  /**
   * A recovering shard serves reads again only after this long (and an empty hint log): writers may
   * act on a health view up to healthRefreshMs old, so late hints arrive within it.
   */
  recoverySettleMs: 2_000,
  /** Hints replayed per query page; a shard's replay loops over pages until none are left. */
  hintReplayPageSize: 100,
  /** Concurrent replica writes while replaying hints. */
  hintReplayConcurrency: 8,
  /** Stream records per replicator invocation (the event source mapping's batch size). */
  streamBatchSize: 100,
  /** Token ranges anti-entropy compares per scheduled run; the next run continues where it stopped. */
  antiEntropyRangesPerRun: 8,
  /**
   * A scheduled maintenance run compares its slice only when the last one began at least this long ago:
   * every run of the one-minute schedule in AWS (half of it, so a run a little early still compares), one in
   * fifteen locally. Anti-entropy on every local run made an idle local cloud's largest cost (0.10 of a
   * core of its 0.25, docs/testing.md); `POST /v1/admin/repair` compares at once, whenever asked.
   */
  antiEntropyMinIntervalMs: 30_000,
  /** How often the maintenance job (probe, hint replay, anti-entropy) runs in AWS. */
  maintenanceEveryMinutes: 1,
  /** How often the local cloud runs it (it stands in for the EventBridge schedule). */
  localMaintenanceIntervalMs: 2_000,
} as const;

export type HandlerName =
  | 'authorizer'
  | 'kvRead'
  | 'kvWrite'
  | 'ring'
  | 'admin'
  | 'docs'
  | 'bootstrap'
  | 'replicator'
  | 'maintenance'
  | 'txn'
  | 'volumes'
  | 'txnStep'
  | 'txnSweeper'
  | 'txnApplier'
  | 'failoverStep'
  | 'rebalanceStep'
  | 'drShipper'
  | 'drKeyApplier'
  | 'drValueApplier'
  | 'drPromotionStep'
  | 'watch';

/** The handlers of cross-region disaster recovery: each runs only in a region of its `drRole` (docs/dr.md). */
export const drHandlerNames = ['drShipper', 'drKeyApplier', 'drValueApplier', 'drPromotionStep'] as const satisfies readonly HandlerName[];
export type DrHandlerName = (typeof drHandlerNames)[number];
/** The handlers every region runs. */
export type RegionHandlerName = Exclude<HandlerName, DrHandlerName>;

/** What a handler may touch; the CDK app grants exactly this (least privilege). */
export interface HandlerSpec {
  /** Path of the Lambda entry module (it wires the handler from the environment), relative to the repository root. */
  entry: string;
  description: string;
  shardTables: 'none' | 'read' | 'readWrite';
  controlTable: 'none' | 'read' | 'readWrite';
  hintsTable: 'none' | 'read' | 'readWrite';
  blobBucket: 'none' | 'read' | 'readWrite';
  txnTable?: 'none' | 'read' | 'readWrite';
  /** The backup region's pending table (docs/dr.md); absent in a region that is no backup. */
  pendingTable?: 'none' | 'read' | 'readWrite';
  /** The change feed's table (docs/watch.md): the stream consumer appends, the watch handler reads. */
  feedTable?: 'none' | 'read' | 'readWrite';
  /** Sends to the backup region (its key queue and bucket) when this region is a DR primary. */
  drLink?: boolean;
  /** With drLink: reads the backup's pending table for old write notices, which it settles (docs/dr.md). */
  drNotices?: boolean;
  /**
   * Serves API requests counted against their namespace's rate (docs/security.md, "Quotas"): may update
   * the rate buckets of the control table (partitions under `rateBucketPartitionPrefix`), and only those
   * beyond what `controlTable` grants.
   */
  rateLimited?: boolean;
  /**
   * Records when each API key was last used (docs/security.md, "Key rotation and expiry"): may update the
   * `apiKeyUseAttribute` of items in the API keys' partition, and nothing else there.
   */
  recordsKeyUse?: boolean;
  /** Runs only in a region with this DR role (docs/dr.md); absent: in every region. */
  drRole?: 'primary' | 'backup';
  /** Invoked by the backup region's key queue (SQS FIFO event source mapping). */
  drKeyQueue?: boolean;
  /** Invoked by the object-created events of the values arriving in the backup region's bucket. */
  drValueEvents?: boolean;
  /** Reads the depth of the backup region's key queue (the promotion drains it). */
  drKeyQueueDepth?: boolean;
  /** May start the promotion workflow of a backup region (POST /v1/admin/dr/promote). */
  startsPromotions?: boolean;
  /** May start (synchronous) executions of the transaction state machine. */
  startsTransactions?: boolean;
  /** May start executions of the failover state machine (POST /v1/admin/failovers). */
  startsFailovers?: boolean;
  /** May start executions of the rebalance state machine (POST /v1/admin/rebalance). */
  startsRebalances?: boolean;
  /**
   * Marks shards unavailable (it reaches shard tables for requests or replication), so with automatic
   * failover on (CDK context `autoFailover`) it may start the failover of a shard it finds down.
   */
  startsAutomaticFailovers?: boolean;
  /** The task of a state machine (invoked by Step Functions, never by API Gateway): which one. */
  stateMachineTask?: StateMachineName;
  /** Invoked by the shard tables' streams (one event source mapping per shard). */
  shardStreams?: boolean;
  /** Invoked by the transaction table's stream. */
  txnStream?: boolean;
  /** Invoked on a schedule (EventBridge in AWS, a timer in the local cloud). */
  everyMinutes?: number;
  /**
   * Files (relative to the repository root) copied next to the Lambda bundle, for what esbuild cannot
   * bundle as code: the handler reads each by its base name at start-up (lambdas/http/bundled-file.ts).
   */
  bundledFiles?: readonly string[];
  memoryMb: number;
  timeoutSeconds: number;
}

/** Redoc's browser bundle (npm `redoc`, pinned): the renderer of GET /docs, which the docs function bundles. */
export const apiPageScriptFile = 'node_modules/redoc/bundles/redoc.standalone.js';

export const handlers: Record<HandlerName, HandlerSpec> = {
  authorizer: {
    recordsKeyUse: true,
    entry: 'lambdas/entries/authorizer.ts',
    description: 'Maps an x-api-key to a namespace and role',
    shardTables: 'none',
    controlTable: 'read',
    hintsTable: 'none',
    blobBucket: 'none',
    memoryMb: 256,
    timeoutSeconds: 5,
  },
  kvRead: {
    rateLimited: true,
    startsAutomaticFailovers: true,
    entry: 'lambdas/entries/kv-read.ts',
    description: 'GET/HEAD a key, list keys by prefix, read up to 100 keys at once',
    // A read that meets a transaction's intent resolves it (docs/transactions.md, "Recovery"): it reads the
    // transaction's record, rolls a committed one forward or aborts an expired one, so it writes both tables.
    shardTables: 'readWrite',
    controlTable: 'read',
    hintsTable: 'none',
    blobBucket: 'read',
    txnTable: 'readWrite',
    // In a backup region, every read checks the key's pending entries first (docs/dr.md).
    pendingTable: 'read',
    memoryMb: 1024,
    timeoutSeconds: 28,
  },
  kvWrite: {
    rateLimited: true,
    startsAutomaticFailovers: true,
    entry: 'lambdas/entries/kv-write.ts',
    description: 'PUT/DELETE a key, increment a counter, large-value uploads; strong writes reach every live replica',
    // Control: a strong write that cannot reach a replica marks it unavailable (shard health). Transaction
    // records: a write that meets an intent resolves it, as a read does.
    shardTables: 'readWrite',
    controlTable: 'readWrite',
    hintsTable: 'readWrite',
    blobBucket: 'readWrite',
    txnTable: 'readWrite',
    // A key-sync namespace's write is acknowledged once its key message is in the backup's queue.
    drLink: true,
    // In a promoted backup region, a write of a key lost in the disaster removes its lost entries (docs/dr.md).
    pendingTable: 'readWrite',
    memoryMb: 1024,
    timeoutSeconds: 28,
  },
  ring: {
    rateLimited: true,
    entry: 'lambdas/entries/ring.ts',
    description: 'Describes the ring (keyrange)',
    shardTables: 'none',
    controlTable: 'read',
    hintsTable: 'none',
    blobBucket: 'none',
    memoryMb: 256,
    timeoutSeconds: 10,
  },
  watch: {
    rateLimited: true,
    entry: 'lambdas/entries/watch.ts',
    description: "GET /v1/watch: the changes of the caller's namespace by key prefix, from a cursor, with a long poll",
    // A function of its own: a long poll holds its instance for up to waitSecondsMax, apart from the data path's.
    shardTables: 'none',
    controlTable: 'read',
    hintsTable: 'none',
    blobBucket: 'none',
    feedTable: 'read',
    memoryMb: 256,
    timeoutSeconds: 28,
  },
  admin: {
    entry: 'lambdas/entries/admin.ts',
    description: 'Admin API: API keys, namespace settings, shard health, repair and failover on demand',
    shardTables: 'readWrite',
    controlTable: 'readWrite',
    hintsTable: 'readWrite',
    // DR reconciliation: the old primary reads its large values to offer them back; the promoted region
    // reads the offers and restores a lost key as a write. A restore that meets a transaction's intent
    // resolves it as every plain write does: reads its record, rolls a committed one forward, and aborts
    // an expired one (a write of its record).
    blobBucket: 'readWrite',
    txnTable: 'readWrite',
    startsFailovers: true,
    startsRebalances: true,
    // In a backup region: its DR status counts the pending entries, and it starts promotions; once
    // promoted, reconciliation removes lost entries.
    pendingTable: 'readWrite',
    startsPromotions: true,
    drKeyQueueDepth: true,
    // In the old primary: lost keys' values are offered back to the promoted region's bucket.
    drLink: true,
    memoryMb: 512,
    timeoutSeconds: 28,
  },
  docs: {
    entry: 'lambdas/entries/docs.ts',
    description: 'Serves the OpenAPI document and the API reference page',
    shardTables: 'none',
    controlTable: 'none',
    hintsTable: 'none',
    blobBucket: 'none',
    bundledFiles: [apiPageScriptFile],
    memoryMb: 256,
    timeoutSeconds: 10,
  },
  bootstrap: {
    entry: 'lambdas/entries/bootstrap.ts',
    description: 'Writes the initial ring at deploy time (CloudFormation custom resource)',
    shardTables: 'none',
    controlTable: 'readWrite',
    hintsTable: 'none',
    blobBucket: 'none',
    memoryMb: 256,
    timeoutSeconds: 20,
  },
  replicator: {
    startsAutomaticFailovers: true,
    entry: 'lambdas/entries/replicator.ts',
    description:
      "Applies each owner write from the shard streams to the key's replicas (version-guarded) and appends it to the change feed",
    // The feed rides on this consumer: a DynamoDB stream shard takes two readers at most, and the DR shipper is the other.
    feedTable: 'readWrite',
    shardTables: 'readWrite',
    controlTable: 'readWrite',
    hintsTable: 'readWrite',
    blobBucket: 'none',
    shardStreams: true,
    memoryMb: 512,
    timeoutSeconds: 60,
  },
  maintenance: {
    startsAutomaticFailovers: true,
    entry: 'lambdas/entries/maintenance.ts',
    description:
      'Probes unavailable shards, replays their hints before they serve again, runs anti-entropy; in a DR backup, retries pending keys whose value arrived',
    shardTables: 'readWrite',
    controlTable: 'readWrite',
    hintsTable: 'readWrite',
    // A DR backup's sweep applies values found in the bucket and removes the inline ones' objects; a DR
    // primary's initial sync ships every key to the backup.
    blobBucket: 'readWrite',
    pendingTable: 'readWrite',
    drLink: true,
    drNotices: true,
    everyMinutes: replicationDefaults.maintenanceEveryMinutes,
    memoryMb: 512,
    timeoutSeconds: 300,
  },
  txn: {
    rateLimited: true,
    startsAutomaticFailovers: true,
    entry: 'lambdas/entries/txn.ts',
    description: 'POST /v1/txn: commits a one-shard transaction in one atomic write, runs any other as the state machine',
    // The one-shard path reads and writes its shard, and copies a strong transaction's writes to the
    // replicas (marking an unreachable one and hinting it, as every writer does). It writes no record of
    // its own, but resolves another transaction's intent met on its keys as a reader does (reads the
    // record, rolls a committed one forward, aborts an expired one), so it writes the record table too.
    // Multi-shard transactions touch data only in the state machine's tasks.
    shardTables: 'readWrite',
    controlTable: 'readWrite',
    hintsTable: 'readWrite',
    blobBucket: 'none',
    txnTable: 'readWrite',
    startsTransactions: true,
    // A key-sync namespace's transaction is answered once the backup region knows of its writes.
    drLink: true,
    // In a promoted backup region, a transaction touching a key lost in the disaster is refused (docs/dr.md).
    pendingTable: 'read',
    memoryMb: 512,
    timeoutSeconds: 28,
  },
  volumes: {
    rateLimited: true,
    startsAutomaticFailovers: true,
    entry: 'lambdas/entries/volumes.ts',
    description: 'Block volumes: create, list, describe, delete; read, write and trim byte ranges, each one transaction over its blocks',
    // Blocks are keys of the volume keyspace: read and written on the shards (strong: copied to the replicas, an
    // unreachable one marked and hinted), and a write across two shards runs two-phase commit in the handler
    // (its record in the transaction table; a read that meets an intent resolves it).
    shardTables: 'readWrite',
    controlTable: 'readWrite',
    hintsTable: 'readWrite',
    blobBucket: 'none',
    txnTable: 'readWrite',
    // A key-sync namespace's write is answered once the backup region knows of its blocks (docs/dr.md).
    drLink: true,
    // In a backup region, a read checks the blocks' pending entries first (docs/dr.md).
    pendingTable: 'read',
    memoryMb: 1024,
    timeoutSeconds: 28,
  },
  txnStep: {
    startsAutomaticFailovers: true,
    entry: 'lambdas/entries/txn-step.ts',
    description: 'The tasks of the transaction state machine: begin, prepare, validate, decide, commit, abort',
    shardTables: 'readWrite',
    controlTable: 'readWrite',
    hintsTable: 'readWrite',
    blobBucket: 'none',
    txnTable: 'readWrite',
    stateMachineTask: 'transaction',
    memoryMb: 1024,
    timeoutSeconds: 20,
  },
  txnSweeper: {
    startsAutomaticFailovers: true,
    entry: 'lambdas/entries/txn-sweeper.ts',
    description: 'Aborts transactions past their deadline, rolls committed ones forward, clears their intents',
    shardTables: 'readWrite',
    controlTable: 'readWrite',
    hintsTable: 'none',
    blobBucket: 'none',
    txnTable: 'readWrite',
    everyMinutes: txnLimits.sweeperEveryMinutes,
    memoryMb: 512,
    timeoutSeconds: 120,
  },
  txnApplier: {
    startsAutomaticFailovers: true,
    entry: 'lambdas/entries/txn-applier.ts',
    description: "Applies each committed eventual transaction's intents from the transaction table's stream",
    // Reads the intents of the committed keys and applies them; the records arrive in the stream.
    shardTables: 'readWrite',
    controlTable: 'none',
    hintsTable: 'none',
    blobBucket: 'none',
    txnTable: 'none',
    txnStream: true,
    memoryMb: 512,
    timeoutSeconds: 60,
  },
  failoverStep: {
    entry: 'lambdas/entries/failover-step.ts',
    description: 'The tasks of the failover state machine: confirm, fence, hand over a range, settle transactions, publish, report, abort',
    // Reads every candidate's token index and copies versions and hints to the new owner; publishes the
    // ring and the failover's record in the control table; settles the transactions with a write on a
    // handed-over range (reads their records through the deadline index, decides pending ones aborted).
    shardTables: 'readWrite',
    controlTable: 'readWrite',
    hintsTable: 'readWrite',
    blobBucket: 'none',
    txnTable: 'readWrite',
    stateMachineTask: 'failover',
    memoryMb: 512,
    // The fence step waits out the ring lease; a range's catch-up copies at most its keys.
    timeoutSeconds: 300,
  },
  rebalanceStep: {
    entry: 'lambdas/entries/rebalance-step.ts',
    description: 'The task of the rebalance state machine: moves ranges on (mark, copy, cut over, clean) until its budget is spent',
    // Copies ranges between shard tables (token index and items) and removes the copies moved ranges left
    // behind; publishes the ring and saves the job in the control table; under a cut-over's fence it settles
    // the transactions with a write in the range (their records, through the deadline index).
    shardTables: 'readWrite',
    controlTable: 'readWrite',
    hintsTable: 'none',
    blobBucket: 'none',
    txnTable: 'readWrite',
    stateMachineTask: 'rebalance',
    memoryMb: 1024,
    // A step works rebalanceDefaults.stepBudgetMs, then checkpoints and returns; the rest is headroom.
    timeoutSeconds: 300,
  },
  drShipper: {
    entry: 'lambdas/entries/dr-shipper.ts',
    description:
      "Ships each owner write to the backup region: its key message to the backup's FIFO queue, then its value to the backup's bucket",
    // Reads the ring (which copy is the owner's), the owner's version of a key a former owner wrote (StreamOwnership)
    // and large values from the blob bucket; the values and key messages go through the DR link. A second consumer of
    // the shard streams, next to the replicator.
    shardTables: 'read',
    controlTable: 'read',
    hintsTable: 'none',
    blobBucket: 'read',
    drLink: true,
    drRole: 'primary',
    shardStreams: true,
    memoryMb: 1024,
    timeoutSeconds: 120,
  },
  drKeyApplier: {
    entry: 'lambdas/entries/dr-key-applier.ts',
    description: 'Backup region: records each key message as pending, applies the value if it came first, applies deletes',
    shardTables: 'readWrite',
    controlTable: 'read',
    hintsTable: 'none',
    blobBucket: 'readWrite',
    pendingTable: 'readWrite',
    drRole: 'backup',
    drKeyQueue: true,
    memoryMb: 512,
    timeoutSeconds: 60,
  },
  drValueApplier: {
    entry: 'lambdas/entries/dr-value-applier.ts',
    description:
      "Backup region: applies each arriving value to the region's shards (sha256 verified, version-guarded) and clears its pending entry",
    shardTables: 'readWrite',
    controlTable: 'read',
    hintsTable: 'none',
    blobBucket: 'readWrite',
    pendingTable: 'readWrite',
    drRole: 'backup',
    drValueEvents: true,
    memoryMb: 1024,
    timeoutSeconds: 120,
  },
  drPromotionStep: {
    entry: 'lambdas/entries/dr-promotion-step.ts',
    description:
      'Backup region: the tasks of the promotion workflow: fence the primary, drain the key queue, wait for values, mark lost keys, open',
    // Writes the DR state and the promotion's report (control table); marks pending entries lost. Before
    // that it applies what arrived and was left pending (a transaction half stored by a crashed applier):
    // the shards and the bucket, as the appliers use them.
    shardTables: 'readWrite',
    controlTable: 'readWrite',
    hintsTable: 'none',
    blobBucket: 'readWrite',
    pendingTable: 'readWrite',
    drRole: 'backup',
    drKeyQueueDepth: true,
    stateMachineTask: 'drPromotion',
    memoryMb: 512,
    // The fence step waits out the primary's lease; the drain and value waits are bounded below this.
    timeoutSeconds: 600,
  },
};

/** Rebalancing (docs/rebalancing.md): how ranges are copied and cut over, and how much one step does. */
export const rebalanceDefaults = {
  /**
   * Items per copy page (token-index queries and BatchGetItem reads of 100): the job's checkpoint is saved
   * after each, and the next page is read while this one is written.
   */
  pageSize: 1_000,
  /** Catch-up copies at once in a cut-over. */
  catchUpConcurrency: 16,
  /** Work per workflow step before it checkpoints and returns (the state machine calls it again). */
  stepBudgetMs: 30_000,
  /** Ranges cut over together under one fence and one lease wait (a wave), at most. */
  cutoverRangesMax: 4,
  /**
   * Keys a wave of cut-overs holds, at most: its fenced catch-up compares them all, and requests wait for
   * the fence. A range no write reached since its backfill is verified by reading its owner alone (the
   * backfill's digest), so a wave of 4,000 such keys holds its fence about as long as 2,000 compared on
   * both sides.
   */
  cutoverKeysMax: 4_000,
  /** Ranges of a wave caught up at once. */
  cutoverConcurrency: 4,
  /**
   * DynamoDB requests a rebalance step has in flight at once, over all its reads and writes of the shard
   * tables (wiring's mover client). Bounds what a move takes from client traffic: on DynamoDB Local one
   * thread serves every table, and a client's request waits behind the move's queued ones.
   */
  requestsInFlight: 2,
  /**
   * Of those, token-index queries (range reads, catch-up and verification): DynamoDB Local holds every
   * other request back while it runs a query (`npm run bench:engine-hold`), so the move keeps one at a time
   * and a client's request waits behind one query at most, not a queue of them.
   */
  queriesInFlight: 1,
  /** Catch-up passes a cut-over makes before it gives the range back to its owner for now. */
  verifyPassesMax: 4,
  /** The copy's ceiling when a start names none: keys per second over the whole rebalance (0: none). */
  defaultRateKeysPerSecond: 2_000,
  /** The highest rate a start or a rate change may ask for. */
  rateKeysPerSecondMax: 100_000,
  /** Shards one POST /v1/admin/rebalance may add (new ids follow the highest on the ring). */
  shardsAddedMax: 8,
  /** Shards one POST /v1/admin/rebalance may name to remove. */
  shardsRemovedMax: 64,
  backoffMs: { first: 50, max: 5_000 },
} as const;

/** Failover (docs/failover.md): how a shard is confirmed down before its ranges are handed over. */
export const failoverDefaults = {
  /** Probes in a row, none answered, that confirm a shard is down; one answer calls the failover off. */
  confirmProbes: 3,
  confirmIntervalMs: 100,
  /** Versions copied at once to a range's new owner. */
  catchUpConcurrency: 16,
  hintPageSize: 100,
  /** Failover records GET /v1/admin/failovers lists. */
  recentRecords: 20,
  /**
   * The transactions a failover settles (docs/failover.md, "Transactions"): deadlines from the longest
   * transaction plus the sweeper's lag before the shard was marked down, to the longest one after now.
   */
  txnLookbackMs: txnLimits.txnTimeoutMsMax + 5 * 60_000,
  txnLookaheadMs: txnLimits.txnTimeoutMsMax + 60_000,
  txnPageSize: 500,
  /** A returning shard's reconciliation (docs/failover.md, "Return"). */
  rejoin: { copyConcurrency: 16, divergentReportedMax: 100, recordsSearched: 50 },
} as const;

/** The transaction state machine (ASL, in schemas/): CDK deploys this file, the local cloud runs it. */
export const stateMachines = {
  transaction: {
    definitionFile: 'schemas/txn-state-machine.asl.json',
    taskHandler: 'txnStep' as RegionHandlerName,
    type: 'EXPRESS',
    // The definition substitution the file names its Task Lambda by: `"Resource": "${TxnStepFunctionArn}"`.
    taskArnSubstitution: 'TxnStepFunctionArn',
  },
  // Standard: a failover is rare, may take minutes, and its execution history is worth keeping.
  failover: {
    definitionFile: 'schemas/failover-state-machine.asl.json',
    taskHandler: 'failoverStep' as RegionHandlerName,
    type: 'STANDARD',
    taskArnSubstitution: 'FailoverStepFunctionArn',
  },
  // Standard: a rebalance runs for minutes to hours, one bounded step after another, and is resumed by id.
  rebalance: {
    definitionFile: 'schemas/rebalance-state-machine.asl.json',
    taskHandler: 'rebalanceStep' as RegionHandlerName,
    type: 'STANDARD',
    taskArnSubstitution: 'RebalanceStepFunctionArn',
  },
  // Standard: a promotion is rare, waits minutes at most, and its history is the disaster's record.
  drPromotion: {
    definitionFile: 'schemas/dr-promotion-state-machine.asl.json',
    taskHandler: 'drPromotionStep' as HandlerName,
    type: 'STANDARD',
    taskArnSubstitution: 'DrPromotionStepFunctionArn',
    drRole: 'backup',
  },
} as const;

export type StateMachineName = keyof typeof stateMachines;

/** Key prefixes of the blob bucket: presigned uploads land in one, committed values live in the other. */
export const blobPrefixes = { uploads: 'uploads/', blobs: 'blobs/' } as const;

/** Where the primary's values arrive in the backup region's blob bucket (docs/dr.md); large ones stay there as blobs. */
export const drPrefixes = { values: 'dr/values/' } as const;

/**
 * The control table's DR partitions: the DR state (and a primary's initial-sync progress) and the
 * promotions' reports. A primary reads the backup's two across the link, and its role may read no other.
 */
export const drControlPartitions = { state: 'dr', promotions: 'drPromotion' } as const;

/**
 * The control table's partitions of per-namespace quotas, `<prefix><namespace>`: one per namespace, so a
 * busy namespace's rate bucket or usage counter shares no partition's throughput with another's.
 */
export const rateBucketPartitionPrefix = 'rate#';

/** The control table's partition of API keys (one item per key id), and the one attribute the authorizer writes there. */
export const apiKeyPartition = 'apikeys';

/**
 * The control table's partition of the audit trail (docs/security.md, "Audit"), sorted by time: admin
 * operations are few (people and runbooks, not traffic), so one partition takes them all.
 */
export const auditPartition = 'audit';

/**
 * The control table's partition of IAM principal mappings (docs/security.md, "IAM authentication"): one item
 * per principal, sorted by its match ARN (a role or user ARN without its path), read by the API handlers.
 */
export const iamPrincipalPartition = 'iamprincipals';
/** Mappings one deployment holds at most: the admin listing is one query, and a handler caches what it reads. */
export const iamPrincipalsMax = 1_000;
export const auditDefaults = { listLimitDefault: 50, listLimitMax: 200, requestCharsMax: 2_000 } as const;
export const apiKeyUseAttribute = 'lastUsedAt';
export const usageCounterPartitionPrefix = 'usage#';

export type HttpMethod = 'GET' | 'PUT' | 'POST' | 'DELETE' | 'HEAD';

export interface RouteSpec {
  method: HttpMethod;
  /** API Gateway resource path with `{param}` placeholders. */
  path: string;
  handler: RegionHandlerName;
  operationId: string;
  /** False only for the public documentation routes. */
  authorized: boolean;
  /** Needs an admin key. */
  admin?: boolean;
}

export const routes = [
  { method: 'GET', path: '/v1/kv', handler: 'kvRead', operationId: 'listKeys', authorized: true },
  { method: 'GET', path: '/v1/kv/{key}', handler: 'kvRead', operationId: 'getValue', authorized: true },
  { method: 'HEAD', path: '/v1/kv/{key}', handler: 'kvRead', operationId: 'headValue', authorized: true },
  { method: 'PUT', path: '/v1/kv/{key}', handler: 'kvWrite', operationId: 'putValue', authorized: true },
  // `/v1/kv/` with no key: a clear 400 for the empty key rather than "no such route".
  { method: 'PUT', path: '/v1/kv', handler: 'kvWrite', operationId: 'putEmptyKey', authorized: true },
  { method: 'DELETE', path: '/v1/kv', handler: 'kvWrite', operationId: 'deleteEmptyKey', authorized: true },
  { method: 'DELETE', path: '/v1/kv/{key}', handler: 'kvWrite', operationId: 'deleteValue', authorized: true },
  { method: 'POST', path: '/v1/kv/{key}/uploads', handler: 'kvWrite', operationId: 'createUpload', authorized: true },
  // A sub-resource of the key, as uploads are: API Gateway takes no `{key}:increment` path part.
  { method: 'POST', path: '/v1/kv/{key}/increment', handler: 'kvWrite', operationId: 'incrementValue', authorized: true },
  {
    method: 'POST',
    path: '/v1/kv/{key}/uploads/{uploadId}/commit',
    handler: 'kvWrite',
    operationId: 'commitUpload',
    authorized: true,
  },
  // Several keys in one request: its own resource, since a literal under /v1/kv/ would shadow a key of that name
  // (and API Gateway takes no `:` in a path part, so `/v1/kv:batchGet` cannot be declared).
  { method: 'POST', path: '/v1/batch/get', handler: 'kvRead', operationId: 'batchGet', authorized: true },
  { method: 'GET', path: '/v1/ring', handler: 'ring', operationId: 'describeRing', authorized: true },
  { method: 'GET', path: '/v1/watch', handler: 'watch', operationId: 'watchChanges', authorized: true },
  // Block volumes (docs/volumes.md).
  { method: 'GET', path: '/v1/volumes', handler: 'volumes', operationId: 'listVolumes', authorized: true },
  { method: 'POST', path: '/v1/volumes', handler: 'volumes', operationId: 'createVolume', authorized: true },
  { method: 'GET', path: '/v1/volumes/{volume}', handler: 'volumes', operationId: 'describeVolume', authorized: true },
  { method: 'DELETE', path: '/v1/volumes/{volume}', handler: 'volumes', operationId: 'deleteVolume', authorized: true },
  { method: 'GET', path: '/v1/volumes/{volume}/data', handler: 'volumes', operationId: 'readVolume', authorized: true },
  { method: 'PUT', path: '/v1/volumes/{volume}/data', handler: 'volumes', operationId: 'writeVolume', authorized: true },
  { method: 'POST', path: '/v1/volumes/{volume}/trim', handler: 'volumes', operationId: 'trimVolume', authorized: true },
  { method: 'POST', path: '/v1/volumes/{volume}/resize', handler: 'volumes', operationId: 'resizeVolume', authorized: true },
  // One writer at a time: its lease (attach, renew) and its end (detach).
  { method: 'POST', path: '/v1/volumes/{volume}/lease', handler: 'volumes', operationId: 'attachVolume', authorized: true },
  { method: 'DELETE', path: '/v1/volumes/{volume}/lease', handler: 'volumes', operationId: 'detachVolume', authorized: true },
  // Snapshots: taken, listed and deleted; read as the volume was.
  { method: 'GET', path: '/v1/volumes/{volume}/snapshots', handler: 'volumes', operationId: 'listSnapshots', authorized: true },
  { method: 'POST', path: '/v1/volumes/{volume}/snapshots', handler: 'volumes', operationId: 'createSnapshot', authorized: true },
  {
    method: 'DELETE',
    path: '/v1/volumes/{volume}/snapshots/{snapshot}',
    handler: 'volumes',
    operationId: 'deleteSnapshot',
    authorized: true,
  },
  {
    method: 'GET',
    path: '/v1/volumes/{volume}/snapshots/{snapshot}/data',
    handler: 'volumes',
    operationId: 'readSnapshot',
    authorized: true,
  },
  { method: 'POST', path: '/v1/txn', handler: 'txn', operationId: 'transact', authorized: true },
  { method: 'GET', path: '/v1/admin/keys', handler: 'admin', operationId: 'listApiKeys', authorized: true, admin: true },
  { method: 'POST', path: '/v1/admin/keys', handler: 'admin', operationId: 'createApiKey', authorized: true, admin: true },
  { method: 'GET', path: '/v1/admin/audit', handler: 'admin', operationId: 'listAuditEntries', authorized: true, admin: true },
  // IAM principal mappings (docs/security.md, "IAM authentication"); the ARN travels percent-encoded (`/` as %2F).
  { method: 'GET', path: '/v1/admin/principals', handler: 'admin', operationId: 'listPrincipalMappings', authorized: true, admin: true },
  { method: 'POST', path: '/v1/admin/principals', handler: 'admin', operationId: 'createPrincipalMapping', authorized: true, admin: true },
  {
    method: 'DELETE',
    path: '/v1/admin/principals/{principalArn}',
    handler: 'admin',
    operationId: 'deletePrincipalMapping',
    authorized: true,
    admin: true,
  },
  {
    method: 'POST',
    path: '/v1/admin/keys/{keyId}/rotate',
    handler: 'admin',
    operationId: 'rotateApiKey',
    authorized: true,
    admin: true,
  },
  {
    method: 'DELETE',
    path: '/v1/admin/keys/{keyId}',
    handler: 'admin',
    operationId: 'revokeApiKey',
    authorized: true,
    admin: true,
  },
  {
    method: 'GET',
    path: '/v1/admin/namespaces/{namespace}',
    handler: 'admin',
    operationId: 'getNamespaceSettings',
    authorized: true,
    admin: true,
  },
  {
    method: 'PUT',
    path: '/v1/admin/namespaces/{namespace}',
    handler: 'admin',
    operationId: 'putNamespaceSettings',
    authorized: true,
    admin: true,
  },
  { method: 'GET', path: '/v1/admin/shards', handler: 'admin', operationId: 'describeShards', authorized: true, admin: true },
  { method: 'POST', path: '/v1/admin/repair', handler: 'admin', operationId: 'repair', authorized: true, admin: true },
  { method: 'GET', path: '/v1/admin/failovers', handler: 'admin', operationId: 'listFailovers', authorized: true, admin: true },
  { method: 'POST', path: '/v1/admin/failovers', handler: 'admin', operationId: 'startFailover', authorized: true, admin: true },
  { method: 'GET', path: '/v1/admin/dr/status', handler: 'admin', operationId: 'describeDr', authorized: true, admin: true },
  { method: 'POST', path: '/v1/admin/dr/promote', handler: 'admin', operationId: 'promote', authorized: true, admin: true },
  { method: 'GET', path: '/v1/admin/dr/report', handler: 'admin', operationId: 'promotionReport', authorized: true, admin: true },
  { method: 'POST', path: '/v1/admin/dr/sync', handler: 'admin', operationId: 'startDrSync', authorized: true, admin: true },
  { method: 'POST', path: '/v1/admin/dr/offer', handler: 'admin', operationId: 'offerLostValues', authorized: true, admin: true },
  { method: 'GET', path: '/v1/admin/dr/lost', handler: 'admin', operationId: 'listLostKeys', authorized: true, admin: true },
  { method: 'POST', path: '/v1/admin/dr/reconcile', handler: 'admin', operationId: 'reconcileLostKey', authorized: true, admin: true },
  // Online rebalancing (docs/rebalancing.md): one runs at a time; its id names the one the actions act on.
  { method: 'GET', path: '/v1/admin/rebalance', handler: 'admin', operationId: 'describeRebalance', authorized: true, admin: true },
  { method: 'POST', path: '/v1/admin/rebalance', handler: 'admin', operationId: 'startRebalance', authorized: true, admin: true },
  {
    method: 'POST',
    path: '/v1/admin/rebalance/{id}/pause',
    handler: 'admin',
    operationId: 'pauseRebalance',
    authorized: true,
    admin: true,
  },
  {
    method: 'POST',
    path: '/v1/admin/rebalance/{id}/resume',
    handler: 'admin',
    operationId: 'resumeRebalance',
    authorized: true,
    admin: true,
  },
  {
    method: 'POST',
    path: '/v1/admin/rebalance/{id}/cancel',
    handler: 'admin',
    operationId: 'cancelRebalance',
    authorized: true,
    admin: true,
  },
  {
    method: 'PUT',
    path: '/v1/admin/rebalance/{id}/rate',
    handler: 'admin',
    operationId: 'setRebalanceRate',
    authorized: true,
    admin: true,
  },
  { method: 'GET', path: '/openapi.json', handler: 'docs', operationId: 'openApiDocument', authorized: false },
  { method: 'GET', path: '/docs', handler: 'docs', operationId: 'apiPage', authorized: false },
  // The renderer of /docs (Redoc's browser bundle), served by us: the page must work without internet.
  { method: 'GET', path: '/docs/reference.js', handler: 'docs', operationId: 'apiPageScript', authorized: false },
  // `GET /`: a small JSON index pointing at the documentation, rather than a 404 for the first request a user tries.
  { method: 'GET', path: '/', handler: 'docs', operationId: 'apiIndex', authorized: false },
] as const satisfies readonly RouteSpec[];

/** The operationIds of one handler's routes: its router must implement exactly these. */
export type OperationIdOf<Handler extends HandlerName> = Extract<(typeof routes)[number], { handler: Handler }>['operationId'];

/** Physical names of one deployment. */
export interface Names {
  stage: string;
  prefix: string;
  shardTable(shardId: number): string;
  controlTable: string;
  txnTable: string;
  hintsTable: string;
  /** Backup region: the keys whose values have not arrived (docs/dr.md). */
  pendingTable: string;
  /** The change feed (docs/watch.md). */
  feedTable: string;
  /** Backup region: the FIFO queue the primary sends key messages to. */
  drKeyQueue: string;
  blobBucket: string;
  apiName: string;
  transactionStateMachine: string;
  /** Each workflow's state machine name. */
  stateMachineName: (machine: StateMachineName) => string;
  functionName(handler: HandlerName): string;
  /** The SNS topic the deployment's alarms notify. */
  alarmTopic: string;
}

/** What a stage may be: it names every resource (`ringstore-<stage>-…`). */
export const stagePattern = /^[a-z][a-z0-9-]{0,19}$/;

/** Derives every physical name of a stage from one prefix. */
export function namesFor(stage: string = defaults.stage, account = ''): Names {
  if (!stagePattern.test(stage)) throw new Error(`stage "${stage}" must match ${stagePattern}`);
  const prefix = `ringstore-${stage}`;
  return {
    stage,
    prefix,
    shardTable: (shardId) => `${prefix}-shard-${shardId}`,
    controlTable: `${prefix}-control`,
    txnTable: `${prefix}-txn`,
    hintsTable: `${prefix}-hints`,
    pendingTable: `${prefix}-pending`,
    feedTable: `${prefix}-feed`,
    drKeyQueue: `${prefix}-dr-keys.fifo`,
    // Bucket names are global in AWS: the account id (when known) keeps them unique.
    blobBucket: account ? `${prefix}-blobs-${account}` : `${prefix}-blobs`,
    apiName: `${prefix}-api`,
    transactionStateMachine: `${prefix}-txn`,
    stateMachineName: (machine) => (machine === 'transaction' ? `${prefix}-txn` : `${prefix}-${machine}`),
    functionName: (handler) => `${prefix}-${handler}`,
    alarmTopic: `${prefix}-alarms`,
  };
}

/** Environment variables every handler reads (parsed once by lambdas/config.ts). */
export const envVars = {
  stage: 'RINGSTORE_STAGE',
  shardCount: 'RINGSTORE_SHARD_COUNT',
  replicationFactor: 'RINGSTORE_REPLICATION_FACTOR',
  vnodesPerShard: 'RINGSTORE_VNODES_PER_SHARD',
  blobBucket: 'RINGSTORE_BLOB_BUCKET',
  dynamodbEndpoint: 'RINGSTORE_DYNAMODB_ENDPOINT',
  s3Endpoint: 'RINGSTORE_S3_ENDPOINT',
  redisUrl: 'RINGSTORE_REDIS_URL',
  /** The cache's ACL user: set, every connection authenticates as it (docs/security.md, "The L2 cache"). */
  redisUser: 'RINGSTORE_REDIS_USER',
  /** Password mode (the local cloud's redis-server): the user's password. */
  redisPassword: 'RINGSTORE_REDIS_PASSWORD',
  /** IAM mode (ElastiCache): the replication group id a SigV4-presigned token is signed for; the user is IAM-enabled. */
  redisIamCache: 'RINGSTORE_REDIS_IAM_CACHE',
  l1Policy: 'RINGSTORE_L1_POLICY',
  l1EntriesMax: 'RINGSTORE_L1_ENTRIES_MAX',
  l1BytesMax: 'RINGSTORE_L1_BYTES_MAX',
  l1TtlMs: 'RINGSTORE_L1_TTL_MS',
  l2TtlSeconds: 'RINGSTORE_L2_TTL_SECONDS',
  /** `1` arms crash points and shard outages for tests; production bundles refuse to start with it. */
  faultInjection: 'RINGSTORE_FAULT_INJECTION',
  autoFailover: 'RINGSTORE_AUTO_FAILOVER',
  /**
   * How long a handler trusts its cached ring for eventual reads and listings (default ringRefreshMs, 5 s): the
   * bound on their routing staleness, and what a rebalance waits out before it cleans up moved ranges.
   */
  ringRefreshMs: 'RINGSTORE_RING_REFRESH_MS',
  failoverConfirmProbes: 'RINGSTORE_FAILOVER_CONFIRM_PROBES',
  failoverConfirmIntervalMs: 'RINGSTORE_FAILOVER_CONFIRM_INTERVAL_MS',
  failoverStateMachineArn: 'RINGSTORE_FAILOVER_STATE_MACHINE_ARN',
  rebalanceStateMachineArn: 'RINGSTORE_REBALANCE_STATE_MACHINE_ARN',
  /** Backup: ARN of the promotion state machine (AWS); unset locally, where the local runner executes it. */
  drPromotionStateMachineArn: 'RINGSTORE_DR_PROMOTION_STATE_MACHINE_ARN',
  /** This region's part in cross-region disaster recovery: `none` (default), `primary` or `backup` (docs/dr.md). */
  drRole: 'RINGSTORE_DR_ROLE',
  /** Primary: the backup region's key queue URL, bucket and region; endpoints override them locally. */
  drKeyQueueUrl: 'RINGSTORE_DR_KEY_QUEUE_URL',
  drBucket: 'RINGSTORE_DR_BUCKET',
  drRegion: 'RINGSTORE_DR_REGION',
  drSqsEndpoint: 'RINGSTORE_DR_SQS_ENDPOINT',
  drS3Endpoint: 'RINGSTORE_DR_S3_ENDPOINT',
  drDynamodbEndpoint: 'RINGSTORE_DR_DYNAMODB_ENDPOINT',
  /**
   * Primary: `keyFirst` (Ringstore) or `together`, the baseline of `npm run bench:dr`: each value, then
   * its key message, as a store that ships key and value as one does. Never for a deployment.
   */
  drShipOrder: 'RINGSTORE_DR_SHIP_ORDER',
  /** Backup: how long a promotion waits for values in transit (default drDefaults.valueWaitMs). */
  drValueWaitMs: 'RINGSTORE_DR_VALUE_WAIT_MS',
  /** Backup: this region's SQS endpoint (local engines). */
  sqsEndpoint: 'RINGSTORE_SQS_ENDPOINT',
  /** ARN of the transaction state machine (AWS); unset locally, where the local runner executes it. */
  txnStateMachineArn: 'RINGSTORE_TXN_STATE_MACHINE_ARN',
  /** The request rate and burst of a namespace without its own (docs/security.md, "Quotas"); CDK sets them from context. */
  namespaceRatePerSecond: 'RINGSTORE_NAMESPACE_RATE_PER_SECOND',
  namespaceBurst: 'RINGSTORE_NAMESPACE_BURST',
  /** How long a handler keeps an IAM principal's mapping (default: the authorizer cache TTL, as API keys). */
  iamCacheTtlSeconds: 'RINGSTORE_IAM_CACHE_TTL_SECONDS',
  /** How long the change feed keeps a change (default watchDefaults.retentionSeconds); CDK sets it from context. */
  watchRetentionSeconds: 'RINGSTORE_WATCH_RETENTION_SECONDS',
  /** How far a watcher's read trails the clock (default watchDefaults.settleMs, docs/watch.md "No gap"). */
  watchSettleMs: 'RINGSTORE_WATCH_SETTLE_MS',
  /** How often a waiting watcher reads its partitions again (default watchDefaults.pollMs). */
  watchPollMs: 'RINGSTORE_WATCH_POLL_MS',
  /** How often a waiting watcher reads its partitions, at most (default watchDefaults.readIntervalMinMs; ≤ the poll interval). */
  watchReadIntervalMinMs: 'RINGSTORE_WATCH_READ_INTERVAL_MIN_MS',
} as const;

/** Cache defaults (docs/architecture.md, "Cache"): a small, short-lived L1 per instance, a longer-lived shared L2. */
export const cacheDefaults = {
  l1Policy: 'lru',
  l1EntriesMax: 10_000,
  l1BytesMax: 64 * 1024 * 1024,
  /** Bounds how stale another instance's L1 can be after a write: eventual reads only. */
  l1TtlMs: 1_000,
  l2TtlSeconds: 300,
} as const;

/**
 * The L2 cache's one ACL user (docs/security.md, "The L2 cache"): the handlers connect as it, and it may run
 * the adapter's commands (reads, the version-guarded Lua write and what the script calls, PING, the client's
 * ready check) on the adapter's keys only. ElastiCache (an IAM-enabled user) and the local redis-server
 * (a password) are given the same rules.
 */
export const cacheAcl = {
  /** Every L2 key starts with it (lambdas/adapters/redis-cache.ts). */
  keyPrefix: 'rs:',
  commands: ['hmget', 'hget', 'hset', 'pexpire', 'eval', 'evalsha', 'ping', 'info'],
  /**
   * The user's name, also its ElastiCache user id: IAM authentication needs the two equal and lowercase, and
   * user ids are unique per account and region, so the stage's prefix is in it.
   */
  userName: (prefix: string): string => `${prefix}-l2`,
} as const;

/** The ACL rules of {@link cacheAcl}'s user, in the syntax both ElastiCache and redis-server take (without a password). */
export const cacheAccessString = `on ~${cacheAcl.keyPrefix}* -@all ${cacheAcl.commands.map((c) => `+${c}`).join(' ')}`;

/**
 * The constant every production bundle (CDK's esbuild) defines, so fault injection can tell a deployed
 * function from a test run: a bundle that sees RINGSTORE_FAULT_INJECTION refuses to start.
 */
export const productionBuildDefine = { 'process.env.RINGSTORE_PRODUCTION_BUILD': '"true"' } as const;
