// Backup region: the key queue -> pending entries (docs/dr.md). Each key message is recorded as pending
// before anything else; a delete is applied at once; a value that came first is applied now.
import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { DrQueueMessageBody } from '../../schemas/dr-messages';
import type { BackupApplier } from '../core/dr-applier';
import { flushMetrics, type MetricsSink } from '../http/metrics';

export interface DrKeyApplierDeps {
  applier: BackupApplier;
  /** The DR metrics (key messages' lag), flushed after every batch. */
  metrics: MetricsSink;
  logger: Logger;
}

export function drKeyApplierHandler({ applier, metrics, logger }: DrKeyApplierDeps) {
  const apply = async (record: SQSRecord) => {
    const parsed = DrQueueMessageBody.safeParse(JSON.parse(record.body));
    if (!parsed.success) throw new Error(`malformed key message: ${parsed.error.issues[0]?.message ?? '?'}`);
    await applier.receive(parsed.data);
  };

  return middy<SQSEvent, SQSBatchResponse>()
    .use(flushMetrics(metrics))
    .handler(async (event) => {
      // One key's messages (a message group) in order, different keys at once. A failure stops its group,
      // and every message from the first failure on is reported, as SQS FIFO asks: the ones of other
      // groups that were applied are delivered again, which the version guards make harmless.
      const groups = new Map<string, Array<{ index: number; record: SQSRecord }>>();
      event.Records.forEach((record, index) => {
        const group = record.attributes.MessageGroupId ?? record.messageId;
        groups.set(group, [...(groups.get(group) ?? []), { index, record }]);
      });
      let firstFailure = event.Records.length;
      await Promise.all(
        [...groups.values()].map(async (records) => {
          for (const { index, record } of records) {
            if (index > firstFailure) return;
            try {
              await apply(record);
            } catch (error) {
              logger.warn('key message not applied; it is delivered again (after its retries, to the dead-letter queue)', {
                messageId: record.messageId,
                error,
              });
              firstFailure = Math.min(firstFailure, index);
              return;
            }
          }
        }),
      );
      return { batchItemFailures: event.Records.slice(firstFailure).map(({ messageId }) => ({ itemIdentifier: messageId })) };
    });
}
