// Builders of the data path's adapters: shard tables (behind fault injection in test runs), hints, blobs,
// transaction records, and the two-level value cache (L1 in the instance, L2 in Redis/ElastiCache).
import { DynamoHintStore } from '../adapters/dynamodb-hint-store';
import { DynamoShardStore } from '../adapters/dynamodb-shard-store';
import { DynamoTxnRecordStore } from '../adapters/dynamodb-txn-store';
import { FaultyShardStore } from '../adapters/fault-injection';
import { ElastiCacheIamToken } from '../adapters/elasticache-iam-token';
import { RedisCache } from '../adapters/redis-cache';
import { ReplicationStats } from '../adapters/replication-metrics';
import { powertoolsMetrics } from '../adapters/powertools-metrics';
import { FailoverStats } from '../adapters/failover-metrics';
import { CacheStats, type CacheOperation } from '../adapters/cache-metrics';
import { DeferredBlobStore } from '../adapters/deferred-blob-store';
import { L1Cache } from '../core/l1-cache';
import { StreamOwnership } from '../core/stream-ownership';
import { TwoLevelCache } from '../core/two-level-cache';
import type { BlobStore, HintStore, ShardStore, TxnRecordStore } from '../ports';
import { destroyClients, documentClient } from './clients';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ringSource } from './control';
import { sleep, type Wiring } from './wiring';

export function shardStore(wiring: Wiring): ShardStore {
  return shardStoreThrough(wiring, 'shards', documentClient(wiring));
}

/** What the shard streams' consumers weigh each write by (the replicator, the change feed, the DR shipper): one per process. */
export function streamOwnership(wiring: Wiring): StreamOwnership {
  return wiring.shared(
    'streamOwnership',
    () => new StreamOwnership({ ring: ringSource(wiring), shards: shardStore(wiring), clock: wiring.clock, sleep }),
  );
}

/** The shard tables through `client`, as the port `name` (a rebalance's move has a client of its own). */
export function shardStoreThrough(wiring: Wiring, name: string, client: DynamoDBDocumentClient): ShardStore {
  return wiring.port<ShardStore>('shardTables', 'read', name, () => {
    // The control table holds the usage counters that writes in a namespace with a storage quota change.
    const real = new DynamoShardStore(client, wiring.config.controlTable);
    // Fault injection wraps the real store; it exists only in test runs (the config refuses it in a production bundle).
    return wiring.faults ? new FaultyShardStore(real, wiring.faults) : real;
  });
}

export function hintStore(wiring: Wiring): HintStore {
  return wiring.port('hintsTable', 'read', 'hints', () => new DynamoHintStore(documentClient(wiring), wiring.config.hintsTable));
}

export function blobStore(wiring: Wiring): BlobStore {
  return wiring.port(
    'blobBucket',
    'read',
    'blobs',
    () =>
      // Loaded on first use: see DeferredBlobStore.
      new DeferredBlobStore(async () => {
        const [{ S3BlobStore }, { s3Client }] = await Promise.all([import('../adapters/s3-blob-store'), import('./s3-client')]);
        return new S3BlobStore(s3Client(wiring), wiring.config.blobBucket);
      }),
  );
}

export function txnRecordStore(wiring: Wiring): TxnRecordStore {
  return wiring.port('txnTable', 'read', 'txnRecords', () => new DynamoTxnRecordStore(documentClient(wiring), wiring.config.txnTable));
}

/** The L2 cache client, or undefined without a Redis URL (the local cloud without redis-server). */
export function remoteCache(wiring: Wiring): RedisCache | undefined {
  return wiring.shared('l2', () => {
    const { redisUrl, redisAuth, region } = wiring.config;
    if (!redisUrl) return undefined;
    const stats = cacheStats(wiring);
    const onError = (operation: CacheOperation) => stats.failed(operation);
    if (!redisAuth) return new RedisCache(redisUrl, { onError });
    const { username } = redisAuth;
    // IAM mode signs a token with the function's role (docs/security.md, "The L2 cache").
    const password =
      redisAuth.mode === 'password'
        ? redisAuth.password
        : new ElastiCacheIamToken({ cacheName: redisAuth.cacheName, userId: username, region });
    return new RedisCache(redisUrl, { auth: { username, password }, onError });
  });
}

/** The value cache of eventual reads and write-through; undefined when both levels are off. */
export function valueCache(wiring: Wiring): TwoLevelCache | undefined {
  return wiring.shared('cache', () => {
    const { cache: c } = wiring.config;
    // L1 is off when sized to zero; L2 is off without a Redis URL.
    const l1 =
      c.l1EntriesMax > 0 && c.l1BytesMax > 0
        ? new L1Cache({ policy: c.l1Policy, entriesMax: c.l1EntriesMax, bytesMax: c.l1BytesMax, ttlMs: c.l1TtlMs, clock: wiring.clock })
        : undefined;
    const l2 = remoteCache(wiring);
    return l1 || l2 ? new TwoLevelCache(l1, l2, c.l2TtlSeconds * 1000, cacheStats(wiring)) : undefined;
  });
}

/** Failover observations; published as CloudWatch metrics (EMF lines) only inside Lambda. */
export function failoverStats(wiring: Wiring): FailoverStats {
  return wiring.shared('failoverStats', () => new FailoverStats(wiring.config.inLambda ? powertoolsMetrics() : undefined));
}

/** Value cache observations (hits by level, misses, L2 errors); CloudWatch metrics only inside Lambda. */
export function cacheStats(wiring: Wiring): CacheStats {
  return wiring.shared('cacheStats', () => new CacheStats(wiring.config.inLambda ? powertoolsMetrics() : undefined));
}

/** Replication observations; published as CloudWatch metrics (EMF lines) only inside Lambda. */
export function replicationStats(wiring: Wiring): ReplicationStats {
  // Locally the EMF lines would flood the console.
  return wiring.shared('stats', () => new ReplicationStats(wiring.config.inLambda ? powertoolsMetrics() : undefined));
}

/** Closes what an instance set opened (the L2 connection, the AWS clients): hosts, scripts and the bench. */
export async function closeConnections(wiring: Wiring): Promise<void> {
  const cache = wiring.built('cache');
  if (cache instanceof TwoLevelCache) await cache.settled();
  const l2 = wiring.built('l2');
  if (l2 instanceof RedisCache) await l2.close();
  destroyClients(wiring);
}
