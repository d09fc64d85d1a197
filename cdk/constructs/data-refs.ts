// ARNs of the data plane, rebuilt from topology names rather than imported from the data stack.
// Names are the contract (lambdas/topology.ts): no CloudFormation exports tie the stacks together,
// so the shard count can grow or shrink without the export-in-use deadlock.
import { Stack } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { shardSchema, type Names } from '../../lambdas/topology';

export { blobPrefixes } from '../../lambdas/topology';

/** Indexes of every shard table, by name, from topology. */
export const shardIndexNames = [shardSchema.tokenIndex.name, shardSchema.keyIndex.name] as const;

export interface TableRef {
  name: string;
  arn: string;
  /** ARNs of the table's global secondary indexes (each named, none by wildcard). */
  indexArns: string[];
}

export interface DataRefs {
  shardTables: TableRef[];
  controlTable: TableRef;
  blobBucket: { name: string; arn: string; objectArn(prefix: string): string };
}

/**
 * ARNs of the shard tables, the control table and the blob bucket of one deployment, in `scope`'s
 * stack (same account and region as the data stack).
 */
export function dataRefs(scope: Construct, names: Names, shardCount: number): DataRefs {
  const stack = Stack.of(scope);
  const table = (name: string, indexes: readonly string[]): TableRef => {
    const arn = stack.formatArn({ service: 'dynamodb', resource: 'table', resourceName: name });
    return { name, arn, indexArns: indexes.map((index) => `${arn}/index/${index}`) };
  };
  const bucketArn = stack.formatArn({ service: 's3', region: '', account: '', resource: names.blobBucket });
  return {
    shardTables: Array.from({ length: shardCount }, (_, shardId) => table(names.shardTable(shardId), shardIndexNames)),
    controlTable: table(names.controlTable, []),
    blobBucket: { name: names.blobBucket, arn: bucketArn, objectArn: (prefix) => `${bucketArn}/${prefix}*` },
  };
}

