// Shard streams -> the backup region (docs/dr.md): each owner write's key message to the backup's FIFO
// queue, then its value to the backup's bucket. A failed record is reported so the stream retries from
// it; shipping a version twice is harmless (the queue deduplicates, the backup applies by version).
import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { ownerChangesOf } from '../adapters/dynamodb-stream';
import type { DrShipper } from '../core/dr-shipper';
import { isReplicable } from '../core/replication';
import type { StreamOwnership } from '../core/stream-ownership';

export interface DrShipperDeps {
  shipper: DrShipper;
  /** Which writes are in their key's history: a former owner's write refused to its client is never shipped. */
  ownership: StreamOwnership;
  logger: Logger;
}

export function drShipperHandler({ shipper, ownership, logger }: DrShipperDeps) {
  return middy<DynamoDBStreamEvent, DynamoDBBatchResponse>().handler(async (event) => {
    const { changes, sequenceNumbers } = ownerChangesOf(event.Records);
    const result = await shipper.shipOwnerChanges(changes, await ownership.weigh(changes, isReplicable));
    if (result.firstFailedIndex === undefined) return { batchItemFailures: [] };
    // A change of a fenced range is weighed once the fence lifts: expected during every cut-over and failover.
    if (result.awaitingFence)
      logger.debug('DR shipping waits for a fence to lift; the stream retries from the first change there', { ...result });
    else logger.warn('DR shipping incomplete; the stream retries from the first failed record', { ...result });
    return { batchItemFailures: [{ itemIdentifier: sequenceNumbers[result.firstFailedIndex]! }] };
  });
}
