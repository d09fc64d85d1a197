// Feeds a handler from every shard table's stream (shard streams → replicator, docs/architecture.md): one event
// source mapping per shard, with failed batches recorded in a queue rather than dropped.
import { Duration } from 'aws-cdk-lib';
import { EventSourceMapping, StartingPosition, type IEventSourceDlq, type IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { queueEncryption } from './encryption-key';
import { acknowledge } from './nag';

/**
 * Attempts per batch before it goes to the failure queue. With bisectBatchOnError a failing batch is
 * split on each retry, so 10 attempts narrow a poison record down from a batch of 100 well before the
 * limit, while a shard stays blocked behind it for a bounded time only.
 */
export const streamRetryAttemptsMax = 10;
/**
 * Records older than this skip straight to the failure queue: replicas lag by at most about this much
 * from the stream path (streams keep records 24 h; anti-entropy covers anything older).
 */
export const streamRecordAgeMax = Duration.hours(1);
/** How long the failure queue keeps a record of a skipped batch: SQS's maximum, time for an operator to look. */
export const streamFailureRetention = Duration.days(14);

export interface ShardStreamsProps {
  /** The handler the streams invoke; it returns `{ batchItemFailures: [{ itemIdentifier: sequenceNumber }] }`. */
  target: IFunction;
  /** Stream ARN of each shard table, in shard order. */
  streamArns: readonly string[];
  /** Records per invocation (topology's replicationDefaults.streamBatchSize). */
  batchSize: number;
  /** The customer-managed key (CDK context `kmsKey=customer`); absent: SQS-managed encryption. */
  encryptionKey?: IKey;
}

export class ShardStreams extends Construct {
  readonly mappings: readonly EventSourceMapping[];
  /** Where Lambda records each batch it gave up on (shard, sequence-number range; not the items). */
  readonly failures: Queue;

  constructor(scope: Construct, id: string, props: ShardStreamsProps) {
    super(scope, id);

    // A stream batch that exhausts its retries or grows too old is skipped, not lost silently: Lambda
    // writes its shard and sequence-number range here. The replicas it missed are repaired by the
    // maintenance job's anti-entropy (versions compared range by range), so this queue is an alarm
    // signal and an audit trail, not a replay source.
    this.failures = new Queue(this, 'Failures', {
      ...queueEncryption(props.encryptionKey),
      enforceSSL: true,
      retentionPeriod: streamFailureRetention,
    });
    acknowledge(
      this.failures,
      'AwsSolutions-SQS3',
      'This queue is itself the dead-letter destination: the on-failure destination of the shard stream event source mappings (cdk-nag only recognises SQS redrive policies). A dead-letter queue of a dead-letter queue would hold nothing.',
    );

    // SqsDlq, but granting the queue only: with kmsKey=customer, SqsDlq would also grant its key with wildcard
    // actions, which the role already has, without wildcards, from keyUseStatement.
    const failures = this.failures;
    const onFailure: IEventSourceDlq = {
      bind: (_target, targetHandler) => {
        failures.grant(targetHandler, 'sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl');
        return { destination: failures.queueArn };
      },
    };
    this.mappings = props.streamArns.map(
      (eventSourceArn, shardId) =>
        new EventSourceMapping(this, `Shard${shardId}`, {
          target: props.target,
          eventSourceArn,
          // From the oldest record the stream holds: a new mapping misses no write.
          startingPosition: StartingPosition.TRIM_HORIZON,
          batchSize: props.batchSize,
          // Only the failed records are retried (the handler reports them by sequence number), and a
          // failing batch is split until the bad record is alone.
          reportBatchItemFailures: true,
          bisectBatchOnError: true,
          // One batch per shard at a time, in stream order: replicas see a key's versions in the order
          // the owner wrote them (the version guard makes order a saving, not a requirement).
          parallelizationFactor: 1,
          retryAttempts: streamRetryAttemptsMax,
          maxRecordAge: streamRecordAgeMax,
          onFailure,
        }),
    );
  }
}
