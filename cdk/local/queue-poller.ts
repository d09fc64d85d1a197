// The local SQS event source mapping: long-polls one queue and invokes a handler with the SQSEvent Lambda
// would send. Messages the handler reports failed (batchItemFailures, or all of them when it throws)
// become visible again after a short backoff; the others are deleted, as the mapping does.
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { localCredentials, localRegion } from './engines';
import { lambdaContext } from './lambda-events';

type QueueHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

export interface QueuePollerOptions {
  endpoint: string;
  queueUrl: string;
  queueArn: string;
  handler: QueueHandler;
  /** The function's name, for its context and log lines. */
  name: string;
  /** Messages per invocation (a FIFO queue hands out at most 10). */
  batchSize: number;
  /**
   * Invocations at once, as the event source mapping scales out (default 4). A FIFO queue hands a
   * message group to one receiver at a time, so one key's messages still apply in order.
   */
  concurrency?: number;
  log?: (line: string) => void;
}

export interface RunningQueuePoller {
  stop(): Promise<void>;
  /** Resolves once the queue holds no message, visible or in flight, and no invocation is running. */
  drained(): Promise<void>;
}

/** Long-poll wait per receive: short, so stop() returns promptly. */
const waitTimeSeconds = 1;
/** Seconds a received message stays hidden while its invocation runs (the function's timeout stands in). */
const visibilityTimeoutSeconds = 30;
/** Seconds before a failed message is delivered again. */
const retryAfterSeconds = 1;
/** Pause after a failed receive (the engine stopping, a transient error). */
const receiveErrorPauseMs = 200;
const defaultConcurrency = 4;

/**
 * Invokes the handler with one batch, then deletes the messages it handled and makes the ones it failed
 * visible again after `retryAfterSeconds`.
 */
async function invoke(sqs: SQSClient, options: QueuePollerOptions, messages: Message[]): Promise<void> {
  const event: SQSEvent = { Records: messages.map((message) => recordOf(message, options.queueArn)) };
  let failedIds: Set<string>;
  try {
    const response = await options.handler(event, lambdaContext(options.name));
    failedIds = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
  } catch (error) {
    options.log?.(`${options.name} failed; its messages are delivered again: ${error instanceof Error ? error.message : String(error)}`);
    failedIds = new Set(messages.map((message) => message.MessageId!));
  }
  const done = messages.filter((message) => !failedIds.has(message.MessageId!));
  const failed = messages.filter((message) => failedIds.has(message.MessageId!));
  if (done.length) {
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: options.queueUrl,
        Entries: done.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle! })),
      }),
    );
  }
  if (failed.length) {
    await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: options.queueUrl,
        Entries: failed.map((message, index) => ({
          Id: String(index),
          ReceiptHandle: message.ReceiptHandle!,
          VisibilityTimeout: retryAfterSeconds,
        })),
      }),
    );
  }
}

/** Resolves once the queue holds no message, visible or in flight, and `inFlight()` is 0. */
async function drained(sqs: SQSClient, queueUrl: string, inFlight: () => number): Promise<void> {
  for (;;) {
    const { Attributes = {} } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    const waiting = Number(Attributes.ApproximateNumberOfMessages ?? 0) + Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0);
    if (waiting === 0 && inFlight() === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export function startQueuePoller(options: QueuePollerOptions): RunningQueuePoller {
  const sqs = new SQSClient({ region: localRegion, credentials: { ...localCredentials }, endpoint: options.endpoint });
  let stopped = false;
  let inFlight = 0;
  const isStopped = () => stopped;

  const poll = async () => {
    while (!isStopped()) {
      try {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: options.queueUrl,
            MaxNumberOfMessages: options.batchSize,
            WaitTimeSeconds: waitTimeSeconds,
            VisibilityTimeout: visibilityTimeoutSeconds,
            MessageSystemAttributeNames: ['All'],
          }),
        );
        if (Messages.length === 0) continue;
        inFlight += 1;
        try {
          await invoke(sqs, options, Messages);
        } finally {
          inFlight -= 1;
        }
      } catch (error) {
        if (isStopped()) break;
        options.log?.(`${options.name}: receive failed: ${error instanceof Error ? error.message : String(error)}`);
        await new Promise((resolve) => setTimeout(resolve, receiveErrorPauseMs));
      }
    }
  };
  const loop = Promise.all(Array.from({ length: options.concurrency ?? defaultConcurrency }, poll));

  return {
    drained: () => drained(sqs, options.queueUrl, () => inFlight),
    stop: async () => {
      stopped = true;
      await loop;
      sqs.destroy();
    },
  };
}

/** One message as the SQS event source mapping hands it to Lambda. */
function recordOf(message: Message, queueArn: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId!,
    receiptHandle: message.ReceiptHandle!,
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
      ...(attributes.MessageGroupId ? { MessageGroupId: attributes.MessageGroupId } : {}),
      ...(attributes.MessageDeduplicationId ? { MessageDeduplicationId: attributes.MessageDeduplicationId } : {}),
      ...(attributes.SequenceNumber ? { SequenceNumber: attributes.SequenceNumber } : {}),
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: localRegion,
  };
}
