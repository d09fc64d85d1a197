// ARNs of the data plane, rebuilt from topology names rather than imported from the data stack.
// Names are the contract (schemas/topology.ts): no CloudFormation exports tie the stacks together,
// so the shard count can grow or shrink without the export-in-use deadlock. The one exception is
// each stream ARN (shard tables', the transaction table's: it carries the stream's creation time): it comes from the data stack
// as a weak reference (`Fn::GetStackOutput`, cdk.json's defaultCrossStackReferences), never an export.
import { Stack } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { shardSchema, txnSchema, type Names } from '../../schemas/topology';
import { backupLinkRefs, keyQueueRefs, type BackupLinkRefs, type KeyQueueRefs } from './dr-backup';

export { blobPrefixes } from '../../schemas/topology';

/** Indexes of every shard table, by name, from topology. */
export const shardIndexNames = [shardSchema.tokenIndex.name, shardSchema.keyIndex.name] as const;

/** Indexes of the transaction table: the recovery sweeper queries the deadline index. */
export const txnIndexNames = [txnSchema.deadlineIndex.name] as const;

export interface TableRef {
  name: string;
  arn: string;
  /** ARNs of the table's global secondary indexes (each named, none by wildcard). */
  indexArns: string[];
}

/** A table with a stream: the shard tables and the transaction table. */
export interface ShardTableRef extends TableRef {
  /** ARN of the table's stream (NEW_AND_OLD_IMAGES), when the stack was given the data stack's. */
  streamArn?: string;
}

export interface DataRefs {
  shardTables: ShardTableRef[];
  controlTable: TableRef;
  hintsTable: TableRef;
  /** Transaction records (2PC coordinator state), their deadline index, and their stream when given. */
  txnTable: ShardTableRef;
  /** The change feed (docs/watch.md). */
  feedTable: TableRef;
  blobBucket: { name: string; arn: string; objectArn(prefix: string): string };
  /**
   * DR backup region (docs/dr.md): its pending table and key queue. Values arrive under dr/values/ of its
   * bucket, and the large ones stay there as blobs, so the bucket's readers read that prefix too.
   */
  drBackup?: { pendingTable: TableRef; keyQueue: KeyQueueRefs };
  /** DR primary: the backup region's key queue, values prefix and control table, by ARN. */
  drLink?: BackupLinkRefs;
}

/** A deployment's part in cross-region DR (docs/dr.md), as its CDK stacks see it; absent: no DR. */
export type DrDeployment = { role: 'primary'; backupRegion: string } | { role: 'backup' };

/**
 * ARNs of the shard tables (and their streams, when given), the control, hints and transaction tables and the blob
 * bucket of one deployment, in `scope`'s stack (same account and region as the data stack).
 */
export function dataRefs(
  scope: Construct,
  names: Names,
  shardCount: number,
  streams: { shards?: readonly string[]; txn?: string } = {},
  dr?: DrDeployment,
): DataRefs {
  const { shards: shardStreamArns } = streams;
  if (shardStreamArns && shardStreamArns.length !== shardCount) {
    throw new Error(`${shardStreamArns.length} shard stream ARNs for ${shardCount} shards`);
  }
  const stack = Stack.of(scope);
  const table = (name: string, indexes: readonly string[]): TableRef => {
    const arn = stack.formatArn({ service: 'dynamodb', resource: 'table', resourceName: name });
    return { name, arn, indexArns: indexes.map((index) => `${arn}/index/${index}`) };
  };
  const bucketArn = stack.formatArn({ service: 's3', region: '', account: '', resource: names.blobBucket });
  return {
    shardTables: Array.from({ length: shardCount }, (_, shardId) => ({
      ...table(names.shardTable(shardId), shardIndexNames),
      ...(shardStreamArns ? { streamArn: shardStreamArns[shardId] } : {}),
    })),
    controlTable: table(names.controlTable, []),
    hintsTable: table(names.hintsTable, []),
    txnTable: { ...table(names.txnTable, txnIndexNames), ...(streams.txn ? { streamArn: streams.txn } : {}) },
    feedTable: table(names.feedTable, []),
    blobBucket: { name: names.blobBucket, arn: bucketArn, objectArn: (prefix) => `${bucketArn}/${prefix}*` },
    ...(dr?.role === 'backup' ? { drBackup: { pendingTable: table(names.pendingTable, []), keyQueue: keyQueueRefs(scope, names) } } : {}),
    ...(dr?.role === 'primary' ? { drLink: backupLinkRefs(scope, names.stage, dr.backupRegion) } : {}),
  };
}
