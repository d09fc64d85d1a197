// The request path of a deployment: VPC, L2 cache, one Lambda per topology handler, the REST API, the
// transaction state machine, and what invokes the background handlers (shard stream subscriptions, schedules).
import { CfnOutput, CustomResource, Stack, type StackProps } from 'aws-cdk-lib';
import { InterfaceVpcEndpointAwsService } from 'aws-cdk-lib/aws-ec2';
import { AnyPrincipal, Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import {
  envVars,
  handlers,
  namesFor,
  replicationDefaults,
  routes,
  stateMachines,
  type HandlerName,
  type RegionHandlerName,
  type Names,
} from '../../schemas/topology';
import { failoverStartActions, startsFailovers, transactionStartActions } from '../constructs/access';
import { Cache } from '../constructs/cache';
import { FailoverAlarms } from '../constructs/failover-alarms';
import { dataRefs } from '../constructs/data-refs';
import { HandlerFunction } from '../constructs/handler-function';
import { Network } from '../constructs/network';
import { RingstoreRestApi } from '../constructs/rest-api';
import { Every } from '../constructs/schedule';
import { ShardStreams } from '../constructs/shard-streams';
import { WorkflowStateMachine } from '../constructs/transaction-state-machine';
import type { DeploymentConfig } from './config';

export interface ApiStackProps extends StackProps {
  config: DeploymentConfig;
  /** Stream ARN of each shard table, in shard order (DataStack.shardStreamArns). */
  shardStreamArns: readonly string[];
  /** Stream ARN of the transaction table (DataStack.txnStreamArn). */
  txnStreamArn: string;
}

/**
 * The handlers this stack deploys, in topology order: every region's. The DR handlers (docs/dr.md) run
 * only in a region with their DR role, which the local cloud runs; their stacks are not in the CDK app yet.
 */
export const handlerNames = (Object.keys(handlers) as HandlerName[]).filter(
  (name): name is RegionHandlerName => handlers[name].drRole === undefined,
);

function mapHandlers<T>(fn: (name: RegionHandlerName) => T): Record<RegionHandlerName, T> {
  const out = {} as Record<RegionHandlerName, T>;
  for (const name of handlerNames) out[name] = fn(name);
  return out;
}

export class ApiStack extends Stack {
  readonly names: Names;
  readonly network: Network;
  readonly cache: Cache;
  readonly functions: Record<RegionHandlerName, HandlerFunction>;
  readonly restApi: RingstoreRestApi;
  /** The coordinator of POST /v1/txn (Express, run synchronously by the handlers that start transactions). */
  readonly transactions: WorkflowStateMachine;
  readonly failovers: WorkflowStateMachine;
  /** Alarms when a failover starts and when one fails, on the deployment's alarm topic. */
  readonly failoverAlarms: FailoverAlarms;
  /** Stream subscriptions of each handler whose spec says `shardStreams`. */
  readonly shardStreams: Partial<Record<RegionHandlerName, ShardStreams>> = {};
  /** Schedules of each handler whose spec says `everyMinutes`. */
  readonly schedules: Partial<Record<RegionHandlerName, Every>> = {};

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, props);
    const { config } = props;
    this.names = namesFor(config.stage, this.account);
    const data = dataRefs(this, this.names, config.shardCount, { shards: props.shardStreamArns, txn: props.txnStreamArn });

    this.network = new Network(this, 'Network');
    this.cache = new Cache(this, 'Cache', {
      names: this.names,
      vpc: this.network.vpc,
      subnets: this.network.privateSubnets,
      clientSecurityGroup: this.network.lambdaSecurityGroup,
      evictionPolicy: config.l2EvictionPolicy,
      nodeType: config.cacheNodeType,
    });

    // What lambdas/config.ts parses; the endpoint overrides are for the local cloud only, and
    // envVars.faultInjection is never set here (production bundles refuse it anyway).
    const environment: Record<string, string> = {
      [envVars.stage]: config.stage,
      [envVars.shardCount]: String(config.shardCount),
      [envVars.replicationFactor]: String(config.replicationFactor),
      [envVars.vnodesPerShard]: String(config.vnodesPerShard),
      [envVars.blobBucket]: data.blobBucket.name,
      [envVars.redisUrl]: this.cache.url,
      [envVars.l1Policy]: config.l1CachePolicy,
      [envVars.autoFailover]: config.autoFailover ? '1' : '0',
      [envVars.failoverConfirmProbes]: String(config.failoverConfirmProbes),
      [envVars.failoverConfirmIntervalMs]: String(config.failoverConfirmIntervalMs),
    };

    const functions = mapHandlers(
      (name) =>
        new HandlerFunction(this, `Handler-${name}`, {
          handlerName: name,
          spec: handlers[name],
          names: this.names,
          data,
          vpc: this.network.vpc,
          subnets: this.network.privateSubnets,
          securityGroup: this.network.lambdaSecurityGroup,
          environment,
          logLevel: config.logLevel,
        }),
    );
    this.functions = functions;

    // The one Lambda each state machine invokes is the one handler whose spec says it is a task of it.
    for (const [machine, spec] of Object.entries(stateMachines)) {
      // A DR workflow runs in a region of its role (the local cloud's backup); its stack is not in the CDK app yet.
      if ('drRole' in spec) continue;
      const { taskHandler } = spec;
      const tasks = handlerNames.filter((name) => handlers[name].stateMachineTask === machine);
      if (tasks.length !== 1 || tasks[0] !== taskHandler) {
        throw new Error(
          `stateMachines.${machine}.taskHandler is ${taskHandler}, but the handlers marked its task are [${tasks.join(', ')}]`,
        );
      }
    }
    this.transactions = new WorkflowStateMachine(this, 'Transactions', {
      names: this.names,
      machine: 'transaction',
      task: functions[stateMachines.transaction.taskHandler].function,
    });
    this.failovers = new WorkflowStateMachine(this, 'Failovers', {
      names: this.names,
      machine: 'failover',
      task: functions[stateMachines.failover.taskHandler].function,
    });
    const workflows = {
      transactionStateMachineArn: this.transactions.stateMachine.stateMachineArn,
      failoverStateMachineArn: this.failovers.stateMachine.stateMachineArn,
      autoFailover: config.autoFailover,
    };
    for (const name of handlerNames) functions[name].useWorkflows(workflows);
    this.failoverAlarms = new FailoverAlarms(this, 'FailoverAlarms', { names: this.names, failovers: this.failovers.stateMachine });
    // StartSyncExecution is served by sync-states.<region>.amazonaws.com, which the isolated subnets reach
    // only through an endpoint; it carries nothing but that call on this state machine.
    if (handlerNames.some((name) => handlers[name].startsTransactions)) {
      const syncStates = this.network.addInterfaceEndpoint('SyncStates', InterfaceVpcEndpointAwsService.STEP_FUNCTIONS_SYNC);
      syncStates.addToPolicy(
        new PolicyStatement({
          effect: Effect.ALLOW,
          principals: [new AnyPrincipal()],
          actions: [...transactionStartActions],
          resources: [workflows.transactionStateMachineArn],
        }),
      );
    }

    // StartExecution (a failover) is served by states.<region>.amazonaws.com: its own endpoint, carrying
    // nothing but that call on the failover state machine.
    if (handlerNames.some((name) => startsFailovers(handlers[name], workflows))) {
      const states = this.network.addInterfaceEndpoint('States', InterfaceVpcEndpointAwsService.STEP_FUNCTIONS);
      states.addToPolicy(
        new PolicyStatement({
          effect: Effect.ALLOW,
          principals: [new AnyPrincipal()],
          actions: [...failoverStartActions],
          resources: [workflows.failoverStateMachineArn],
        }),
      );
    }

    for (const name of handlerNames) {
      const spec = handlers[name];
      if (spec.shardStreams) {
        this.shardStreams[name] = new ShardStreams(this, `Streams-${name}`, {
          target: functions[name].function,
          streamArns: props.shardStreamArns,
          batchSize: replicationDefaults.streamBatchSize,
        });
      }
      if (spec.txnStream) {
        this.shardStreams[name] = new ShardStreams(this, `Streams-${name}`, {
          target: functions[name].function,
          streamArns: [props.txnStreamArn],
          batchSize: replicationDefaults.streamBatchSize,
        });
      }
      if (spec.everyMinutes !== undefined) {
        this.schedules[name] = new Every(this, `Schedule-${name}`, {
          target: functions[name].function,
          everyMinutes: spec.everyMinutes,
          description: `${this.names.functionName(name)}: ${spec.description}`,
        });
      }
    }

    // The initial ring, written once by the bootstrap handler (conditional put: never overwrites a ring).
    new CustomResource(this, 'RingBootstrap', {
      serviceToken: functions.bootstrap.function.functionArn,
      resourceType: 'Custom::RingstoreRing',
      properties: {
        shardCount: config.shardCount,
        replicationFactor: config.replicationFactor,
        vnodesPerShard: config.vnodesPerShard,
      },
    });

    this.restApi = new RingstoreRestApi(this, 'RestApi', {
      names: this.names,
      routes,
      functions: mapHandlers((name) => functions[name].function),
      authorizer: 'authorizer',
      rateLimitPerSecond: config.apiRateLimitPerSecond,
      burstLimit: config.apiBurstLimit,
      manageAccountRole: config.manageApiGatewayAccountRole,
    });

    new CfnOutput(this, 'ApiUrl', { description: 'Base URL of the Ringstore REST API', value: this.restApi.api.url });
    new CfnOutput(this, 'TransactionStateMachineArn', { value: workflows.transactionStateMachineArn });
    new CfnOutput(this, 'FailoverStateMachineArn', { value: this.failovers.stateMachine.stateMachineArn });
    new CfnOutput(this, 'AlarmTopicArn', {
      description: 'SNS topic of the deployment alarms (failover started, failover failed): subscribe to it',
      value: this.failoverAlarms.topic.topicArn,
    });
    new CfnOutput(this, 'TransactionLogGroup', {
      description: 'Execution events of the transaction state machine (no input or output data)',
      value: this.transactions.logGroup.logGroupName,
    });
    new CfnOutput(this, 'CacheEndpoint', { value: this.cache.url });
    new CfnOutput(this, 'CacheEvictionPolicy', {
      description: 'maxmemory-policy of the L2 cache (its parameter group)',
      value: config.l2EvictionPolicy,
    });
    for (const [name, streams] of Object.entries(this.shardStreams)) {
      new CfnOutput(this, `StreamFailureQueue${name}`, {
        description: `Stream batches ${name} gave up on (anti-entropy repairs what they missed)`,
        value: streams.failures.queueUrl,
      });
    }
  }
}
