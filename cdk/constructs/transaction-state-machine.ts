// Ringstore's workflows in AWS: each ASL file of schemas/ (the one the local cloud runs) deployed as the
// state machine topology names (the transaction coordinator, Express; the failover, Standard), whose Task
// states invoke one Lambda, logged and traced without any value in the logs.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { RemovalPolicy } from 'aws-cdk-lib';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { stateMachines, type Names, type StateMachineName } from '../../schemas/topology';
import { repoRoot } from './handler-function';
import { acknowledge } from './nag';

/** The definition substitution each ASL file names its Task Lambda by (`"Resource": "${TxnStepFunctionArn}"`). */
export const taskArnSubstitutions: Record<StateMachineName, string> = {
  transaction: stateMachines.transaction.taskArnSubstitution,
  failover: stateMachines.failover.taskArnSubstitution,
  rebalance: stateMachines.rebalance.taskArnSubstitution,
  drPromotion: stateMachines.drPromotion.taskArnSubstitution,
};

/** The transaction machine's substitution. */
export const taskArnSubstitution = taskArnSubstitutions.transaction;

/** The `${Name}` placeholders of an ASL text, each once: what CloudFormation's DefinitionSubstitutions replace. */
export function definitionPlaceholders(definition: string): string[] {
  return [...new Set([...definition.matchAll(/\$\{([A-Za-z0-9_]+)\}/g)].map((match) => match[1] as string))];
}

export interface WorkflowStateMachineProps {
  names: Names;
  machine: StateMachineName;
  /** The function every Task state invokes (topology's `stateMachines[machine].taskHandler`). */
  task: IFunction;
  /** The customer-managed key of the execution logs (CDK context `kmsKey=customer`); absent: CloudWatch Logs' own. */
  encryptionKey?: IKey;
}

export class WorkflowStateMachine extends Construct {
  readonly stateMachine: StateMachine;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: WorkflowStateMachineProps) {
    super(scope, id);
    const { definitionFile, type } = stateMachines[props.machine];
    const stateMachineName = props.names.stateMachineName(props.machine);
    // Parsed and re-serialised: a malformed file fails the synth, and the template carries it compact.
    const definition = JSON.stringify(JSON.parse(readFileSync(path.join(repoRoot, definitionFile), 'utf8')));
    const substitutions = { [taskArnSubstitutions[props.machine]]: props.task.functionArn };
    // A placeholder left unsubstituted would deploy a machine whose Tasks name no function.
    const missing = definitionPlaceholders(definition).filter((name) => !(name in substitutions));
    if (missing.length > 0) throw new Error(`${definitionFile} uses \${${missing.join('}, ${')}}, which CDK does not substitute`);

    // The /aws/vendedlogs/ prefix keeps Step Functions' log delivery off the account's size-limited
    // CloudWatch Logs resource policy.
    this.logGroup = new LogGroup(this, 'Logs', {
      logGroupName: `/aws/vendedlogs/states/${stateMachineName}`,
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
      ...(props.encryptionKey ? { encryptionKey: props.encryptionKey } : {}),
    });
    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineName,
      stateMachineType: StateMachineType[type],
      definitionBody: DefinitionBody.fromString(definition),
      definitionSubstitutions: substitutions,
      // Express executions have no history but these logs. Every event is logged (which state ran, how
      // long, which failed), never its input or output: a transaction's carry its values.
      logs: { destination: this.logGroup, level: LogLevel.ALL, includeExecutionData: false },
      tracingEnabled: true,
    });
    // Exactly the one function, unqualified as the definition names it.
    this.stateMachine.addToRolePolicy(
      new PolicyStatement({ effect: Effect.ALLOW, actions: ['lambda:InvokeFunction'], resources: [props.task.functionArn] }),
    );

    acknowledge(
      this.stateMachine,
      'AwsSolutions-IAM5[Resource::*]',
      'Resource "*" only for actions without resource-level permissions: the CloudWatch Logs log-delivery actions Step Functions needs to write execution logs (logs:CreateLogDelivery and friends) and xray:PutTraceSegments/PutTelemetryRecords/GetSampling*; invoking Lambda is granted on the one task function ARN only.',
    );
  }
}
