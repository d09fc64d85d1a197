// Composes one Ringstore deployment (data + API stacks, and with a DR backup region the same two there) into
// an app; shared by cdk/app.ts and the tests.
import { Tags, type App, type Environment } from 'aws-cdk-lib';
import { namesFor } from '../../schemas/topology';
import { ApiStack } from './api-stack';
import { assertDeploymentTarget, type DeploymentConfig } from './config';
import { DataStack } from './data-stack';

export interface Ringstore {
  data: DataStack;
  api: ApiStack;
  /** The DR backup region's stacks (CDK context `drBackupRegion`, docs/dr.md); undefined without DR. */
  backup?: { data: DataStack; api: ApiStack };
}

/**
 * Adds the stacks of one stage to `app`: `ringstore-<stage>-data` and `ringstore-<stage>-api`; with
 * `drBackupRegion`, also `ringstore-<stage>-backup-data` and `ringstore-<stage>-backup-api` in that region
 * (the first two are then the DR primary). `env`, when given, places the primary.
 *
 * @example
 * const app = new App();
 * addRingstore(app, parseConfig({ stage: 'dev', drBackupRegion: 'eu-west-1' }));
 */
export function addRingstore(app: App, config: DeploymentConfig, env?: Environment): Ringstore {
  assertDeploymentTarget(config, { region: env?.region });
  const { prefix } = namesFor(config.stage);
  const data = new DataStack(app, `${prefix}-data`, {
    stackName: `${prefix}-data`,
    description: `Ringstore ${config.stage}: shard tables, control, hints and transaction tables, blob bucket`,
    ...(env ? { env } : {}),
    stage: config.stage,
    shardCount: config.shardCount,
    blobNoncurrentVersionDays: config.blobNoncurrentVersionDays,
    kmsKey: config.kmsKey,
  });
  const api = new ApiStack(app, `${prefix}-api`, {
    stackName: `${prefix}-api`,
    description: `Ringstore ${config.stage}: REST API, Lambda handlers, transaction state machine, cache, VPC`,
    ...(env ? { env } : {}),
    config,
    shardStreamArns: data.shardStreamArns,
    txnStreamArn: data.txnStreamArn,
    ...(data.encryptionKey ? { encryptionKeyArn: data.encryptionKey.keyArn } : {}),
    ...(config.drBackupRegion ? { dr: { role: 'primary', backupRegion: config.drBackupRegion } as const } : {}),
  });
  // The API stack addresses the data by topology names (stream ARNs by weak reference, no exports):
  // deploy data first.
  api.addStackDependency(data, "handlers read and write the data stack's tables and bucket");
  const backup = config.drBackupRegion ? addBackup(app, config, config.drBackupRegion, env) : undefined;
  if (backup) {
    // The primary ships to the backup's queue and bucket and reads its DR state as its lease: the backup
    // exists first. Nothing is referenced across the regions (CloudFormation cannot): names, by convention.
    api.addStackDependency(backup.api, 'the primary ships to the backup region, which must be deployed (and its appliers running) first');
  }
  for (const stack of [data, api, ...(backup ? [backup.data, backup.api] : [])]) {
    Tags.of(stack).add('project', 'ringstore');
    Tags.of(stack).add('ringstore:stage', config.stage);
  }
  return { data, api, ...(backup ? { backup } : {}) };
}

/** The DR backup region's stacks: the same data and API, plus its pending table, key queue, appliers and promotion. */
function addBackup(app: App, config: DeploymentConfig, region: string, primary?: Environment): { data: DataStack; api: ApiStack } {
  const { prefix } = namesFor(config.stage);
  // Same account as the primary (the deterministic names assume it), the backup's own region.
  const env: Environment = { region, ...(primary?.account ? { account: primary.account } : {}) };
  const data = new DataStack(app, `${prefix}-backup-data`, {
    stackName: `${prefix}-backup-data`,
    description: `Ringstore ${config.stage}, DR backup in ${region}: shard tables, control, hints, transaction and pending tables, blob bucket, key queue`,
    env,
    stage: config.stage,
    shardCount: config.shardCount,
    blobNoncurrentVersionDays: config.blobNoncurrentVersionDays,
    kmsKey: config.kmsKey,
    drRole: 'backup',
  });
  const api = new ApiStack(app, `${prefix}-backup-api`, {
    stackName: `${prefix}-backup-api`,
    description: `Ringstore ${config.stage}, DR backup in ${region}: read API, Lambda handlers, DR appliers and promotion, cache, VPC`,
    env,
    config,
    shardStreamArns: data.shardStreamArns,
    txnStreamArn: data.txnStreamArn,
    ...(data.encryptionKey ? { encryptionKeyArn: data.encryptionKey.keyArn } : {}),
    dr: { role: 'backup' },
  });
  api.addStackDependency(data, "handlers read and write the data stack's tables, bucket and key queue");
  return { data, api };
}
