// The deployment's knobs, read once from CDK context and checked before any construct is built.
// Defaults come from lambdas/topology.ts so the deployed ring matches the local one.
import { z } from 'zod';
import { cacheDefaults, defaults, namesFor } from '../../lambdas/topology';

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

/** Redis/Valkey `maxmemory-policy` values. */
export const evictionPolicies = [
  'allkeys-lru', 'allkeys-lfu', 'allkeys-random', 'volatile-lru', 'volatile-lfu', 'volatile-random', 'volatile-ttl', 'noeviction',
] as const;

export const logLevels = ['DEBUG', 'INFO', 'WARN', 'ERROR'] as const;

// Context values given on the command line (`-c shardCount=8`) arrive as strings, those in cdk.json as
// numbers, so numbers are coerced.
const count = (max: number) => z.coerce.number().int().min(1).max(max);

export const configSchema = z
  .object({
    /** Prefix of every physical name (`ringstore-<stage>-…`). */
    stage: z.string().default(defaults.stage),
    shardCount: count(shardCountMax).default(defaults.shardCount),
    replicationFactor: count(shardCountMax).default(defaults.replicationFactor),
    vnodesPerShard: count(vnodesPerShardMax).default(defaults.vnodesPerShard),
    /**
     * Placeholder for the L2 cache's eviction policy. ElastiCache Serverless takes no parameter group,
     * so today it is only recorded (tag + output); it applies once the cache moves to a node-based
     * cluster. The adapter sets a TTL on every cache entry, which makes the two LRU policies agree.
     */
    cacheEvictionPolicy: z.enum(evictionPolicies).default('allkeys-lru'),
    /** Eviction policy of each handler's in-memory L1 cache (lambdas/core/l1-cache.ts). */
    l1CachePolicy: z.enum(['lru', 'lfu', 'fifo']).default(cacheDefaults.l1Policy),
    /** Hard ceilings on the serverless cache, so a runaway client cannot run up the bill. */
    cacheDataStorageGbMax: count(5000).default(10),
    cacheEcpuPerSecondMax: z.coerce.number().int().min(1000).max(15_000_000).default(5000),
    /** Steady-state requests per second across the whole API stage (API Gateway token bucket). */
    apiRateLimitPerSecond: z.coerce.number().positive().max(10_000).default(500),
    /** Burst size of the same token bucket. */
    apiBurstLimit: z.coerce.number().int().min(1).max(5000).default(1000),
    logLevel: z.enum(logLevels).default('INFO'),
    /**
     * API Gateway's CloudWatch role is one setting per account and region (AWS::ApiGateway::Account).
     * Turn this off when another stack of the account already manages it.
     */
    manageApiGatewayAccountRole: z
      .union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')])
      .default(true),
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

export type RingstoreConfig = z.output<typeof configSchema>;
export type RingstoreConfigInput = z.input<typeof configSchema>;

/** Context keys the app reads; `cdk synth -c <key>=<value>` overrides each. */
export const contextKeys = Object.keys(configSchema.shape) as (keyof RingstoreConfigInput)[];

/**
 * Parses the configuration; fails fast with a message naming each bad context key.
 *
 * @example
 * const config = parseConfig({ stage: 'dev', shardCount: '8' });
 */
export function parseConfig(raw: Record<string, unknown>): RingstoreConfig {
  const result = configSchema.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `  -c ${issue.path.join('.') || '?'}: ${issue.message}`);
    throw new Error(`invalid Ringstore CDK context:\n${problems.join('\n')}`);
  }
  return result.data;
}

/** Reads every known context key from a construct tree (cdk.json, `-c` flags). */
export function readContext(tryGetContext: (key: string) => unknown): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  for (const key of contextKeys) {
    const value = tryGetContext(key);
    if (value !== undefined) raw[key] = value;
  }
  return raw;
}
