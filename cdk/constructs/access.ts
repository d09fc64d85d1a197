// Turns a handler's HandlerSpec (schemas/topology.ts) into IAM statements: exactly the access it
// declares, on named resources only (least privilege).
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import {
  apiKeyPartition,
  apiKeyUseAttribute,
  controlSchema,
  drControlPartitions,
  drPrefixes,
  type HandlerSpec,
  rateBucketPartitionPrefix,
} from '../../schemas/topology';
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

/**
 * Reads of the DR pending table: it is also scanned, a bounded page at a time (the DR status counts its
 * entries, a promotion marks the pending ones lost, the backup's sweep retries old ones).
 */
export const pendingReadActions = [...dynamoReadActions, 'dynamodb:Scan'] as const;

function tableStatements(
  access: Access,
  tables: readonly TableRef[],
  readActions: readonly string[] = dynamoReadActions,
): PolicyStatement[] {
  if (access === 'none' || tables.length === 0) return [];
  const tableArns = tables.map((table) => table.arn);
  const indexArns = tables.flatMap((table) => table.indexArns);
  // Each ARN is listed once: IAM caps policy sizes, which is what bounds shardCountMax.
  // Writes address the base table only; DynamoDB maintains the indexes.
  const tableActions = access === 'readWrite' ? [...readActions, ...dynamoWriteActions] : [...readActions];
  const statements = [new PolicyStatement({ effect: Effect.ALLOW, actions: tableActions, resources: tableArns })];
  if (indexArns.length > 0) {
    statements.push(new PolicyStatement({ effect: Effect.ALLOW, actions: ['dynamodb:Query'], resources: indexArns }));
  }
  return statements;
}

/** What taking from a namespace's rate bucket sends: one conditional UpdateItem (lambdas/adapters/dynamodb-rate-limit-store.ts). */
export const rateBucketActions = ['dynamodb:UpdateItem'] as const;

/**
 * A rate-limited handler's updates of the rate buckets, and of nothing else in the control table: the
 * read handlers may not write the ring, API keys or settings that share it.
 */
function rateBucketStatements(spec: HandlerSpec, data: DataRefs): PolicyStatement[] {
  if (!spec.rateLimited || spec.controlTable === 'readWrite') return [];
  return [
    new PolicyStatement({
      effect: Effect.ALLOW,
      actions: [...rateBucketActions],
      resources: [data.controlTable.arn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${rateBucketPartitionPrefix}*`] } },
    }),
  ];
}

/** What recording a key's last use sends: one conditional UpdateItem of one attribute. */
export const keyUseActions = ['dynamodb:UpdateItem'] as const;

/**
 * The authorizer's one write: the last-use time of API key items. The attribute condition keeps it from
 * touching a key's hash, namespace, role or revocation, which only the admin handler writes.
 */
function keyUseStatements(spec: HandlerSpec, data: DataRefs): PolicyStatement[] {
  if (!spec.recordsKeyUse || spec.controlTable === 'readWrite') return [];
  return [
    new PolicyStatement({
      effect: Effect.ALLOW,
      actions: [...keyUseActions],
      resources: [data.controlTable.arn],
      conditions: {
        'ForAllValues:StringEquals': {
          'dynamodb:LeadingKeys': [apiKeyPartition],
          'dynamodb:Attributes': [controlSchema.partitionKey.name, controlSchema.sortKey.name, apiKeyUseAttribute],
        },
        StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE'] },
      },
    }),
  ];
}

function bucketStatements(access: Access, bucket: DataRefs['blobBucket'], drBackup: boolean): PolicyStatement[] {
  if (access === 'none') return [];
  // In a DR backup, values arrive under dr/values/ and the large ones stay there as the items' blobs:
  // that prefix is committed blobs too (the appliers also remove the objects of values they inlined).
  const blobs = drBackup ? [blobPrefixes.blobs, drPrefixes.values] : [blobPrefixes.blobs];
  // Readers see committed blobs only; writers also own the upload area they presign URLs for.
  const readPrefixes = access === 'read' ? blobs : [...blobs, blobPrefixes.uploads];
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
        resources: [...blobs, blobPrefixes.uploads].map((prefix) => bucket.objectArn(prefix)),
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

/** A DR primary's sends to its backup region: key messages (SendMessageBatch is authorised as SendMessage). */
export const drKeySendActions = ['sqs:SendMessage'] as const;
/** ... and values, put under dr/values/ of the backup's bucket (never read, listed or deleted there). */
export const drValuePutActions = ['s3:PutObject'] as const;
/**
 * ... and the backup's DR partitions of its control table: the DR state, which is the primary's lease to
 * acknowledge writes, and the promotions' reports, which a demoted primary reads to offer lost values back.
 */
export const drStateReadActions = ['dynamodb:GetItem', 'dynamodb:Query'] as const;
/** What Lambda's SQS event source mapping calls on the key queue, with the applier's role. */
export const drKeyConsumeActions = ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'] as const;
/** The promotion's drain and the DR status: how many key messages wait or are in flight. */
export const drKeyDepthActions = ['sqs:GetQueueAttributes'] as const;

/**
 * A DR primary's statements for a handler with `drLink`, on the backup region's resources by ARN: its key
 * queue, the values prefix of its bucket, its control table, and (`drNotices`) a scan of its pending table.
 * None in any other region.
 */
function drLinkStatements(spec: HandlerSpec, data: DataRefs): PolicyStatement[] {
  if (!spec.drLink || !data.drLink) return [];
  const link = data.drLink;
  return [
    new PolicyStatement({ effect: Effect.ALLOW, actions: [...drKeySendActions], resources: [link.keyQueueArn] }),
    new PolicyStatement({ effect: Effect.ALLOW, actions: [...drValuePutActions], resources: [link.valueObjectsArn] }),
    new PolicyStatement({
      effect: Effect.ALLOW,
      actions: [...drStateReadActions],
      resources: [link.controlTableArn],
      // Only the DR partitions: the backup's API keys, ring and settings stay out of the primary's reach.
      conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': Object.values(drControlPartitions) } },
    }),
    ...(spec.drNotices
      ? [new PolicyStatement({ effect: Effect.ALLOW, actions: [...drNoticeScanActions], resources: [link.pendingTableArn] })]
      : []),
  ];
}

/** The primary's maintenance reading its backup's write notices (it settles them by sending key messages). */
export const drNoticeScanActions = ['dynamodb:Scan'] as const;

/** A DR backup's statements on its own key queue: consuming it (`drKeyQueue`), or reading its depth (`drKeyQueueDepth`). */
function drKeyQueueStatements(spec: HandlerSpec, data: DataRefs): PolicyStatement[] {
  if (!data.drBackup) return [];
  const { arn } = data.drBackup.keyQueue;
  if (spec.drKeyQueue) return [new PolicyStatement({ effect: Effect.ALLOW, actions: [...drKeyConsumeActions], resources: [arn] })];
  if (spec.drKeyQueueDepth) return [new PolicyStatement({ effect: Effect.ALLOW, actions: [...drKeyDepthActions], resources: [arn] })];
  return [];
}

/** Authenticating to the L2 cache with an IAM token (docs/security.md, "The L2 cache"). */
export const cacheConnectActions = ['elasticache:Connect'] as const;

/**
 * Whether a handler may connect to the L2 cache: the cache holds copies of shard values, so the handlers that
 * read or write shard tables (the KV, transaction, replication and maintenance paths) and no other.
 */
export function usesValueCache(spec: HandlerSpec): boolean {
  return spec.shardTables !== 'none';
}

/**
 * The IAM statement that lets a handler authenticate to the L2 cache as its user, on that replication group
 * and user only; none for a handler that does not touch shard values.
 *
 * @example
 * for (const statement of cacheStatements(handlers.kvRead, cache.iamAuth.connectArns)) role.addToPolicy(statement);
 */
export function cacheStatements(spec: HandlerSpec, connectArns: readonly string[]): PolicyStatement[] {
  if (!usesValueCache(spec) || connectArns.length === 0) return [];
  return [new PolicyStatement({ effect: Effect.ALLOW, actions: [...cacheConnectActions], resources: [...connectArns] })];
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
  /** A DR backup region's promotion state machine (docs/dr.md); absent in any other region. */
  promotionStateMachineArn?: string;
  /** The rebalance state machine (docs/rebalancing.md). */
  rebalanceStateMachineArn: string;
}

/** Starting a rebalance (or resuming one): one (asynchronous) execution of the Standard rebalance state machine. */
export const rebalanceStartActions = ['states:StartExecution'] as const;

/** Starting a promotion: one (asynchronous) execution of the Standard promotion state machine. */
export const promotionStartActions = ['states:StartExecution'] as const;

/** Whether a handler may start promotions: only in a region that has the promotion state machine (a DR backup). */
export function startsPromotions(spec: HandlerSpec, workflows: Pick<WorkflowRefs, 'promotionStateMachineArn'>): boolean {
  return spec.startsPromotions === true && workflows.promotionStateMachineArn !== undefined;
}

/** Whether a handler may start failovers: the admin's by hand, and with automatic failover on those that find shards down. */
export function startsFailovers(spec: HandlerSpec, workflows: Pick<WorkflowRefs, 'autoFailover'>): boolean {
  return spec.startsFailovers === true || (workflows.autoFailover && spec.startsAutomaticFailovers === true);
}

/**
 * The IAM statements one handler needs for the state machines: StartSyncExecution on the transaction
 * state machine (that ARN only) when its spec says `startsTransactions`, StartExecution on the failover
 * state machine when it may start failovers (startsFailovers above), StartExecution on the rebalance
 * state machine when its spec says `startsRebalances`, StartExecution on a DR backup's
 * promotion state machine when it may start promotions (startsPromotions above), else none.
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
    ...(spec.startsRebalances
      ? [
          new PolicyStatement({
            effect: Effect.ALLOW,
            actions: [...rebalanceStartActions],
            resources: [workflows.rebalanceStateMachineArn],
          }),
        ]
      : []),
    ...(startsPromotions(spec, workflows) && workflows.promotionStateMachineArn
      ? [
          new PolicyStatement({
            effect: Effect.ALLOW,
            actions: [...promotionStartActions],
            resources: [workflows.promotionStateMachineArn],
          }),
        ]
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
    ...rateBucketStatements(spec, data),
    ...keyUseStatements(spec, data),
    ...tableStatements(spec.hintsTable, [data.hintsTable]),
    ...tableStatements(spec.txnTable ?? 'none', [data.txnTable]),
    ...tableStatements(spec.feedTable ?? 'none', [data.feedTable]),
    ...streamStatements(spec, data),
    ...bucketStatements(spec.blobBucket, data.blobBucket, data.drBackup !== undefined),
    ...(data.drBackup ? tableStatements(spec.pendingTable ?? 'none', [data.drBackup.pendingTable], pendingReadActions) : []),
    ...drLinkStatements(spec, data),
    ...drKeyQueueStatements(spec, data),
  ];
}
