// DrKeyChannel on the backup region's SQS FIFO queue: one message group per key (ordered per key,
// parallel across keys), deduplicated by key and version, sent in batches of at most ten.
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { drDefaults } from '../../schemas/topology';
import { RingstoreError } from '../core/errors';
import { deduplicationIdOf, messageGroupOf } from '../core/dr-messages';
import type { DrKeyChannel, DrQueueMessage } from '../ports';
import { awsCall } from './aws-errors';

export class SqsDrKeyChannel implements DrKeyChannel {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async send(messages: readonly DrQueueMessage[]): Promise<void> {
    const batches: DrQueueMessage[][] = [];
    for (let start = 0; start < messages.length; start += drDefaults.keyBatchMax) {
      batches.push(messages.slice(start, start + drDefaults.keyBatchMax));
    }
    await Promise.all(batches.map((batch) => this.sendBatch(batch)));
  }

  private async sendBatch(batch: readonly DrQueueMessage[]): Promise<void> {
    const response = await awsCall('key message send to the backup region', () =>
      this.client.send(
        new SendMessageBatchCommand({
          QueueUrl: this.queueUrl,
          Entries: batch.map((message, index) => ({
            Id: String(index),
            MessageBody: JSON.stringify(message),
            MessageGroupId: messageGroupOf(message),
            MessageDeduplicationId: deduplicationIdOf(message),
          })),
        }),
      ),
    );
    const failed = response.Failed ?? [];
    if (failed.length > 0) {
      // A partial batch: the sender retries it whole; the delivered ones are dropped as duplicates.
      throw new RingstoreError(
        'dr.backupUnreachable',
        `the backup region's key queue refused ${failed.length} of ${batch.length} messages: ${failed[0]?.Code ?? '?'} ${failed[0]?.Message ?? ''}`,
        { retryable: true },
      );
    }
  }
}
