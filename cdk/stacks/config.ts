// The deployment's knobs, read once from CDK context and checked before any construct is built.
// Defaults come from schemas/topology.ts so the deployed ring matches the local one.
import * as z from 'zod';
import { cacheDefaults, defaults, failoverDefaults, namesFor, quotaDefaults, watchDefaults } from '../../schemas/topology';
import { defaultNoncurrentBlobDays } from '../constructs/blob-bucket';
import { l2EvictionPolicies } from '../constructs/cache';
import { kmsKeyModes } from '../constructs/encryption-key';
import { authModes } from '../constructs/rest-api';

/**
 * Most shard tables one deployment may have. Every handler role names each shard table and its two
 * indexes by ARN (no wildcards). Past ~16 shards CDK moves the grants into an overflow managed
 * policy (6,144 characters), which cannot split a statement: at 32 shards the index statement
 * alone outgrows it and the deploy would fail. 24 fits with the longest stage and region names,
 * which test/cdk/iam.test.ts checks. Going further means name-prefix wildcards or chunked policies.
 */
export const shardCountMax = 24;

/** Upper bound on virtual nodes per shard: the ring is rebuilt in every cold start. */
export const vnodesPerShardMax = 1024;

/** A small Graviton node: the L2 holds hot values only (each entry has a TTL), not the data set. */
export const defaultCacheNodeType = 'cache.t4g.small';

/** ElastiCache node type names, e.g. `cache.t4g.small`, `cache.r7g.large`. */
const cacheNodeTypePattern = /^cache\.[a-z][a-z0-9-]*\.[a-z0-9]+$/;

/** AWS region names: `us-east-1`, `eu-central-2`, `us-gov-west-1`, `ap-southeast-7`. */
export const awsRegionPattern = /^[a-z]{2,4}(-[a-z]+)+-\d{1,2}$/;

/**
 * Context keys that existed once and no longer do. Set on the command line or in cdk.json they would be
 * silently ignored, so they are refused with the key that replaced them.
 */
export const retiredContextKeys: Record<string, string> = {
  cacheEvictionPolicy: 'replaced by l2EvictionPolicy (allkeys-lru | allkeys-lfu), now applied through a parameter group',
  cacheDataStorageGbMax: 'the L2 cache is a node-based replication group now: size it with cacheNodeType',
  cacheEcpuPerSecondMax: 'the L2 cache is a node-based replication group now: size it with cacheNodeType',
};

export const logLevels = ['DEBUG', 'INFO', 'WARN', 'ERROR'] as const;

// Context values given on the command line (`-c shardCount=8`) arrive as strings, those in cdk.json as
// numbers, so numbers are coerced.
const count = (max: number) => z.coerce.number().int().min(1).max(max);

export const deploymentContextSchema = z
  .object({
    /** Prefix of every physical name (`ringstore-<stage>-…`). */
    stage: z.string().default(defaults.stage),
    shardCount: count(shardCountMax).default(defaults.shardCount),
    replicationFactor: count(shardCountMax).default(defaults.replicationFactor),
    vnodesPerShard: count(vnodesPerShardMax).default(defaults.vnodesPerShard),
    /**
     * `maxmemory-policy` of the L2 cache, set in its parameter group: what Valkey evicts when the
     * cache's memory is full. The adapter gives every entry a TTL, so entries also expire on their own.
     */
    l2EvictionPolicy: z.enum(l2EvictionPolicies).default('allkeys-lru'),
    /** Node type of the L2 cache's two nodes (primary + replica in another AZ). */
    cacheNodeType: z
      .string()
      .regex(cacheNodeTypePattern, 'must be an ElastiCache node type such as cache.t4g.small')
      .default(defaultCacheNodeType),
    /** Eviction policy of each handler's in-memory L1 cache (lambdas/core/l1-cache.ts). */
    l1CachePolicy: z.enum(['lru', 'lfu', 'fifo']).default(cacheDefaults.l1Policy),
    /** Steady-state requests per second across the whole API stage (API Gateway token bucket). */
    apiRateLimitPerSecond: z.coerce.number().positive().max(10_000).default(500),
    /** Burst size of the same token bucket. */
    apiBurstLimit: z.coerce.number().int().min(1).max(5000).default(1000),
    /**
     * The request rate of a namespace without its own (docs/security.md, "Quotas"): a fifth of the stage's
     * by default, so that one busy tenant cannot take the whole stage; the admin API sets a namespace's own.
     */
    namespaceRateLimitPerSecond: z.coerce
      .number()
      .min(quotaDefaults.requestsPerSecondMin)
      .max(quotaDefaults.requestsPerSecondMax)
      .default(100),
    /** The burst of the same per-namespace bucket. */
    namespaceBurstLimit: z.coerce.number().int().min(1).max(quotaDefaults.burstMax).default(200),
    /** How long the change feed keeps a change (docs/watch.md): a watcher's cursor older than this gets 410. */
    watchRetentionSeconds: z.coerce
      .number()
      .int()
      .min(60)
      .max(30 * 86_400)
      .default(watchDefaults.retentionSeconds),
    logLevel: z.enum(logLevels).default('INFO'),
    /**
     * API Gateway's CloudWatch role is one setting per account and region (AWS::ApiGateway::Account).
     * Turn this off when another stack of the account already manages it.
     */
    manageApiGatewayAccountRole: z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')]).default(true),
    /**
     * Automatic failover (docs/failover.md): a request that cannot reach a shard's table, and the
     * maintenance probe while it stays down, start the shard's failover. Off: only an admin starts one.
     */
    autoFailover: z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')]).default(true),
    /** Probes in a row, none answered, that confirm a shard is down before its failover (one answer calls it off). */
    failoverConfirmProbes: z.coerce.number().int().min(1).max(20).default(failoverDefaults.confirmProbes),
    /** Milliseconds between those probes: the window a slow shard has to answer one. */
    failoverConfirmIntervalMs: z.coerce.number().int().min(0).max(60_000).default(failoverDefaults.confirmIntervalMs),
    /**
     * Days a replaced or deleted blob stays in the blob bucket as a noncurrent version, recoverable
     * (docs/security.md, "Recovering a blob"). Shorter than PITR's 35 days, a table restored further back
     * may point at blobs that are gone.
     */
    blobNoncurrentVersionDays: z.coerce.number().int().min(1).max(3650).default(defaultNoncurrentBlobDays),
    /**
     * `aws` (default): tables, bucket, queues and logs are encrypted with AWS-managed keys. `customer`: with
     * one customer-managed KMS key per region (rotated yearly), whose policy lets only Ringstore's roles use
     * it (docs/security.md, "Encryption").
     */
    kmsKey: z.enum(kmsKeyModes).default('aws'),
    /**
     * How callers authenticate (docs/security.md, "IAM authentication"): `apiKey` (default) the Lambda
     * authorizer and Ringstore's API keys; `iam` SigV4 (API Gateway `AWS_IAM`), callers mapped to namespaces
     * by the admin API; `both` the API-key API and a second REST API, the same routes with `AWS_IAM`.
     */
    auth: z.enum(authModes).default('apiKey'),
    /**
     * Cross-region disaster recovery (docs/dr.md, "Deploying two regions with CDK"): the region of the
     * backup. Set, the app also deploys the stage's backup stacks there and makes this deployment its
     * primary; unset, no DR (the templates are those of a single region).
     */
    drBackupRegion: z.string().regex(awsRegionPattern, 'must be an AWS region name such as eu-west-1').optional(),
  })
  .superRefine((config, ctx) => {
    try {
      namesFor(config.stage);
    } catch (error) {
      ctx.addIssue({ code: 'custom', path: ['stage'], message: (error as Error).message });
    }
    if (config.replicationFactor > config.shardCount) {
      ctx.addIssue({
        code: 'custom',
        path: ['replicationFactor'],
        message: `replicationFactor (${config.replicationFactor}) cannot exceed shardCount (${config.shardCount}): replicas live on distinct shards`,
      });
    }
  });

export type DeploymentConfig = z.output<typeof deploymentContextSchema>;
export type RingstoreConfigInput = z.input<typeof deploymentContextSchema>;

/** Context keys the app reads; `cdk synth -c <key>=<value>` overrides each. */
export const contextKeys = Object.keys(deploymentContextSchema.shape) as (keyof RingstoreConfigInput)[];

/** What is known of where the (primary) deployment goes, beyond the context. */
export interface DeploymentTarget {
  /** The primary's region, when known (an explicit stack environment, or the CLI's CDK_DEFAULT_REGION). */
  region?: string | undefined;
}

/** Problems of the configuration that only the deployment's target reveals. */
function targetProblems(config: DeploymentConfig, target: DeploymentTarget): string[] {
  if (config.drBackupRegion !== undefined && config.drBackupRegion === target.region) {
    return [
      `  -c drBackupRegion: ${config.drBackupRegion} is the primary's region too; the backup must be another region (a disaster takes a whole region)`,
    ];
  }
  return [];
}

/**
 * Parses the configuration; fails fast with a message naming each bad context key. `target.region`, when
 * known, is the primary's region, which the DR backup's must differ from.
 *
 * @example
 * const config = parseConfig({ stage: 'dev', shardCount: '8', drBackupRegion: 'eu-west-1' }, { region: 'eu-central-1' });
 */
export function parseConfig(raw: Record<string, unknown>, target: DeploymentTarget = {}): DeploymentConfig {
  const retired = Object.keys(raw)
    .filter((key) => Object.hasOwn(retiredContextKeys, key))
    .map((key) => `  -c ${key}: no longer read; ${retiredContextKeys[key]}`);
  const result = deploymentContextSchema.safeParse(raw);
  const problems = [
    ...retired,
    ...(result.success ? targetProblems(result.data, target) : []),
    ...(result.success ? [] : result.error.issues.map((issue) => `  -c ${issue.path.join('.') || '?'}: ${issue.message}`)),
  ];
  if (problems.length > 0 || !result.success) throw new Error(`invalid Ringstore CDK context:\n${problems.join('\n')}`);
  return result.data;
}

/**
 * Refuses a configuration the deployment's target contradicts (a DR backup in the primary's own region),
 * for callers that learn the target after parsing (addRingstore with an explicit environment).
 *
 * @example
 * assertDeploymentTarget(config, { region: 'eu-central-1' });
 */
export function assertDeploymentTarget(config: DeploymentConfig, target: DeploymentTarget): void {
  const problems = targetProblems(config, target);
  if (problems.length > 0) throw new Error(`invalid Ringstore CDK context:\n${problems.join('\n')}`);
}

/** Reads every known context key, and every retired one (to refuse it), from a construct tree (cdk.json, `-c` flags). */
export function readContext(tryGetContext: (key: string) => unknown): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  for (const key of [...contextKeys, ...Object.keys(retiredContextKeys)]) {
    const value = tryGetContext(key);
    if (value !== undefined) raw[key] = value;
  }
  return raw;
}
