// Builds a handler's dependencies once per Lambda instance (module scope), from the parsed config.
import { randomBytes, randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Logger } from '@aws-lambda-powertools/logger';
import { CachedShardHealth } from './adapters/cached-shard-health';
import { CachedRingSource, DynamoControlStore } from './adapters/dynamodb-control-store';
import { DynamoHintStore } from './adapters/dynamodb-hint-store';
import { DynamoShardStore } from './adapters/dynamodb-shard-store';
import { DynamoTxnRecordStore } from './adapters/dynamodb-txn-store';
import { SfnOrchestrator } from './adapters/sfn-orchestrator';
import { FaultController, FaultyShardStore } from './adapters/fault-injection';
import { powertoolsMetrics, ReplicationStats } from './adapters/replication-metrics';
import { RedisCache } from './adapters/redis-cache';
import { S3BlobStore } from './adapters/s3-blob-store';
import { L1Cache } from './core/l1-cache';
import { TwoLevelCache } from './core/two-level-cache';
import { ApiKeyService } from './core/auth';
import { KvService } from './core/kv';
import { MaintenanceService } from './core/maintenance';
import { NamespaceSettingsService } from './core/namespaces';
import { ReplicationService } from './core/replication';
import { type Orchestrator, TransactionService } from './core/transactions';
import { loadConfig, type RingstoreConfig } from './config';
import type { Clock, IdSource, ShardStore } from './ports';
import { limits, replicationDefaults, txnLimits } from '../schemas/topology';

export const systemClock: Clock = { nowMs: () => Date.now() };

export const randomIds: IdSource = {
  newId: () => randomUUID(),
  newSecret: () => randomBytes(32).toString('base64url'),
};

/** Client options shared by every AWS client; endpoints are overridden only for local engines. */
function clientOptions(config: RingstoreConfig, endpoint: string | undefined) {
  return { region: config.region, ...(endpoint ? { endpoint } : {}), maxAttempts: 3 };
}

export function buildRuntime(config: RingstoreConfig = loadConfig()) {
  const logger = new Logger({ serviceName: 'ringstore' });
  const dynamodb = DynamoDBDocumentClient.from(new DynamoDBClient(clientOptions(config, config.dynamodbEndpoint)), {
    marshallOptions: { removeUndefinedValues: true },
  });
  const s3 = new S3Client({
    ...clientOptions(config, config.s3Endpoint),
    // Local S3 engines address buckets by path; AWS accepts both.
    forcePathStyle: Boolean(config.s3Endpoint),
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const control = new DynamoControlStore(dynamodb, config.controlTable);
  const ring = new CachedRingSource(control, systemClock);
  // L1 is off when sized to zero; L2 is off without a Redis URL (the local cloud without redis-server).
  const l2 = config.redisUrl ? new RedisCache(config.redisUrl) : undefined;
  const { cache: c } = config;
  const l1 =
    c.l1EntriesMax > 0 && c.l1BytesMax > 0
      ? new L1Cache({ policy: c.l1Policy, entriesMax: c.l1EntriesMax, bytesMax: c.l1BytesMax, ttlMs: c.l1TtlMs, clock: systemClock })
      : undefined;
  const cache = l1 || l2 ? new TwoLevelCache(l1, l2, c.l2TtlSeconds * 1000) : undefined;
  // Fault injection wraps the real shard store; it exists only in test runs (config refuses it in a production bundle).
  const faults = config.faultInjection ? new FaultController() : undefined;
  const realShards = new DynamoShardStore(dynamodb);
  const shards: ShardStore = faults ? new FaultyShardStore(realShards, faults) : realShards;
  const hints = new DynamoHintStore(dynamodb, config.hintsTable);
  const health = new CachedShardHealth(control, systemClock, replicationDefaults.healthRefreshMs);
  // EMF metric lines only inside Lambda; locally they would flood the console.
  const stats = new ReplicationStats(process.env.AWS_LAMBDA_FUNCTION_NAME ? powertoolsMetrics() : undefined);
  const injected = faults ? { faults } : {};
  const replication = new ReplicationService({ shards, hints, health, clock: systemClock, metrics: stats, ...injected });
  const txns = new TransactionService({
    shards, records: new DynamoTxnRecordStore(dynamodb, config.txnTable), ring, clock: systemClock, ids: randomIds, replication,
    limits: { ...limits, ...txnLimits }, ...(cache ? { cache } : {}), ...injected,
  });
  const kv = new KvService({
    intents: txns.intents,
    cache,
    shards,
    blobs: new S3BlobStore(s3, config.blobBucket),
    ring,
    clock: systemClock,
    ids: randomIds,
    limits,
    replication,
    health,
    ...injected,
  });
  const maintenance = new MaintenanceService({
    shards, hints, health, state: control, clock: systemClock, limits: replicationDefaults, ...injected,
  });
  const apiKeys = new ApiKeyService({ keys: control, ids: randomIds, clock: systemClock });
  const namespaces = new NamespaceSettingsService(control);
  // In AWS the state machine runs in Step Functions; the local cloud installs its in-process runner.
  const orchestrator: { current?: Orchestrator } = config.txnStateMachineArn
    ? { current: new SfnOrchestrator(new SFNClient(clientOptions(config, undefined)), config.txnStateMachineArn) }
    : {};
  return {
    config, logger, dynamodb, s3, control, ring, kv, apiKeys, namespaces, l2, replication, maintenance, health, hints, stats, faults,
    txns, orchestrator,
  };
}

export type Runtime = ReturnType<typeof buildRuntime>;

let shared: Runtime | undefined;

/** The instance's runtime, built on first use and shared by every handler module in the process. */
export function runtime(): Runtime {
  shared ??= buildRuntime();
  return shared;
}
