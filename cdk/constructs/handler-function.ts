// One Lambda per topology handler: bundled with esbuild, in the VPC, with a role that holds only what
// its HandlerSpec declares plus what running in a VPC with tracing requires.
import * as path from 'node:path';
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { ISecurityGroup, IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { type ICommandHooks, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { drPrefixes, envVars, productionBuildDefine, type HandlerName, type HandlerSpec, type Names } from '../../schemas/topology';
import { accessStatements, cacheStatements, startsFailovers, startsPromotions, workflowStatements, type WorkflowRefs } from './access';
import type { DataRefs } from './data-refs';
import { keyUseStatement } from './encryption-key';
import { acknowledge, nagFindingName } from './nag';

/** The repository root: topology entries are relative to it, and its lock file pins the bundle. */
export const repoRoot = path.resolve(__dirname, '..', '..');

/**
 * Node.js 22 (maintenance LTS until April 2027). Node 20 is past its end of life (April 2026), so
 * new functions should not start on it; Node 24 is newer than what the handler stack is built and
 * tested for (middy 6; the machines run Node 20). Moving to 24 is a one-line change once they are.
 */
export const lambdaRuntime = Runtime.NODEJS_22_X;
const esbuildTarget = 'node22';

/**
 * Copies a spec's `bundledFiles` next to the bundle, where the handler reads them (lambdas/http/bundled-file.ts):
 * esbuild bundles code, not assets such as a browser script served as text. Bundling is local, so `cp` runs
 * on the build machine with inputDir the repository root.
 *
 * @example
 * bundling: { commandHooks: copyBundledFiles(['node_modules/redoc/bundles/redoc.standalone.js']) }
 */
export function copyBundledFiles(files: readonly string[]): ICommandHooks {
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir, outputDir) => files.map((file) => `cp "${path.join(inputDir, file)}" "${outputDir}/${path.basename(file)}"`),
  };
}

export interface HandlerFunctionProps {
  handlerName: HandlerName;
  spec: HandlerSpec;
  names: Names;
  data: DataRefs;
  vpc: IVpc;
  subnets: SubnetSelection;
  securityGroup: ISecurityGroup;
  environment: Record<string, string>;
  logLevel: string;
  /** The L2 cache's replication group and user, which a handler that uses the value cache may connect to. */
  cacheConnectArns: readonly string[];
  /** The customer-managed key (CDK context `kmsKey=customer`): the log group's, and the role may use it. */
  encryptionKey?: IKey;
}

export class HandlerFunction extends Construct {
  readonly function: NodejsFunction;
  readonly role: Role;
  private readonly spec: HandlerSpec;

  constructor(scope: Construct, id: string, props: HandlerFunctionProps) {
    super(scope, id);
    const { spec, names } = props;
    this.spec = spec;
    const functionName = names.functionName(props.handlerName);

    // Our own role instead of the default one, which would attach the AWS managed
    // AWSLambdaBasicExecutionRole/AWSLambdaVPCAccessExecutionRole policies (logs on every log group).
    // Named `<prefix>-<handler>-<region>` (IAM names are global; a DR pair is one stage in two regions): the
    // customer-managed key's policy admits Ringstore's roles by that prefix (docs/security.md).
    this.role = new Role(this, 'Role', {
      roleName: `${functionName}-${Stack.of(this).region}`,
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `${functionName}: ${spec.description}`,
    });
    const logGroup = new LogGroup(this, 'Logs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
      ...(props.encryptionKey ? { encryptionKey: props.encryptionKey } : {}),
    });
    logGroup.grantWrite(this.role);

    const dataStatements = this.grantRole(props);

    this.function = new NodejsFunction(this, 'Function', {
      functionName,
      description: spec.description,
      entry: path.join(repoRoot, spec.entry),
      handler: 'handler',
      projectRoot: repoRoot,
      depsLockFilePath: path.join(repoRoot, 'package-lock.json'),
      runtime: lambdaRuntime,
      // Pure JavaScript bundles (no native modules), so Graviton: cheaper per ms and as fast.
      architecture: Architecture.ARM_64,
      memorySize: spec.memoryMb,
      timeout: Duration.seconds(spec.timeoutSeconds),
      role: this.role,
      logGroup,
      tracing: Tracing.ACTIVE,
      vpc: props.vpc,
      vpcSubnets: props.subnets,
      securityGroups: [props.securityGroup],
      environment: {
        ...props.environment,
        POWERTOOLS_SERVICE_NAME: names.prefix,
        POWERTOOLS_LOG_LEVEL: props.logLevel,
        // Stack traces point into the TypeScript sources (the bundle ships its source map).
        NODE_OPTIONS: '--enable-source-maps',
      },
      bundling: {
        // esbuild from node_modules; never Docker (the build machines have no container engine).
        forceDockerBundling: false,
        format: OutputFormat.CJS,
        target: esbuildTarget,
        minify: true,
        sourceMap: true,
        sourcesContent: false,
        // Bundle the AWS SDK too: the versions the tests ran against, not the runtime's.
        externalModules: [],
        tsconfig: path.join(repoRoot, 'tsconfig.json'),
        // Marks the bundle as a production build: a deployed function refuses to arm fault injection
        // even if RINGSTORE_FAULT_INJECTION were set (which this app never does).
        define: { ...productionBuildDefine },
        ...(spec.bundledFiles?.length ? { commandHooks: copyBundledFiles(spec.bundledFiles) } : {}),
      },
    });

    this.acknowledgeFindings(props, dataStatements);
  }

  /** The role's grants, in order: the VPC network interfaces, what the spec declares of the data and the cache, the stage's key. */
  private grantRole(props: HandlerFunctionProps): PolicyStatement[] {
    const { spec, names } = props;
    // Lambda creates and deletes the function's VPC network interfaces with the execution role.
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: [
          'ec2:CreateNetworkInterface',
          'ec2:DescribeNetworkInterfaces',
          'ec2:DescribeSubnets',
          'ec2:DeleteNetworkInterface',
          'ec2:AssignPrivateIpAddresses',
          'ec2:UnassignPrivateIpAddresses',
        ],
        resources: ['*'],
      }),
    );
    const dataStatements = accessStatements(spec, props.data);
    for (const statement of dataStatements) this.role.addToPrincipalPolicy(statement);
    for (const statement of cacheStatements(spec, props.cacheConnectArns)) this.role.addToPrincipalPolicy(statement);
    if (props.encryptionKey) this.role.addToPrincipalPolicy(keyUseStatement(this, names));
    return dataStatements;
  }

  /** cdk-nag's findings this function's role and runtime meet on purpose, each with its reason. */
  private acknowledgeFindings(props: HandlerFunctionProps, dataStatements: readonly PolicyStatement[]): void {
    const { spec, names } = props;
    acknowledge(
      this.role,
      'AwsSolutions-IAM5[Resource::*]',
      'Resource "*" only for actions without resource-level permissions: the ENI actions Lambda performs for VPC access on interfaces whose IDs exist only at run time (AWS documents ec2:DescribeNetworkInterfaces as requiring "*") and xray:PutTraceSegments/PutTelemetryRecords' +
        (spec.shardStreams
          ? ', and dynamodb:ListStreams, which the stream event source mapping requires and IAM accepts only on "*" (it lists stream ARNs, no items; reading a stream is granted on each shard stream ARN only).'
          : '.'),
    );
    // S3 object ARNs always end in a wildcard; each one is a prefix of the blob bucket, never the bucket.
    const objectWildcards = new Set(
      dataStatements.flatMap((statement) => statement.resources).filter((arn) => nagFindingName(this, arn).includes('*')),
    );
    for (const arn of objectWildcards) {
      const finding = nagFindingName(this, arn);
      acknowledge(
        this.role,
        `AwsSolutions-IAM5[Resource::${finding}]`,
        finding.endsWith(`/${drPrefixes.values}*`)
          ? "DR value objects are named per key and version at run time; the grant is scoped to the dr/values/ prefix of one bucket (the DR backup region's), where the primary puts values and the backup applies them, never to the whole bucket."
          : 'Blob object keys are generated per value at run time; the grant is scoped to one key prefix of the blob bucket (blobs/ for readers, blobs/ and uploads/ for writers), never to the whole bucket or other buckets.',
      );
    }
    if (props.encryptionKey) {
      const keys = nagFindingName(this, keyUseStatement(this, names).resources[0] ?? '');
      acknowledge(
        this.role,
        `AwsSolutions-IAM5[Resource::${keys}]`,
        "The stage's customer-managed keys are matched by their alias (kms:ResourceAliases = alias/<prefix>), not by ARN: a key's ARN is not known to the API stack, nor across regions to a DR primary, whose shipper writes to the backup region's queue and bucket. The key policies also admit only Ringstore's role names.",
      );
    }
    acknowledge(
      this.function,
      'AwsSolutions-L1',
      `Runtime pinned to ${lambdaRuntime.name} on purpose: the handler stack (middy 6) is built and tested on Node 20/22; moving to Node 24 is a one-line change once it is tested there.`,
    );
  }

  /**
   * Gives the handler what its spec declares of the state machines, which exist only after the functions
   * they invoke: a handler that starts transactions may start that state machine (and no other) and finds
   * its ARN in the environment; any other handler gets nothing.
   *
   * @example
   * functions.txn.useWorkflows({ transactionStateMachineArn: transactions.stateMachine.stateMachineArn });
   */
  useWorkflows(workflows: WorkflowRefs): void {
    for (const statement of workflowStatements(this.spec, workflows)) this.role.addToPrincipalPolicy(statement);
    if (this.spec.startsTransactions) this.function.addEnvironment(envVars.txnStateMachineArn, workflows.transactionStateMachineArn);
    if (startsFailovers(this.spec, workflows))
      this.function.addEnvironment(envVars.failoverStateMachineArn, workflows.failoverStateMachineArn);
    if (this.spec.startsRebalances) this.function.addEnvironment(envVars.rebalanceStateMachineArn, workflows.rebalanceStateMachineArn);
    if (startsPromotions(this.spec, workflows) && workflows.promotionStateMachineArn)
      this.function.addEnvironment(envVars.drPromotionStateMachineArn, workflows.promotionStateMachineArn);
  }
}
