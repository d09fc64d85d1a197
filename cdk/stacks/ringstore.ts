// Composes one Ringstore deployment (data + API stacks) into an app; shared by cdk/app.ts and the tests.
import { Tags, type App, type Environment } from 'aws-cdk-lib';
import { namesFor } from '../../schemas/topology';
import { ApiStack } from './api-stack';
import type { DeploymentConfig } from './config';
import { DataStack } from './data-stack';

export interface Ringstore {
  data: DataStack;
  api: ApiStack;
}

/**
 * Adds the stacks of one stage to `app`: `ringstore-<stage>-data` and `ringstore-<stage>-api`.
 *
 * @example
 * const app = new App();
 * addRingstore(app, parseConfig({ stage: 'dev' }));
 */
export function addRingstore(app: App, config: DeploymentConfig, env?: Environment): Ringstore {
  const { prefix } = namesFor(config.stage);
  const data = new DataStack(app, `${prefix}-data`, {
    stackName: `${prefix}-data`,
    description: `Ringstore ${config.stage}: shard tables, control, hints and transaction tables, blob bucket`,
    ...(env ? { env } : {}),
    stage: config.stage,
    shardCount: config.shardCount,
  });
  const api = new ApiStack(app, `${prefix}-api`, {
    stackName: `${prefix}-api`,
    description: `Ringstore ${config.stage}: REST API, Lambda handlers, transaction state machine, cache, VPC`,
    ...(env ? { env } : {}),
    config,
    shardStreamArns: data.shardStreamArns,
    txnStreamArn: data.txnStreamArn,
  });
  // The API stack addresses the data by topology names (stream ARNs by weak reference, no exports):
  // deploy data first.
  api.addStackDependency(data, "handlers read and write the data stack's tables and bucket");
  for (const stack of [data, api]) {
    Tags.of(stack).add('project', 'ringstore');
    Tags.of(stack).add('ringstore:stage', config.stage);
  }
  return { data, api };
}
