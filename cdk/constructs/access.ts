// Turns a handler's HandlerSpec (schemas/topology.ts) into IAM statements: exactly the access it
// declares, on named resources only (least privilege).
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { HandlerSpec } from '../../schemas/topology';
import { blobPrefixes, type DataRefs, type TableRef } from './data-refs';

type Access = HandlerSpec['shardTables'];

/** Reads, including TransactGetItems (authorised per item as GetItem) and queries on the indexes. */
export const dynamoReadActions = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'] as const;
/** Writes, including TransactWriteItems (authorised per item as Put/Update/Delete/ConditionCheck). */
export const dynamoWriteActions = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
] as const;

export const s3ReadActions = ['s3:GetObject'] as const;
export const s3WriteActions = ['s3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload'] as const;

function tableStatements(access: Access, tables: readonly TableRef[]): PolicyStatement[] {
  if (access === 'none' || tables.length === 0) return [];
  const tableArns = tables.map((table) => table.arn);
  const indexArns = tables.flatMap((table) => table.indexArns);
  // Each ARN is listed once: IAM caps policy sizes, which is what bounds shardCountMax.
  // Writes address the base table only; DynamoDB maintains the indexes.
  const tableActions = access === 'readWrite' ? [...dynamoReadActions, ...dynamoWriteActions] : [...dynamoReadActions];
  const statements = [new PolicyStatement({ effect: Effect.ALLOW, actions: tableActions, resources: tableArns })];
  if (indexArns.length > 0) {
    statements.push(new PolicyStatement({ effect: Effect.ALLOW, actions: ['dynamodb:Query'], resources: indexArns }));
  }
  return statements;
}

function bucketStatements(access: Access, bucket: DataRefs['blobBucket']): PolicyStatement[] {
  if (access === 'none') return [];
  // Readers see committed blobs only; writers also own the upload area they presign URLs for.
  const readPrefixes = access === 'read' ? [blobPrefixes.blobs] : [blobPrefixes.blobs, blobPrefixes.uploads];
  const statements = [
    new PolicyStatement({
      effect: Effect.ALLOW,
      actions: [...s3ReadActions],
      resources: readPrefixes.map((prefix) => bucket.objectArn(prefix)),
    }),
    // Without s3:ListBucket, S3 answers 403 instead of 404 for a missing object, and the handler
    // could not tell "no such upload" from "not allowed".
    new PolicyStatement({ effect: Effect.ALLOW, actions: ['s3:ListBucket'], resources: [bucket.arn] }),
  ];
  if (access === 'readWrite') {
    statements.push(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: [...s3WriteActions],
        resources: [blobPrefixes.blobs, blobPrefixes.uploads].map((prefix) => bucket.objectArn(prefix)),
      }),
    );
  }
  return statements;
}

/** What Lambda's event source mapping calls on a DynamoDB stream, scoped to the stream ARN. */
export const streamReadActions = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'] as const;
/**
 * Lambda also requires ListStreams for a stream event source. It has no resource-level permission
 * (IAM takes only "*") and returns stream ARNs, never items.
 */
export const streamListAction = 'dynamodb:ListStreams';

function streamStatements(spec: HandlerSpec, data: DataRefs): PolicyStatement[] {
  const tables = [...(spec.shardStreams ? data.shardTables : []), ...(spec.txnStream ? [data.txnTable] : [])];
  if (tables.length === 0) return [];
  const streamArns = tables.map((table) => {
    if (!table.streamArn) throw new Error(`handler reads the stream of ${table.name}, but its stream ARN is not known`);
    return table.streamArn;
  });
  return [
    new PolicyStatement({ effect: Effect.ALLOW, actions: [...streamReadActions], resources: streamArns }),
    new PolicyStatement({ effect: Effect.ALLOW, actions: [streamListAction], resources: ['*'] }),
  ];
}

/** Starting a transaction: one synchronous execution of the Express state machine, which answers with the outcome. */
export const transactionStartActions = ['states:StartSyncExecution'] as const;

/** Starting a failover: one (asynchronous) execution of the Standard failover state machine. */
export const failoverStartActions = ['states:StartExecution'] as const;

/** The state machines of a deployment, known only once they exist (they invoke handler functions). */
export interface WorkflowRefs {
  transactionStateMachineArn: string;
  failoverStateMachineArn: string;
  /** Automatic failover on (CDK context `autoFailover`): the handlers that mark shards down may start one. */
  autoFailover: boolean;
}

/** Whether a handler may start failovers: the admin's by hand, and with automatic failover on those that find shards down. */
export function startsFailovers(spec: HandlerSpec, workflows: Pick<WorkflowRefs, 'autoFailover'>): boolean {
  return spec.startsFailovers === true || (workflows.autoFailover && spec.startsAutomaticFailovers === true);
}

/**
 * The IAM statements one handler needs for the state machines: StartSyncExecution on the transaction
 * state machine (that ARN only) when its spec says `startsTransactions`, StartExecution on the failover
 * state machine when it may start failovers (startsFailovers above), else none.
 *
 * @example
 * for (const statement of workflowStatements(handlers.txn, { transactionStateMachineArn })) role.addToPolicy(statement);
 */
export function workflowStatements(spec: HandlerSpec, workflows: WorkflowRefs): PolicyStatement[] {
  return [
    ...(spec.startsTransactions
      ? [
          new PolicyStatement({
            effect: Effect.ALLOW,
            actions: [...transactionStartActions],
            resources: [workflows.transactionStateMachineArn],
          }),
        ]
      : []),
    ...(startsFailovers(spec, workflows)
      ? [new PolicyStatement({ effect: Effect.ALLOW, actions: [...failoverStartActions], resources: [workflows.failoverStateMachineArn] })]
      : []),
  ];
}

/**
 * The IAM statements one handler needs for its data: nothing beyond what its spec declares.
 *
 * @example
 * for (const statement of accessStatements(handlers.kvRead, dataRefs(this, names, 4))) role.addToPolicy(statement);
 */
export function accessStatements(spec: HandlerSpec, data: DataRefs): PolicyStatement[] {
  return [
    ...tableStatements(spec.shardTables, data.shardTables),
    ...tableStatements(spec.controlTable, [data.controlTable]),
    ...tableStatements(spec.hintsTable, [data.hintsTable]),
    ...tableStatements(spec.txnTable ?? 'none', [data.txnTable]),
    ...streamStatements(spec, data),
    ...bucketStatements(spec.blobBucket, data.blobBucket),
  ];
}
