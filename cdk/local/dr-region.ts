// The local cloud's parts of cross-region disaster recovery (docs/dr.md): a backup region's key queue
// (ElasticMQ FIFO) and the deliveries that drive its appliers (the queue poller, the bucket's
// object-created events), and a primary region's shipper on the shard streams.
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Context, S3Event, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { drDefaults, drPrefixes, type Names } from '../../schemas/topology';
import { localCredentials, localRegion, type RunningEngines } from './engines';
import { lambdaContext } from './lambda-events';
import { startQueuePoller, type RunningQueuePoller } from './queue-poller';

/** The SQS endpoint of a region's engines, which every region in cross-region DR runs (engines/index.ts, `queues`). */
export function queuesOf(engines: RunningEngines): string {
  if (!engines.sqsEndpoint) throw new Error('a region in cross-region DR runs its queues: its engines have no SQS endpoint');
  return engines.sqsEndpoint;
}

/** The backup region's key queue, created if missing; its URL and ARN. */
export async function ensureKeyQueue(sqsEndpoint: string, names: Names): Promise<{ url: string; arn: string }> {
  const sqs = new SQSClient({ region: localRegion, credentials: { ...localCredentials }, endpoint: sqsEndpoint });
  try {
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({
        QueueName: names.drKeyQueue,
        // Deduplication by the id the sender sets (key and version), not by body.
        Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'false' },
      }),
    );
    if (!QueueUrl) throw new Error(`creating ${names.drKeyQueue} returned no URL`);
    return { url: QueueUrl, arn: `arn:aws:sqs:${localRegion}:000000000000:${names.drKeyQueue}` };
  } finally {
    sqs.destroy();
  }
}

export interface BackupDeliveries {
  /** Resolves once the key queue is empty and every value event delivered so far has been applied. */
  drained(): Promise<void>;
  stop(): Promise<void>;
}

/** Attempts of one value event, as Lambda's asynchronous invocation makes (the first and two retries). */
const valueEventAttempts = 3;
const valueEventBackoffMs = [200, 1_000] as const;

/**
 * Feeds a backup region's appliers: the key queue to the key applier (an SQS event source mapping) and
 * the values arriving in the bucket to the value applier (an S3 notification on the values' prefix).
 */
export function startBackupDeliveries(options: {
  engines: RunningEngines;
  queue: { url: string; arn: string };
  keyApplier: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;
  valueApplier: (event: S3Event, context: Context) => Promise<unknown>;
  log?: (line: string) => void;
}): BackupDeliveries {
  const keys: RunningQueuePoller = startQueuePoller({
    endpoint: queuesOf(options.engines),
    queueUrl: options.queue.url,
    queueArn: options.queue.arn,
    handler: options.keyApplier,
    name: 'drKeyApplier',
    batchSize: drDefaults.keyApplierBatchSize,
    ...(options.log ? { log: options.log } : {}),
  });
  const inFlight = new Set<Promise<void>>();
  const deliver = async (event: S3Event) => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await options.valueApplier(event, lambdaContext('drValueApplier'));
        return;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        if (attempt >= valueEventAttempts) {
          options.log?.(`drValueApplier failed ${attempt} times; the event is dropped (its key stays pending): ${reason}`);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, valueEventBackoffMs[attempt - 1]));
      }
    }
  };
  const unsubscribe = options.engines.onS3Event((event) => {
    const records = event.Records.filter(
      (record) => record.eventName.startsWith('ObjectCreated') && record.s3.object.key.startsWith(drPrefixes.values),
    );
    if (records.length === 0) return;
    const delivery = deliver({ Records: records }).finally(() => inFlight.delete(delivery));
    inFlight.add(delivery);
  });
  const valuesSettled = async () => {
    while (inFlight.size > 0) await Promise.all([...inFlight]);
  };
  return {
    drained: async () => {
      await keys.drained();
      await valuesSettled();
    },
    stop: async () => {
      unsubscribe();
      await keys.stop();
      await valuesSettled();
    },
  };
}
