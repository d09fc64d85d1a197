// Shard streams -> the backup region (docs/dr.md): each owner write's key message to the backup's FIFO
// queue, then its value to the backup's bucket. A failed record is reported so the stream retries from
// it; shipping a version twice is harmless (the queue deduplicates, the backup applies by version).
import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { ownerChangesOf } from '../adapters/dynamodb-stream';
import type { DrShipper } from '../core/dr-shipper';
import type { RingSource } from '../core/ring-source';

export interface DrShipperDeps {
  shipper: DrShipper;
  ring: RingSource;
  logger: Logger;
}

export function drShipperHandler({ shipper, ring, logger }: DrShipperDeps) {
  return middy<DynamoDBStreamEvent, DynamoDBBatchResponse>().handler(async (event) => {
    const { changes, sequenceNumbers } = ownerChangesOf(event.Records);
    const result = await shipper.shipOwnerChanges(changes, await ring.current());
    if (result.firstFailedIndex === undefined) return { batchItemFailures: [] };
    logger.warn('DR shipping incomplete; the stream retries from the first failed record', { ...result });
    return { batchItemFailures: [{ itemIdentifier: sequenceNumbers[result.firstFailedIndex]! }] };
  });
}
