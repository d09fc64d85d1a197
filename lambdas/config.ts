// Handler configuration, parsed once from the environment; a bad value fails fast naming the variable.
import * as z from 'zod';
import { initialRingState } from './core/ring';
import { ringLeaseMs, ringRefreshMs } from './core/ring-source';
import { type RingState } from './ports';
import {
  cacheDefaults,
  defaults,
  drDefaults,
  envVars,
  failoverDefaults,
  limits,
  namesFor,
  quotaDefaults,
  watchDefaults,
} from '../schemas/topology';
import type { WatchLimits } from './core/watch';

const positiveInt = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

const runtimeEnvSchema = z
  .object({
    [envVars.stage]: z.string().default(defaults.stage),
    [envVars.shardCount]: positiveInt(defaults.shardCount),
    [envVars.replicationFactor]: positiveInt(defaults.replicationFactor),
    [envVars.vnodesPerShard]: positiveInt(defaults.vnodesPerShard),
    [envVars.blobBucket]: z.string().min(3).optional(),
    [envVars.dynamodbEndpoint]: z.url().optional(),
    [envVars.s3Endpoint]: z.url().optional(),
    [envVars.redisUrl]: z.string().optional(),
    [envVars.redisUser]: z.string().min(1).optional(),
    [envVars.redisPassword]: z.string().min(1).optional(),
    [envVars.redisIamCache]: z.string().min(1).optional(),
    [envVars.l1Policy]: z.enum(['lru', 'lfu', 'fifo']).default(cacheDefaults.l1Policy),
    [envVars.l1EntriesMax]: z.coerce.number().int().min(0).default(cacheDefaults.l1EntriesMax),
    [envVars.l1BytesMax]: z.coerce.number().int().min(0).default(cacheDefaults.l1BytesMax),
    [envVars.l1TtlMs]: z.coerce.number().int().min(0).max(60_000).default(cacheDefaults.l1TtlMs),
    [envVars.l2TtlSeconds]: z.coerce.number().int().min(1).max(86_400).default(cacheDefaults.l2TtlSeconds),
    [envVars.faultInjection]: z.enum(['0', '1', 'true', 'false']).optional(),
    [envVars.autoFailover]: z.enum(['0', '1']).default('1'),
    [envVars.ringRefreshMs]: z.coerce.number().int().min(ringLeaseMs).max(60_000).default(ringRefreshMs),
    [envVars.failoverConfirmProbes]: z.coerce.number().int().min(1).max(20).default(failoverDefaults.confirmProbes),
    [envVars.failoverConfirmIntervalMs]: z.coerce.number().int().min(0).max(60_000).default(failoverDefaults.confirmIntervalMs),
    [envVars.drRole]: z.enum(['none', 'primary', 'backup']).default('none'),
    [envVars.drKeyQueueUrl]: z.url().optional(),
    [envVars.drBucket]: z.string().min(3).optional(),
    [envVars.drRegion]: z.string().min(1).optional(),
    [envVars.drSqsEndpoint]: z.url().optional(),
    [envVars.drS3Endpoint]: z.url().optional(),
    [envVars.drDynamodbEndpoint]: z.url().optional(),
    [envVars.drShipOrder]: z.enum(['keyFirst', 'together']).default('keyFirst'),
    [envVars.drValueWaitMs]: z.coerce.number().int().min(0).max(3_600_000).default(drDefaults.valueWaitMs),
    [envVars.watchRetentionSeconds]: z.coerce
      .number()
      .int()
      .min(60)
      .max(30 * 86_400)
      .default(watchDefaults.retentionSeconds),
    // Above the skew it allows for: an append is stamped again only when it outlasts the difference.
    [envVars.watchSettleMs]: z.coerce
      .number()
      .int()
      .min(2 * watchDefaults.skewAllowanceMs)
      .max(10_000)
      .default(watchDefaults.settleMs),
    [envVars.watchPollMs]: z.coerce.number().int().min(50).max(5_000).default(watchDefaults.pollMs),
    [envVars.watchReadIntervalMinMs]: z.coerce.number().int().min(10).max(5_000).default(watchDefaults.readIntervalMinMs),
    [envVars.sqsEndpoint]: z.url().optional(),
    [envVars.txnStateMachineArn]: z.string().startsWith('arn:').optional(),
    [envVars.failoverStateMachineArn]: z.string().startsWith('arn:').optional(),
    [envVars.rebalanceStateMachineArn]: z.string().startsWith('arn:').optional(),
    [envVars.drPromotionStateMachineArn]: z.string().startsWith('arn:').optional(),
    [envVars.namespaceRatePerSecond]: z.coerce
      .number()
      .min(quotaDefaults.requestsPerSecondMin)
      .max(quotaDefaults.requestsPerSecondMax)
      .default(quotaDefaults.requestsPerSecond),
    [envVars.namespaceBurst]: z.coerce.number().int().min(1).max(quotaDefaults.burstMax).default(quotaDefaults.burst),
    [envVars.iamCacheTtlSeconds]: z.coerce.number().int().min(0).max(3_600).default(limits.authorizerCacheTtlSeconds),
    AWS_REGION: z.string().default('us-east-1'),
    AWS_LAMBDA_FUNCTION_NAME: z.string().optional(),
  })
  .refine((env) => env[envVars.watchReadIntervalMinMs] <= env[envVars.watchPollMs], {
    path: [envVars.watchReadIntervalMinMs],
    message: `must not exceed ${envVars.watchPollMs}: a waiting watcher reads at least once a poll interval`,
  });

/** This region's part in cross-region disaster recovery (docs/dr.md). */
export type DrConfig =
  | { role: 'none' }
  /** Sends every write's key message and value to the backup region. */
  | {
      role: 'primary';
      keyQueueUrl: string;
      bucket: string;
      region: string;
      /** The backup's control table, whose DR state is this region's lease to acknowledge writes. */
      controlTable: string;
      /** The backup's pending table, whose old write notices maintenance settles. */
      pendingTable: string;
      sqsEndpoint?: string;
      s3Endpoint?: string;
      dynamodbEndpoint?: string;
      /** `together` only for the benchmark's baseline (docs/dr.md). */
      shipOrder: 'keyFirst' | 'together';
    }
  /** Applies the primary's writes; reads check the pending table; writes are refused until promotion. */
  | {
      role: 'backup';
      pendingTable: string;
      keyQueueUrl?: string;
      valueWaitMs: number;
      /** The promotion state machine (AWS); locally the local cloud runs the same definition in process. */
      promotionStateMachineArn?: string;
    };

/**
 * The L2 cache's authentication (docs/security.md, "The L2 cache"): a password (the local cloud's
 * redis-server) or an IAM token signed for the ElastiCache replication group (AWS).
 */
export type RedisAuthConfig =
  { mode: 'password'; username: string; password: string } | { mode: 'iam'; username: string; cacheName: string };

export interface RuntimeConfig {
  stage: string;
  shardCount: number;
  replicationFactor: number;
  vnodesPerShard: number;
  controlTable: string;
  hintsTable: string;
  txnTable: string;
  /** The change feed's table and settings (docs/watch.md). */
  feedTable: string;
  watch: WatchLimits;
  /** The transaction state machine (AWS); locally the local cloud runs the same definition in process. */
  txnStateMachineArn?: string;
  /** The failover state machine (AWS); locally the local cloud runs the same definition in process. */
  failoverStateMachineArn?: string;
  /** The rebalance state machine (AWS); unset locally, where the local runner executes it. */
  rebalanceStateMachineArn?: string;
  blobBucket: string;
  /** Crash points and shard outages armed by tests (never in a production bundle). */
  faultInjection: boolean;
  /** A request that finds a shard unreachable, and the maintenance probe, start its failover (docs/failover.md). */
  autoFailover: boolean;
  /** How a failover confirms a shard is down: probes in a row, none answered, this far apart. */
  /** How long a cached ring is trusted for eventual reads and listings (envVars.ringRefreshMs). */
  ringRefreshMs: number;
  failoverConfirm: { probes: number; intervalMs: number };
  region: string;
  dr: DrConfig;
  /** This region's SQS endpoint (local engines): the backup's key queue. */
  sqsEndpoint?: string;
  /** Running inside AWS Lambda (metrics go out as EMF log lines only there). */
  inLambda: boolean;
  dynamodbEndpoint?: string;
  s3Endpoint?: string;
  redisUrl?: string;
  /** How connections to the L2 cache authenticate; absent: they do not (a redis-server without ACLs). */
  redisAuth?: RedisAuthConfig;
  /** The request rate and burst of a namespace without its own (docs/security.md, "Quotas"). */
  namespaceRateDefaults: { requestsPerSecond: number; burst: number };
  /** How long a handler keeps an IAM principal's mapping: a deleted mapping stops working after it. */
  iamCacheTtlSeconds: number;
  cache: {
    l1Policy: 'lru' | 'lfu' | 'fifo';
    l1EntriesMax: number;
    l1BytesMax: number;
    l1TtlMs: number;
    l2TtlSeconds: number;
  };
}

/** The ring a new deployment starts with, from its configuration. */
export function initialRingOf(config: RuntimeConfig): RingState {
  return initialRingState({
    shardCount: config.shardCount,
    replicationFactor: config.replicationFactor,
    vnodesPerShard: config.vnodesPerShard,
    tableName: (shardId) => namesFor(config.stage).shardTable(shardId),
  });
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): RuntimeConfig {
  const parsed = runtimeEnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    throw new Error(`invalid Ringstore configuration: ${problems}`);
  }
  const values = parsed.data;
  const names = namesFor(values[envVars.stage]);
  return {
    stage: values[envVars.stage],
    shardCount: values[envVars.shardCount],
    replicationFactor: values[envVars.replicationFactor],
    vnodesPerShard: values[envVars.vnodesPerShard],
    controlTable: names.controlTable,
    hintsTable: names.hintsTable,
    txnTable: names.txnTable,
    feedTable: names.feedTable,
    watch: {
      ...watchDefaults,
      retentionSeconds: values[envVars.watchRetentionSeconds],
      settleMs: values[envVars.watchSettleMs],
      pollMs: values[envVars.watchPollMs],
      readIntervalMinMs: values[envVars.watchReadIntervalMinMs],
    },
    ...(values[envVars.txnStateMachineArn] ? { txnStateMachineArn: values[envVars.txnStateMachineArn] } : {}),
    ...(values[envVars.failoverStateMachineArn] ? { failoverStateMachineArn: values[envVars.failoverStateMachineArn] } : {}),
    ...(values[envVars.rebalanceStateMachineArn] ? { rebalanceStateMachineArn: values[envVars.rebalanceStateMachineArn] } : {}),
    faultInjection: faultInjectionRequested(values[envVars.faultInjection]),
    autoFailover: values[envVars.autoFailover] === '1',
    ringRefreshMs: values[envVars.ringRefreshMs],
    failoverConfirm: { probes: values[envVars.failoverConfirmProbes], intervalMs: values[envVars.failoverConfirmIntervalMs] },
    blobBucket: values[envVars.blobBucket] ?? names.blobBucket,
    region: values.AWS_REGION,
    dr: drConfigOf(values, names),
    ...(values[envVars.sqsEndpoint] ? { sqsEndpoint: values[envVars.sqsEndpoint] } : {}),
    inLambda: values.AWS_LAMBDA_FUNCTION_NAME !== undefined,
    ...(values[envVars.dynamodbEndpoint] ? { dynamodbEndpoint: values[envVars.dynamodbEndpoint] } : {}),
    ...(values[envVars.s3Endpoint] ? { s3Endpoint: values[envVars.s3Endpoint] } : {}),
    ...(values[envVars.redisUrl] ? { redisUrl: values[envVars.redisUrl] } : {}),
    ...redisAuthOf(values),
    namespaceRateDefaults: { requestsPerSecond: values[envVars.namespaceRatePerSecond], burst: values[envVars.namespaceBurst] },
    iamCacheTtlSeconds: values[envVars.iamCacheTtlSeconds],
    cache: {
      l1Policy: values[envVars.l1Policy],
      l1EntriesMax: values[envVars.l1EntriesMax],
      l1BytesMax: values[envVars.l1BytesMax],
      l1TtlMs: values[envVars.l1TtlMs],
      l2TtlSeconds: values[envVars.l2TtlSeconds],
    },
  };
}

function redisAuthOf(values: z.infer<typeof runtimeEnvSchema>): { redisAuth?: RedisAuthConfig } {
  const username = values[envVars.redisUser];
  const password = values[envVars.redisPassword];
  const cacheName = values[envVars.redisIamCache];
  const problem = (message: string) => new Error(`invalid Ringstore configuration: ${message}`);
  if (username === undefined) {
    if (password === undefined && cacheName === undefined) return {};
    throw problem(`${envVars.redisUser} is required with ${password === undefined ? envVars.redisIamCache : envVars.redisPassword}`);
  }
  if (password !== undefined) {
    if (cacheName !== undefined)
      throw problem(`${envVars.redisPassword} and ${envVars.redisIamCache} are two ways to authenticate; set one`);
    return { redisAuth: { mode: 'password', username, password } };
  }
  if (cacheName !== undefined) return { redisAuth: { mode: 'iam', username, cacheName } };
  throw problem(`${envVars.redisUser} needs ${envVars.redisPassword} or ${envVars.redisIamCache}`);
}

function drConfigOf(values: z.infer<typeof runtimeEnvSchema>, names: ReturnType<typeof namesFor>): DrConfig {
  const role = values[envVars.drRole];
  if (role === 'backup') {
    const keyQueueUrl = values[envVars.drKeyQueueUrl];
    const promotionStateMachineArn = values[envVars.drPromotionStateMachineArn];
    return {
      role,
      pendingTable: names.pendingTable,
      valueWaitMs: values[envVars.drValueWaitMs],
      ...(keyQueueUrl ? { keyQueueUrl } : {}),
      ...(promotionStateMachineArn ? { promotionStateMachineArn } : {}),
    };
  }
  if (role === 'none') return { role };
  const keyQueueUrl = values[envVars.drKeyQueueUrl];
  const bucket = values[envVars.drBucket];
  const missing = [...(keyQueueUrl ? [] : [envVars.drKeyQueueUrl]), ...(bucket ? [] : [envVars.drBucket])];
  if (!keyQueueUrl || !bucket) {
    throw new Error(
      `invalid Ringstore configuration: ${envVars.drRole}=primary needs ${missing.join(' and ')} (the backup region's key queue and bucket)`,
    );
  }
  return {
    role,
    keyQueueUrl,
    bucket,
    region: values[envVars.drRegion] ?? values.AWS_REGION,
    // The backup stack is the same stage in another region: its tables have the same names.
    controlTable: names.controlTable,
    pendingTable: names.pendingTable,
    shipOrder: values[envVars.drShipOrder],
    ...(values[envVars.drDynamodbEndpoint] ? { dynamodbEndpoint: values[envVars.drDynamodbEndpoint] } : {}),
    ...(values[envVars.drSqsEndpoint] ? { sqsEndpoint: values[envVars.drSqsEndpoint] } : {}),
    ...(values[envVars.drS3Endpoint] ? { s3Endpoint: values[envVars.drS3Endpoint] } : {}),
  };
}

/**
 * Whether this process runs with fault injection. A production bundle (CDK defines
 * RINGSTORE_PRODUCTION_BUILD at bundle time, so no environment can change it) refuses to start with it.
 */
export function faultInjectionRequested(flag: string | undefined, productionBuild = process.env.RINGSTORE_PRODUCTION_BUILD): boolean {
  const requested = flag === '1' || flag === 'true';
  if (requested && productionBuild === 'true') {
    throw new Error('fault injection (RINGSTORE_FAULT_INJECTION) is refused in a production bundle: it exists for tests only');
  }
  return requested;
}
