// Shard streams -> replicas: copies each owner write to the key's other replicas (version-guarded).
// A failed record is reported so the stream retries from it; applying a version twice is harmless.
import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { ownerChangesOf } from '../adapters/dynamodb-stream';
import { ringSource } from '../wiring/control';
import { replicationStats } from '../wiring/data';
import { replicationService } from '../wiring/services';
import type { Wiring } from '../wiring/wiring';

export function replicatorHandler(wiring: Wiring) {
  const replication = replicationService(wiring);
  const ring = ringSource(wiring);
  const stats = replicationStats(wiring);
  const { logger } = wiring;

  return middy<DynamoDBStreamEvent, DynamoDBBatchResponse>().handler(async (event) => {
    const { changes, sequenceNumbers } = ownerChangesOf(event.Records);
    const result = await replication.applyOwnerChanges(changes, await ring.current());
    stats.publish();
    if (result.firstFailedIndex === undefined) return { batchItemFailures: [] };
    logger.warn('replication incomplete; the stream retries from the first failed record', { ...result });
    return { batchItemFailures: [{ itemIdentifier: sequenceNumbers[result.firstFailedIndex]! }] };
  });
}
