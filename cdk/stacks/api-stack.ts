// The request path of a deployment: VPC, L2 cache, one Lambda per topology handler, the REST API, the
// transaction state machine, and what invokes the background handlers (shard stream subscriptions, schedules).
import { CfnOutput, CustomResource, NestedStack, Stack, type StackProps } from 'aws-cdk-lib';
import { InterfaceVpcEndpointAwsService, type InterfaceVpcEndpoint } from 'aws-cdk-lib/aws-ec2';
import { AnyPrincipal, Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { type IKey, Key } from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import {
  envVars,
  handlers,
  namesFor,
  replicationDefaults,
  routes,
  stateMachines,
  type DrHandlerName,
  type HandlerName,
  type RegionHandlerName,
  type Names,
} from '../../schemas/topology';
import {
  drKeyDepthActions,
  failoverStartActions,
  rebalanceStartActions,
  promotionStartActions,
  startsFailovers,
  startsPromotions,
  transactionStartActions,
  type WorkflowRefs,
} from '../constructs/access';
import { Cache } from '../constructs/cache';
import { FailoverAlarms } from '../constructs/failover-alarms';
import { dataRefs, type DataRefs, type DrDeployment } from '../constructs/data-refs';
import { DrAlarms } from '../constructs/dr-alarms';
import { backupNamesFor, DrBackupTriggers } from '../constructs/dr-backup';
import { HandlerFunction } from '../constructs/handler-function';
import { Network } from '../constructs/network';
import { Observability } from '../constructs/observability';
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
  /** ARN of the data stack's customer-managed key (`kmsKey=customer`), by weak reference; absent: AWS-managed keys. */
  encryptionKeyArn?: string;
  /**
   * This region's part in cross-region DR (docs/dr.md, "Deploying two regions with CDK"): a primary ships
   * to the backup in `backupRegion`; a backup runs the appliers and the promotion. Absent: no DR.
   */
  dr?: DrDeployment;
}

/** The handlers every region deploys, in topology order. */
export const handlerNames = (Object.keys(handlers) as HandlerName[]).filter(
  (name): name is RegionHandlerName => handlers[name].drRole === undefined,
);

/** The handlers a region deploys: every region's, and the DR handlers of its DR role (docs/dr.md). */
export function deployedHandlerNames(dr?: DrDeployment): HandlerName[] {
  return (Object.keys(handlers) as HandlerName[]).filter((name) => {
    const { drRole } = handlers[name];
    return drRole === undefined || drRole === dr?.role;
  });
}

/**
 * The DR part of one handler's environment (what lambdas/config.ts parses), as the local cloud gives it
 * (cdk/local/cloud.ts): in a primary, the handlers that use the link (`drLink`) learn the backup's key
 * queue, bucket and region; in a backup, the DR handlers and those that read through the pending table
 * learn their role, and those that read the key queue's depth its URL. Nothing without DR.
 */
export function drEnvironment(name: HandlerName, data: DataRefs): Record<string, string> {
  const spec = handlers[name];
  if (data.drLink && (spec.drLink === true || spec.drRole === 'primary')) {
    return {
      [envVars.drRole]: 'primary',
      [envVars.drKeyQueueUrl]: data.drLink.keyQueueUrl,
      [envVars.drBucket]: data.drLink.bucketName,
      [envVars.drRegion]: data.drLink.region,
    };
  }
  if (data.drBackup && (spec.drRole === 'backup' || (spec.pendingTable ?? 'none') !== 'none')) {
    return {
      [envVars.drRole]: 'backup',
      ...(spec.drKeyQueueDepth ? { [envVars.drKeyQueueUrl]: data.drBackup.keyQueue.url } : {}),
    };
  }
  return {};
}

/** An endpoint policy statement: these calls on these resources pass, by anyone the IAM policies allow. */
function endpointAllows(actions: string[], resources: string[]): PolicyStatement {
  return new PolicyStatement({ effect: Effect.ALLOW, principals: [new AnyPrincipal()], actions, resources });
}

/** The one deployed handler whose spec sets `flag` (a DR backup's key applier, value applier). */
function soleHandler(deployed: readonly HandlerName[], flag: 'drKeyQueue' | 'drValueEvents'): HandlerName {
  const found = deployed.filter((name) => handlers[name][flag] === true);
  if (found.length !== 1) throw new Error(`a DR backup needs exactly one handler with ${flag}, found [${found.join(', ')}]`);
  return found[0] as HandlerName;
}

function mapHandlers<T>(fn: (name: RegionHandlerName) => T): Record<RegionHandlerName, T> {
  const out = {} as Record<RegionHandlerName, T>;
  for (const name of handlerNames) out[name] = fn(name);
  return out;
}

export class ApiStack extends Stack {
  readonly names: Names;
  readonly network: Network;
  readonly cache: Cache;
  /** Every region's handlers, and the DR handlers of this region's DR role. */
  readonly functions: Record<RegionHandlerName, HandlerFunction> & Partial<Record<DrHandlerName, HandlerFunction>>;
  readonly restApi: RingstoreRestApi;
  /** With CDK context `auth=both`: the same routes under IAM authorization, a REST API of its own. */
  readonly iamRestApi?: RingstoreRestApi;
  /** The coordinator of POST /v1/txn (Express, run synchronously by the handlers that start transactions). */
  readonly transactions: WorkflowStateMachine;
  readonly failovers: WorkflowStateMachine;
  readonly rebalances: WorkflowStateMachine;
  /** Alarms when a failover starts and when one fails, on the deployment's alarm topic. */
  readonly failoverAlarms: FailoverAlarms;
  /** A DR backup's promotion workflow (Standard); undefined in any other region. */
  readonly promotions: WorkflowStateMachine | undefined;
  /** A DR backup's applier triggers (key queue, value events) and alarms; undefined in any other region. */
  readonly drBackupTriggers: DrBackupTriggers | undefined;
  readonly drAlarms: DrAlarms | undefined;
  /** The dashboard and the health alarms (errors, latency, lag, backlogs, throttling, cache), on the alarm topic. */
  readonly observability: Observability;
  /** Stream subscriptions of each handler whose spec says `shardStreams`. */
  readonly shardStreams: Partial<Record<HandlerName, ShardStreams>> = {};
  /** Schedules of each handler whose spec says `everyMinutes`. */
  readonly schedules: Partial<Record<HandlerName, Every>> = {};

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    // Unindented, the template of the largest ring (its 64 shard tables named in every function's policy) stays
    // well under CloudFormation's 1 MB; indented it came within 20 % of it.
    super(scope, id, { ...props, suppressTemplateIndentation: true });
    const { config, dr } = props;
    this.names = dr?.role === 'backup' ? backupNamesFor(config.stage, this.account, this.region) : namesFor(config.stage, this.account);
    const data = dataRefs(this, this.names, config.shardCount, { shards: props.shardStreamArns, txn: props.txnStreamArn }, dr);
    const deployed = deployedHandlerNames(dr);
    // The log groups and the stream failure queues of this stack are encrypted with it too (docs/security.md).
    const encryptionKey = props.encryptionKeyArn ? Key.fromKeyArn(this, 'EncryptionKey', props.encryptionKeyArn) : undefined;
    const encrypted = encryptionKey ? { encryptionKey } : {};

    this.network = new Network(this, 'Network', { egressToOtherRegions: dr?.role === 'primary', ...encrypted });
    this.cache = new Cache(this, 'Cache', {
      names: this.names,
      vpc: this.network.vpc,
      subnets: this.network.privateSubnets,
      clientSecurityGroup: this.network.lambdaSecurityGroup,
      evictionPolicy: config.l2EvictionPolicy,
      nodeType: config.cacheNodeType,
    });

    this.functions = this.addFunctions(props, data, deployed, encrypted);
    const { functions } = this;

    assertStateMachineTasks(deployed, dr);
    [this.transactions, this.failovers, this.rebalances, this.promotions] = this.addWorkflows(dr, encrypted);
    const workflows = {
      transactionStateMachineArn: this.transactions.stateMachine.stateMachineArn,
      failoverStateMachineArn: this.failovers.stateMachine.stateMachineArn,
      rebalanceStateMachineArn: this.rebalances.stateMachine.stateMachineArn,
      autoFailover: config.autoFailover,
      ...(this.promotions ? { promotionStateMachineArn: this.promotions.stateMachine.stateMachineArn } : {}),
    };
    for (const name of deployed) this.deployedFunction(name).useWorkflows(workflows);
    this.failoverAlarms = new FailoverAlarms(this, 'FailoverAlarms', { names: this.names, failovers: this.failovers.stateMachine });
    this.addEndpoints(data, deployed, workflows);

    this.addEventSources(props, deployed, encrypted);

    [this.drBackupTriggers, this.drAlarms] = this.addDrBackup(data, deployed);

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

    [this.restApi, this.iamRestApi] = this.addRestApis(config, encrypted);

    const routeHandlers = new Set<RegionHandlerName>(routes.map((route) => route.handler));
    this.observability = new Observability(this, 'Observability', {
      names: this.names,
      topic: this.failoverAlarms.topic,
      apiName: this.names.apiName,
      stageName: this.restApi.api.deploymentStage.stageName,
      routes,
      apiFunctions: handlerNames.filter((name) => routeHandlers.has(name) || name === 'authorizer').map((name) => functions[name].function),
      shardTableNames: data.shardTables.map((table) => table.name),
    });

    this.addOutputs(config, workflows);
  }

  /** One function per handler of this region, each with its role, logs and the shared environment. */
  private addFunctions(
    props: ApiStackProps,
    data: DataRefs,
    deployed: readonly HandlerName[],
    encrypted: { encryptionKey?: IKey },
  ): ApiStack['functions'] {
    const { config } = props;
    const environment = this.environmentOf(config, data);

    const handlerFunction = (name: HandlerName) =>
      new HandlerFunction(this, `Handler-${name}`, {
        handlerName: name,
        spec: handlers[name],
        names: this.names,
        data,
        vpc: this.network.vpc,
        subnets: this.network.privateSubnets,
        securityGroup: this.network.lambdaSecurityGroup,
        environment: { ...environment, ...drEnvironment(name, data) },
        logLevel: config.logLevel,
        cacheConnectArns: this.cache.iamAuth.connectArns,
        ...encrypted,
      });
    const functions: Record<RegionHandlerName, HandlerFunction> & Partial<Record<DrHandlerName, HandlerFunction>> =
      mapHandlers(handlerFunction);
    for (const name of deployed) if (!(name in functions)) functions[name as DrHandlerName] = handlerFunction(name);
    return functions;
  }

  /** The state machines: transactions, failovers, rebalances, and a DR backup's promotions. */
  private addWorkflows(
    dr: DrDeployment | undefined,
    encrypted: { encryptionKey?: IKey },
  ): [WorkflowStateMachine, WorkflowStateMachine, WorkflowStateMachine, WorkflowStateMachine | undefined] {
    const transactions = new WorkflowStateMachine(this, 'Transactions', {
      names: this.names,
      machine: 'transaction',
      task: this.functions[stateMachines.transaction.taskHandler].function,
      ...encrypted,
    });
    const failovers = new WorkflowStateMachine(this, 'Failovers', {
      names: this.names,
      machine: 'failover',
      task: this.functions[stateMachines.failover.taskHandler].function,
      ...encrypted,
    });
    const rebalances = new WorkflowStateMachine(this, 'Rebalances', {
      names: this.names,
      machine: 'rebalance',
      task: this.functions[stateMachines.rebalance.taskHandler].function,
      ...encrypted,
    });
    const promotions =
      dr?.role === 'backup'
        ? new WorkflowStateMachine(this, 'Promotions', {
            names: this.names,
            machine: 'drPromotion',
            task: this.deployedFunction(stateMachines.drPromotion.taskHandler).function,
            ...encrypted,
          })
        : undefined;
    return [transactions, failovers, rebalances, promotions];
  }

  /** The REST API, and with auth=both a second one of the same routes under AWS_IAM. */
  private addRestApis(config: DeploymentConfig, encrypted: { encryptionKey?: IKey }): [RingstoreRestApi, RingstoreRestApi | undefined] {
    const restApiProps = {
      names: this.names,
      routes,
      functions: mapHandlers((name) => this.functions[name].function),
      authorizer: 'authorizer',
      rateLimitPerSecond: config.apiRateLimitPerSecond,
      burstLimit: config.apiBurstLimit,
      manageAccountRole: config.manageApiGatewayAccountRole,
      ...encrypted,
    } as const;
    // A REST API method has one authorization type: `both` is a second API, the same routes and handlers
    // under AWS_IAM, so paths, the OpenAPI document and the SDK stay one (docs/security.md, "IAM authentication").
    const restApi = new RingstoreRestApi(this, 'RestApi', {
      ...restApiProps,
      authorization: config.auth === 'iam' ? 'iam' : 'apiKey',
    });
    if (config.auth === 'both') {
      // A nested stack of its own: the second API's resources and methods (about 140, a third more with every few
      // routes) would take the stack past CloudFormation's 500 resources; nested, it counts as one.
      const iamRestApi = new RingstoreRestApi(new NestedStack(this, 'IamApi'), 'IamRestApi', {
        ...restApiProps,
        authorization: 'iam',
        apiName: `${this.names.apiName}-iam`,
        // The account role is one per account and region: the first API manages it, and its stage (which
        // waits for the role) goes first, so this stage's logging finds the role set.
        manageAccountRole: false,
      });
      iamRestApi.api.deploymentStage.node.addDependency(restApi.api.deploymentStage);
      return [restApi, iamRestApi];
    }
    return [restApi, undefined];
  }

  /** A DR backup's appliers' triggers (the key queue, the value events) and its alarms. */
  private addDrBackup(data: DataRefs, deployed: readonly HandlerName[]): [DrBackupTriggers | undefined, DrAlarms | undefined] {
    if (data.drBackup) {
      const triggers = new DrBackupTriggers(this, 'DrBackupTriggers', {
        names: this.names,
        keyQueue: data.drBackup.keyQueue,
        keyApplier: this.deployedFunction(soleHandler(deployed, 'drKeyQueue')).function,
        valueApplier: this.deployedFunction(soleHandler(deployed, 'drValueEvents')).function,
      });
      const alarms = new DrAlarms(this, 'DrAlarms', {
        names: this.names,
        keyQueue: data.drBackup.keyQueue,
        topic: this.failoverAlarms.topic,
      });
      return [triggers, alarms];
    }
    return [undefined, undefined];
  }

  /** What lambdas/config.ts parses, for every function. */
  private environmentOf(config: DeploymentConfig, data: DataRefs): Record<string, string> {
    // What lambdas/config.ts parses; the endpoint overrides are for the local cloud only, and
    // envVars.faultInjection is never set here (production bundles refuse it anyway).
    return {
      [envVars.stage]: config.stage,
      [envVars.shardCount]: String(config.shardCount),
      [envVars.replicationFactor]: String(config.replicationFactor),
      [envVars.vnodesPerShard]: String(config.vnodesPerShard),
      [envVars.blobBucket]: data.blobBucket.name,
      [envVars.redisUrl]: this.cache.url,
      // IAM authentication: each handler signs a token for this group and user with its role (docs/security.md).
      [envVars.redisUser]: this.cache.iamAuth.userName,
      [envVars.redisIamCache]: this.cache.iamAuth.cacheName,
      [envVars.l1Policy]: config.l1CachePolicy,
      [envVars.autoFailover]: config.autoFailover ? '1' : '0',
      [envVars.failoverConfirmProbes]: String(config.failoverConfirmProbes),
      [envVars.failoverConfirmIntervalMs]: String(config.failoverConfirmIntervalMs),
      [envVars.namespaceRatePerSecond]: String(config.namespaceRateLimitPerSecond),
      [envVars.namespaceBurst]: String(config.namespaceBurstLimit),
      [envVars.watchRetentionSeconds]: String(config.watchRetentionSeconds),
    };
  }

  private deployedFunction(name: HandlerName): HandlerFunction {
    const found = this.functions[name];
    if (!found) throw new Error(`handler ${name} is not deployed in this region`);
    return found;
  }

  /** The VPC endpoints the isolated functions start workflows and read the key queue through, each carrying only those calls. */
  private addEndpoints(data: DataRefs, deployed: readonly HandlerName[], workflows: WorkflowRefs): void {
    // StartSyncExecution is served by sync-states.<region>.amazonaws.com, which the isolated subnets reach
    // only through an endpoint; it carries nothing but that call on this state machine.
    if (handlerNames.some((name) => handlers[name].startsTransactions)) {
      const syncStates = this.network.addInterfaceEndpoint('SyncStates', InterfaceVpcEndpointAwsService.STEP_FUNCTIONS_SYNC);
      syncStates.addToPolicy(endpointAllows([...transactionStartActions], [workflows.transactionStateMachineArn]));
    }

    // StartExecution (a failover, a DR backup's promotion) is served by states.<region>.amazonaws.com: its
    // own endpoint, carrying nothing but that call on those state machines.
    let states: InterfaceVpcEndpoint | undefined;
    const statesEndpoint = () => (states ??= this.network.addInterfaceEndpoint('States', InterfaceVpcEndpointAwsService.STEP_FUNCTIONS));
    if (handlerNames.some((name) => startsFailovers(handlers[name], workflows))) {
      statesEndpoint().addToPolicy(endpointAllows([...failoverStartActions], [workflows.failoverStateMachineArn]));
    }
    if (deployed.some((name) => handlers[name].startsRebalances)) {
      statesEndpoint().addToPolicy(endpointAllows([...rebalanceStartActions], [workflows.rebalanceStateMachineArn]));
    }
    if (workflows.promotionStateMachineArn && deployed.some((name) => startsPromotions(handlers[name], workflows))) {
      statesEndpoint().addToPolicy(endpointAllows([...promotionStartActions], [workflows.promotionStateMachineArn]));
    }
    // A DR backup's promotion and DR status read the key queue's depth from inside the VPC: SQS's endpoint,
    // carrying nothing but that call on the key queue (the appliers' deliveries are Lambda's own polling).
    if (data.drBackup && deployed.some((name) => handlers[name].drKeyQueueDepth)) {
      this.network
        .addInterfaceEndpoint('Sqs', InterfaceVpcEndpointAwsService.SQS)
        .addToPolicy(endpointAllows([...drKeyDepthActions], [data.drBackup.keyQueue.arn]));
    }
  }

  /** The stream subscriptions and schedules the handlers' specs declare. */
  private addEventSources(props: ApiStackProps, deployed: readonly HandlerName[], encrypted: { encryptionKey?: IKey }): void {
    for (const name of deployed) {
      const spec = handlers[name];
      if (spec.shardStreams) {
        this.shardStreams[name] = new ShardStreams(this, `Streams-${name}`, {
          target: this.deployedFunction(name).function,
          streamArns: props.shardStreamArns,
          batchSize: replicationDefaults.streamBatchSize,
          ...encrypted,
        });
      }
      if (spec.txnStream) {
        this.shardStreams[name] = new ShardStreams(this, `Streams-${name}`, {
          target: this.deployedFunction(name).function,
          streamArns: [props.txnStreamArn],
          batchSize: replicationDefaults.streamBatchSize,
          ...encrypted,
        });
      }
      if (spec.everyMinutes !== undefined) {
        this.schedules[name] = new Every(this, `Schedule-${name}`, {
          target: this.deployedFunction(name).function,
          everyMinutes: spec.everyMinutes,
          description: `${this.names.functionName(name)}: ${spec.description}`,
        });
      }
    }
  }

  private addOutputs(config: DeploymentConfig, workflows: WorkflowRefs): void {
    new CfnOutput(this, 'ApiUrl', {
      description: `Base URL of the Ringstore REST API (${config.auth === 'iam' ? 'IAM-signed requests' : 'API keys'})`,
      value: this.restApi.api.url,
    });
    const iamApi = config.auth === 'iam' ? this.restApi : this.iamRestApi;
    if (this.iamRestApi) {
      new CfnOutput(this, 'IamApiUrl', {
        description: 'Base URL of the same API for IAM-signed (SigV4) requests',
        value: this.iamRestApi.api.url,
      });
    }
    if (iamApi) {
      new CfnOutput(this, 'IamInvokeArn', {
        description: 'What an IAM policy allows execute-api:Invoke on for callers of the IAM API (narrow the method and path to taste)',
        value: iamApi.api.arnForExecuteApi('*', '/*', iamApi.api.deploymentStage.stageName),
      });
    }
    new CfnOutput(this, 'TransactionStateMachineArn', { value: workflows.transactionStateMachineArn });
    new CfnOutput(this, 'FailoverStateMachineArn', { value: this.failovers.stateMachine.stateMachineArn });
    new CfnOutput(this, 'RebalanceStateMachineArn', { value: this.rebalances.stateMachine.stateMachineArn });
    new CfnOutput(this, 'AlarmTopicArn', {
      description: 'SNS topic of the deployment alarms (health, failovers, DR): subscribe to it',
      value: this.failoverAlarms.topic.topicArn,
    });
    new CfnOutput(this, 'TransactionLogGroup', {
      description: 'Execution events of the transaction state machine (no input or output data)',
      value: this.transactions.logGroup.logGroupName,
    });
    new CfnOutput(this, 'DashboardName', {
      description: 'CloudWatch dashboard of this deployment',
      value: this.observability.dashboard.dashboardName,
    });
    new CfnOutput(this, 'CacheEndpoint', { value: this.cache.url });
    new CfnOutput(this, 'CacheEvictionPolicy', {
      description: 'maxmemory-policy of the L2 cache (its parameter group)',
      value: config.l2EvictionPolicy,
    });
    for (const [name, streams] of Object.entries(this.shardStreams)) {
      new CfnOutput(this, `StreamFailureQueue${name}`, {
        description:
          name === 'drShipper'
            ? 'Stream batches drShipper gave up on: their writes did not reach the DR backup (POST /v1/admin/dr/sync ships every key again)'
            : `Stream batches ${name} gave up on (anti-entropy repairs what they missed)`,
        value: streams.failures.queueUrl,
      });
    }
    if (this.promotions) {
      new CfnOutput(this, 'PromotionStateMachineArn', {
        description: 'The DR promotion workflow of this backup region (POST /v1/admin/dr/promote starts it)',
        value: this.promotions.stateMachine.stateMachineArn,
      });
    }
  }
}

/** The one Lambda each state machine invokes is the one handler whose spec says it is a task of it. */
function assertStateMachineTasks(deployed: readonly HandlerName[], dr: DrDeployment | undefined): void {
  for (const [machine, spec] of Object.entries(stateMachines)) {
    // A DR workflow runs only in a region of its role.
    if ('drRole' in spec && spec.drRole !== dr?.role) continue;
    const { taskHandler } = spec;
    const tasks = deployed.filter((name) => handlers[name].stateMachineTask === machine);
    if (tasks.length !== 1 || tasks[0] !== taskHandler) {
      throw new Error(`stateMachines.${machine}.taskHandler is ${taskHandler}, but the handlers marked its task are [${tasks.join(', ')}]`);
    }
  }
}
