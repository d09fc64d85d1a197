// Backup region: the key queue -> pending entries (docs/dr.md). Each key message is recorded as pending
// before anything else; a delete is applied at once; a value that came first is applied now.
import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { DrKeyMessageBody } from '../../schemas/dr-messages';
import { backupApplier, drStats } from '../wiring/dr';
import type { Wiring } from '../wiring/wiring';
import { flushMetrics } from '../http/metrics';

export function drKeyApplierHandler(wiring: Wiring) {
  const applier = backupApplier(wiring);
  const { logger } = wiring;

  return middy<SQSEvent, SQSBatchResponse>()
    .use(flushMetrics(drStats(wiring)))
    .handler(async (event) => {
      // In order, stopping at the first failure: a FIFO batch's later messages may be of the same key, and
      // SQS redelivers every message reported failed (the failed one and all after it), in order.
      for (const [index, record] of event.Records.entries()) {
        try {
          const parsed = DrKeyMessageBody.safeParse(JSON.parse(record.body));
          if (!parsed.success) throw new Error(`malformed key message: ${parsed.error.issues[0]?.message ?? '?'}`);
          await applier.receiveKey(parsed.data);
        } catch (error) {
          logger.warn('key message not applied; it is delivered again (after its retries, to the dead-letter queue)', {
            messageId: record.messageId,
            error,
          });
          return { batchItemFailures: event.Records.slice(index).map(({ messageId }) => ({ itemIdentifier: messageId })) };
        }
      }
      return { batchItemFailures: [] };
    });
}
