// Stateful resources of a deployment: shard tables, control, hints and transaction tables, blob bucket. Kept apart from the
// API stack so code deploys never touch data, and data resources are retained when a stack goes.
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import type { Key } from 'aws-cdk-lib/aws-kms';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { namesFor, type Names } from '../../schemas/topology';
import { BlobBucket } from '../constructs/blob-bucket';
import { backupNamesFor, DrBackupData } from '../constructs/dr-backup';
import { EncryptionKey, type KmsKeyMode } from '../constructs/encryption-key';
import { ControlTable, FeedTable, HintsTable, ShardTables, TxnTable } from '../constructs/tables';

export interface DataStackProps extends StackProps {
  stage: string;
  shardCount: number;
  /**
   * `backup`: the stage's DR backup region (docs/dr.md), whose bucket is named for its region and which
   * also holds the pending table and the key queue. Absent: a region without DR, or the primary.
   */
  drRole?: 'backup';
  /** Days a replaced or deleted blob stays recoverable (CDK context `blobNoncurrentVersionDays`). */
  blobNoncurrentVersionDays?: number;
  /** `customer`: one customer-managed key encrypts this region's tables, bucket, queues and logs (docs/security.md). */
  kmsKey?: KmsKeyMode;
}

export class DataStack extends Stack {
  /**
   * Stream ARN of each shard table, in shard order. The one data-plane value that cannot be rebuilt from
   * topology names (it carries the stream's creation time): the API stack's stream subscriptions read it
   * through weak cross-stack references (cdk.json, `Fn::GetStackOutput`), so no export pins a shard.
   */
  get shardStreamArns(): string[] {
    return this.shardTables.map((table, shardId) => {
      if (!table.tableStreamArn) throw new Error(`shard table ${shardId} has no stream`);
      return table.tableStreamArn;
    });
  }

  /** Stream ARN of the transaction table (NEW_AND_OLD_IMAGES): the applier's subscription reads it, as above. */
  get txnStreamArn(): string {
    if (!this.txnTable.tableStreamArn) throw new Error('the transaction table has no stream');
    return this.txnTable.tableStreamArn;
  }

  readonly names: Names;
  readonly shardTables: readonly Table[];
  readonly controlTable: Table;
  readonly hintsTable: Table;
  readonly txnTable: Table;
  readonly feedTable: Table;
  readonly blobBucket: Bucket;
  /** The customer-managed key (`kmsKey=customer`); undefined with AWS-managed keys. */
  readonly encryptionKey: Key | undefined;
  /** The backup region's pending table and key queue; undefined in any other region. */
  readonly drBackup: DrBackupData | undefined;

  constructor(scope: Construct, id: string, props: DataStackProps) {
    super(scope, id, props);
    this.names = props.drRole === 'backup' ? backupNamesFor(props.stage, this.account, this.region) : namesFor(props.stage, this.account);

    this.encryptionKey = props.kmsKey === 'customer' ? new EncryptionKey(this, 'EncryptionKey', { names: this.names }).key : undefined;
    const encrypted = { names: this.names, ...(this.encryptionKey ? { encryptionKey: this.encryptionKey } : {}) };

    this.shardTables = new ShardTables(this, 'ShardTables', { ...encrypted, shardCount: props.shardCount }).tables;
    this.controlTable = new ControlTable(this, 'ControlTable', encrypted).table;
    this.hintsTable = new HintsTable(this, 'HintsTable', encrypted).table;
    this.txnTable = new TxnTable(this, 'TxnTable', encrypted).table;
    this.feedTable = new FeedTable(this, 'FeedTable', encrypted).table;
    this.blobBucket = new BlobBucket(this, 'BlobBucket', {
      ...encrypted,
      ...(props.blobNoncurrentVersionDays ? { noncurrentVersionDays: props.blobNoncurrentVersionDays } : {}),
    }).bucket;

    new CfnOutput(this, 'ShardTableNames', {
      description: 'Shard tables of the ring, in shard order',
      value: this.shardTables.map((table) => table.tableName).join(','),
    });
    new CfnOutput(this, 'ControlTableName', { value: this.controlTable.tableName });
    new CfnOutput(this, 'HintsTableName', { value: this.hintsTable.tableName });
    new CfnOutput(this, 'TxnTableName', { value: this.txnTable.tableName });
    new CfnOutput(this, 'FeedTableName', { value: this.feedTable.tableName });
    new CfnOutput(this, 'BlobBucketName', { value: this.blobBucket.bucketName });

    this.drBackup = props.drRole === 'backup' ? new DrBackupData(this, 'DrBackup', encrypted) : undefined;
    if (this.drBackup) {
      new CfnOutput(this, 'PendingTableName', { value: this.drBackup.pendingTable.tableName });
      new CfnOutput(this, 'KeyQueueUrl', {
        description: 'The FIFO queue the primary sends key messages to',
        value: this.drBackup.keyQueue.queueUrl,
      });
      new CfnOutput(this, 'KeyDeadLetterQueueUrl', {
        description: 'Key messages the applier gave up on (alarmed): their keys are unknown to this region',
        value: this.drBackup.keyDeadLetters.queueUrl,
      });
    }
  }
}
