// Shard streams -> the backup region (docs/dr.md): each owner write's key message to the backup's FIFO
// queue, then its value to the backup's bucket. A failed record is reported so the stream retries from
// it; shipping a version twice is harmless (the queue deduplicates, the backup applies by version).
import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { ownerChangesOf } from '../adapters/dynamodb-stream';
import { ringSource } from '../wiring/control';
import { drShipper } from '../wiring/dr';
import type { Wiring } from '../wiring/wiring';

export function drShipperHandler(wiring: Wiring) {
  const shipper = drShipper(wiring);
  const ring = ringSource(wiring);
  const { logger } = wiring;

  return middy<DynamoDBStreamEvent, DynamoDBBatchResponse>().handler(async (event) => {
    const { changes, sequenceNumbers } = ownerChangesOf(event.Records);
    const result = await shipper.shipOwnerChanges(changes, await ring.current());
    if (result.firstFailedIndex === undefined) return { batchItemFailures: [] };
    logger.warn('DR shipping incomplete; the stream retries from the first failed record', { ...result });
    return { batchItemFailures: [{ itemIdentifier: sequenceNumbers[result.firstFailedIndex]! }] };
  });
}
