// Builds the Ringstore app the way `cdk synth` does (cdk.json feature flags), without esbuild bundling.
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import cdkJson from '../../cdk.json';
import { parseConfig, type DeploymentConfig, type RingstoreConfigInput } from '../../cdk/stacks/config';
import { addRingstore, type Ringstore } from '../../cdk/stacks/ringstore';

export interface Synthesized extends Ringstore {
  app: App;
  config: DeploymentConfig;
  dataTemplate: Template;
  apiTemplate: Template;
  /** With auth=both: the nested stack of the second (AWS_IAM) REST API; undefined otherwise. */
  iamApiTemplate: Template | undefined;
}

/** A fresh app with the given context; `aws:cdk:bundling-stacks: []` makes every stack skip bundling. */
export function newApp(): App {
  return new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
}

export function synth(input: Partial<RingstoreConfigInput> = {}): Synthesized {
  const app = newApp();
  const config = parseConfig(input);
  const ringstore = addRingstore(app, config);
  let dataTemplate: Template | undefined;
  let apiTemplate: Template | undefined;
  let iamApiTemplate: Template | undefined;
  // Templates are synthesized on first use: a test about tables need not build the API.
  return {
    app,
    config,
    ...ringstore,
    get dataTemplate() {
      return (dataTemplate ??= Template.fromStack(ringstore.data));
    },
    get apiTemplate() {
      return (apiTemplate ??= Template.fromStack(ringstore.api));
    },
    get iamApiTemplate() {
      const iamApi = ringstore.api.iamRestApi;
      return iamApi ? (iamApiTemplate ??= Template.fromStack(Stack.of(iamApi))) : undefined;
    },
  };
}

type Json = unknown;

/**
 * Renders a CloudFormation value as a plain string the way the deployed value reads, with pseudo
 * parameters replaced by samples (`Fn::Join` of refs → `arn:aws:…:123456789012:…`) and weak cross-stack
 * references (`Fn::GetStackOutput`) by `stackOutputs[OutputName]`, else `<StackName.OutputName>`.
 */
export function render(value: Json, samples: Record<string, string> = defaultSamples, stackOutputs: Record<string, string> = {}): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const obj = value as Record<string, Json>;
    if ('Fn::Join' in obj) {
      const [delimiter, parts] = obj['Fn::Join'] as [string, Json[]];
      return parts.map((part) => render(part, samples, stackOutputs)).join(delimiter);
    }
    if ('Fn::GetStackOutput' in obj) {
      const { StackName, OutputName } = obj['Fn::GetStackOutput'] as { StackName: string; OutputName: string };
      return stackOutputs[OutputName] ?? `<${StackName}.${OutputName}>`;
    }
    if ('Ref' in obj) return samples[obj.Ref as string] ?? `<${String(obj.Ref)}>`;
    if ('Fn::GetAtt' in obj) return `<${(obj['Fn::GetAtt'] as string[]).join('.')}>`;
  }
  return JSON.stringify(value);
}

export const defaultSamples: Record<string, string> = {
  'AWS::Partition': 'aws',
  'AWS::Region': 'us-east-1',
  'AWS::AccountId': '123456789012',
  'AWS::URLSuffix': 'amazonaws.com',
};

/**
 * The data stack's outputs that publish a shard table's stream ARN, in shard order: what the API stack
 * reads with `Fn::GetStackOutput`. `arn` is a sample of the deployed value, as long as a real one.
 */
export function shardStreamOutputs(
  s: Synthesized,
  samples: Record<string, string> = defaultSamples,
): { outputName: string; arn: string }[] {
  return s.data.shardTables.map((table) => streamOutputOf(s, table, samples));
}

/** The data stack's output that publishes the transaction table's stream ARN (the applier reads it). */
export function txnStreamOutput(s: Synthesized, samples: Record<string, string> = defaultSamples): { outputName: string; arn: string } {
  return streamOutputOf(s, s.data.txnTable, samples);
}

function streamOutputOf(
  s: Synthesized,
  table: Synthesized['data']['txnTable'],
  samples: Record<string, string>,
): { outputName: string; arn: string } {
  const { Outputs: outputs, Resources: resources } = s.dataTemplate.toJSON();
  const tableId = s.data.getLogicalId(table.node.defaultChild as never);
  const found = Object.entries(outputs as Record<string, { Value: Json; Export?: unknown }>).filter(
    ([, output]) => JSON.stringify(output.Value) === JSON.stringify({ 'Fn::GetAtt': [tableId, 'StreamArn'] }),
  );
  if (found.length !== 1) throw new Error(`expected one stream output for ${tableId}, found ${found.length}`);
  const tableName = resources[tableId].Properties.TableName as string;
  const arn = `arn:${samples['AWS::Partition']}:dynamodb:${samples['AWS::Region']}:${samples['AWS::AccountId']}:table/${tableName}/stream/2026-01-01T00:00:00.000`;
  return { outputName: (found[0] as [string, unknown])[0], arn };
}

/** Every stream output (shard tables', the transaction table's) as the `stackOutputs` argument of `render`. */
export function streamArnSamples(s: Synthesized, samples: Record<string, string> = defaultSamples): Record<string, string> {
  return Object.fromEntries(
    [...shardStreamOutputs(s, samples), txnStreamOutput(s, samples)].map(({ outputName, arn }) => [outputName, arn]),
  );
}

export interface Statement {
  Effect: 'Allow' | 'Deny';
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

export const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/**
 * Every IAM policy document of the role `roleLogicalId`: inline, AWS::IAM::Policy, and the
 * AWS::IAM::ManagedPolicy overflow documents CDK creates when a role's grants outgrow one policy.
 */
export function policiesOfRole(template: Template, roleLogicalId: string): { kind: 'inline' | 'managed'; statements: Statement[] }[] {
  const documents: { kind: 'inline' | 'managed'; statements: Statement[] }[] = [];
  const role = template.toJSON().Resources[roleLogicalId];
  for (const policy of role?.Properties?.Policies ?? []) documents.push({ kind: 'inline', statements: policy.PolicyDocument.Statement });
  const attachedToRole = (resource: { [key: string]: any }) =>
    ((resource.Properties?.Roles ?? []) as Json[]).some((ref) => (ref as { Ref?: string }).Ref === roleLogicalId);
  for (const policy of Object.values(template.findResources('AWS::IAM::Policy'))) {
    if (attachedToRole(policy)) documents.push({ kind: 'inline', statements: policy.Properties.PolicyDocument.Statement });
  }
  for (const policy of Object.values(template.findResources('AWS::IAM::ManagedPolicy'))) {
    if (attachedToRole(policy)) documents.push({ kind: 'managed', statements: policy.Properties.PolicyDocument.Statement });
  }
  return documents;
}

/** Every IAM statement that applies to the role `roleLogicalId`, wherever CDK put it. */
export function statementsOfRole(template: Template, roleLogicalId: string): Statement[] {
  return policiesOfRole(template, roleLogicalId).flatMap((document) => document.statements);
}

/** The logical id of a resource of `stack` built by `construct` (its default child). */
export function logicalIdOf(stack: Stack, construct: { node: { defaultChild?: unknown } }): string {
  return stack.getLogicalId(construct.node.defaultChild as never);
}
