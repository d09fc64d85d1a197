// Handler configuration, parsed once from the environment; a bad value fails fast naming the variable.
import { z } from 'zod';
import { initialRingState, type RingState } from './core/ring';
import { defaults, envVars, namesFor } from './topology';

const positiveInt = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

const configSchema = z.object({
  [envVars.stage]: z.string().default(defaults.stage),
  [envVars.shardCount]: positiveInt(defaults.shardCount),
  [envVars.replicationFactor]: positiveInt(defaults.replicationFactor),
  [envVars.vnodesPerShard]: positiveInt(defaults.vnodesPerShard),
  [envVars.blobBucket]: z.string().min(3).optional(),
  [envVars.dynamodbEndpoint]: z.url().optional(),
  [envVars.s3Endpoint]: z.url().optional(),
  [envVars.redisUrl]: z.string().optional(),
  AWS_REGION: z.string().default('us-east-1'),
});

export interface RingstoreConfig {
  stage: string;
  shardCount: number;
  replicationFactor: number;
  vnodesPerShard: number;
  controlTable: string;
  blobBucket: string;
  region: string;
  dynamodbEndpoint?: string;
  s3Endpoint?: string;
  redisUrl?: string;
}

/** The ring a new deployment starts with, from its configuration. */
export function initialRingOf(config: RingstoreConfig): RingState {
  return initialRingState({
    shardCount: config.shardCount,
    replicationFactor: config.replicationFactor,
    vnodesPerShard: config.vnodesPerShard,
    tableName: namesFor(config.stage).shardTable,
  });
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): RingstoreConfig {
  const parsed = configSchema.safeParse(env);
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
    blobBucket: values[envVars.blobBucket] ?? names.blobBucket,
    region: values.AWS_REGION,
    ...(values[envVars.dynamodbEndpoint] ? { dynamodbEndpoint: values[envVars.dynamodbEndpoint] } : {}),
    ...(values[envVars.s3Endpoint] ? { s3Endpoint: values[envVars.s3Endpoint] } : {}),
    ...(values[envVars.redisUrl] ? { redisUrl: values[envVars.redisUrl] } : {}),
  };
}
