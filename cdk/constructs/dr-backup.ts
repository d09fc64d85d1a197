// Cross-region disaster recovery in AWS (docs/dr.md, "Deploying two regions with CDK"): the names both
// regions agree on, the backup region's stateful DR resources (pending table, key queue) and what drives
// its appliers (the key queue's event source mapping, the bucket's object-created events on dr/values/).
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { EventSourceMapping, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { Bucket, EventType } from 'aws-cdk-lib/aws-s3';
import { LambdaDestination } from 'aws-cdk-lib/aws-s3-notifications';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { DeduplicationScope, FifoThroughputLimit, Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { drDefaults, drPrefixes, handlers, namesFor, type Names } from '../../schemas/topology';
import { queueEncryption } from './encryption-key';
import { acknowledge } from './nag';
import { PendingTable } from './tables';

/**
 * Name of the backup region's blob bucket. S3 names are global and the backup is the same stage in the
 * same account, so the region tells it from the primary's (`<prefix>-blobs-<account>`). At most 61
 * characters with the longest stage (20), region (14) and account (12): S3 allows 63.
 */
export function backupBucketName(stage: string, account: string, region: string): string {
  return `${namesFor(stage).prefix}-dr-${region}-${account}`;
}

/** Physical names of a stage's backup region: the primary's, but for the (global) bucket name. */
export function backupNamesFor(stage: string, account: string, region: string): Names {
  return { ...namesFor(stage, account), blobBucket: backupBucketName(stage, account, region) };
}

/** The dead-letter queue of the key queue: a FIFO queue's must be FIFO too. */
export const keyDeadLetterQueueName = (names: Names): string => names.drKeyQueue.replace(/\.fifo$/, '-dlq.fifo');

/**
 * The backup's key queue and bucket and its control table as the primary addresses them: by names and the
 * backup's region, never by reference (CloudFormation cannot reference across regions), in `scope`'s
 * account and partition.
 */
export interface BackupLinkRefs {
  region: string;
  keyQueueArn: string;
  /** `https://sqs.<region>.<suffix>/<account>/<name>`: what SQS returns for the queue, known before it exists. */
  keyQueueUrl: string;
  bucketName: string;
  /** Objects the primary may put: the values' prefix of the backup's bucket, nothing else. */
  valueObjectsArn: string;
  controlTableArn: string;
  /** The pending table, whose write notices the primary's maintenance reads. */
  pendingTableArn: string;
}

export function backupLinkRefs(scope: Construct, stage: string, region: string): BackupLinkRefs {
  const stack = Stack.of(scope);
  const names = backupNamesFor(stage, stack.account, region);
  return {
    region,
    keyQueueArn: stack.formatArn({ service: 'sqs', region, resource: names.drKeyQueue }),
    keyQueueUrl: `https://sqs.${region}.${stack.urlSuffix}/${stack.account}/${names.drKeyQueue}`,
    bucketName: names.blobBucket,
    valueObjectsArn: `${stack.formatArn({ service: 's3', region: '', account: '', resource: names.blobBucket })}/${drPrefixes.values}*`,
    controlTableArn: stack.formatArn({ service: 'dynamodb', region, resource: 'table', resourceName: names.controlTable }),
    pendingTableArn: stack.formatArn({ service: 'dynamodb', region, resource: 'table', resourceName: names.pendingTable }),
  };
}

/** The backup region's key queue as its own stack addresses it (same account and region). */
export interface KeyQueueRefs {
  name: string;
  arn: string;
  url: string;
  deadLetterQueueName: string;
}

export function keyQueueRefs(scope: Construct, names: Names): KeyQueueRefs {
  const stack = Stack.of(scope);
  return {
    name: names.drKeyQueue,
    arn: stack.formatArn({ service: 'sqs', resource: names.drKeyQueue }),
    url: `https://sqs.${stack.region}.${stack.urlSuffix}/${stack.account}/${names.drKeyQueue}`,
    deadLetterQueueName: keyDeadLetterQueueName(names),
  };
}

/**
 * Receives of one key message before it goes to the dead-letter queue. The applier reports failed
 * messages one by one, and a message group waits behind its failing head, so a poison message must
 * leave within a few attempts; a transient failure (throttling, a shard outage) is retried this often.
 */
export const keyMaxReceiveCount = 5;
/** SQS's longest retention, on both queues: a backup whose applier is broken keeps its keys two weeks. */
export const keyRetention = Duration.days(14);
/**
 * Visibility timeout of the key queue: six times the applier's timeout, as AWS advises for an SQS event
 * source, so a message is not handed out again while an invocation may still be working on it.
 */
export const keyVisibilityTimeout = Duration.seconds(6 * handlers.drKeyApplier.timeoutSeconds);

export interface DrBackupDataProps {
  names: Names;
  /** The customer-managed key (CDK context `kmsKey=customer`); absent: SQS-managed encryption. */
  encryptionKey?: IKey;
}

/**
 * The backup region's stateful DR resources, in its data stack: the pending table and the key queue with
 * its dead-letter queue. Both are retained with the stack's other data.
 */
export class DrBackupData extends Construct {
  readonly pendingTable: Table;
  readonly keyQueue: Queue;
  readonly keyDeadLetters: Queue;

  constructor(scope: Construct, id: string, props: DrBackupDataProps) {
    super(scope, id);
    this.pendingTable = new PendingTable(this, 'PendingTable', props).table;

    const encrypted = { ...queueEncryption(props.encryptionKey), enforceSSL: true, retentionPeriod: keyRetention } as const;
    // Where a key message goes after keyMaxReceiveCount failed receives. Its key stays unknown to the backup
    // (no pending entry: a read serves the older version), so the alarm on it (DrAlarms) asks for a look.
    this.keyDeadLetters = new Queue(this, 'KeyDeadLetters', {
      queueName: keyDeadLetterQueueName(props.names),
      fifo: true,
      ...encrypted,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    acknowledge(
      this.keyDeadLetters,
      'AwsSolutions-SQS3',
      "This queue is itself the key queue's dead-letter queue (its redrive target); a dead-letter queue of a dead-letter queue would hold nothing.",
    );
    this.keyQueue = new Queue(this, 'KeyQueue', {
      queueName: props.names.drKeyQueue,
      fifo: true,
      // The primary sets the deduplication id (key and version): a resend of the same write is dropped, two
      // writes with the same body are not.
      contentBasedDeduplication: false,
      // High-throughput FIFO: order and deduplication per message group (a key), no queue-wide limit.
      deduplicationScope: DeduplicationScope.MESSAGE_GROUP,
      fifoThroughputLimit: FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
      visibilityTimeout: keyVisibilityTimeout,
      deadLetterQueue: { queue: this.keyDeadLetters, maxReceiveCount: keyMaxReceiveCount },
      ...encrypted,
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }
}

export interface DrBackupTriggersProps {
  names: Names;
  keyQueue: KeyQueueRefs;
  /** The handler whose spec says `drKeyQueue`. */
  keyApplier: IFunction;
  /** The handler whose spec says `drValueEvents`. */
  valueApplier: IFunction;
}

/**
 * What invokes the backup's appliers: the key queue (an event source mapping that retries only the
 * messages the applier reports failed) and the values arriving under dr/values/ in the bucket.
 */
export class DrBackupTriggers extends Construct {
  readonly keyMapping: EventSourceMapping;

  constructor(scope: Construct, id: string, props: DrBackupTriggersProps) {
    super(scope, id);
    // The queue lives in the data stack and is addressed by name (no export ties the stacks).
    this.keyMapping = new EventSourceMapping(this, 'KeyQueue', {
      target: props.keyApplier,
      eventSourceArn: props.keyQueue.arn,
      batchSize: drDefaults.keyApplierBatchSize,
      reportBatchItemFailures: true,
    });

    // The bucket too is the data stack's: notifications of an imported bucket are set by a custom resource
    // of this stack, which leaves the bucket's other notifications alone.
    const bucket = Bucket.fromBucketName(this, 'Bucket', props.names.blobBucket);
    bucket.addEventNotification(EventType.OBJECT_CREATED, new LambdaDestination(props.valueApplier), { prefix: drPrefixes.values });
    const notificationsHandler = Stack.of(this)
      .node.children.filter((child) => child.node.id.startsWith('BucketNotificationsHandler'))
      .at(0);
    if (!notificationsHandler)
      throw new Error("CDK's bucket notifications handler was not found: the acknowledgement below needs its path");
    acknowledge(
      notificationsHandler,
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      "CDK's own custom resource that sets the bucket's notification configuration at deploy time (invoked by CloudFormation only) uses the AWS managed AWSLambdaBasicExecutionRole for its logs; it touches no data.",
    );
  }
}
