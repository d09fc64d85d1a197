// Shard streams -> replicas: copies each owner write to the key's other replicas (version-guarded).
// A failed record is reported so the stream retries from it; applying a version twice is harmless.
import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { ownerChangesOf } from '../adapters/dynamodb-stream';
import type { ReplicationService } from '../core/replication';
import type { RingSource } from '../core/ring-source';
import type { MetricsSink } from '../http/metrics';

export interface ReplicatorDeps {
  replication: ReplicationService;
  ring: RingSource;
  /** The replication metrics, flushed after each batch. */
  stats: MetricsSink;
  logger: Logger;
}

export function replicatorHandler({ replication, ring, stats, logger }: ReplicatorDeps) {
  return middy<DynamoDBStreamEvent, DynamoDBBatchResponse>().handler(async (event) => {
    const { changes, sequenceNumbers } = ownerChangesOf(event.Records);
    const result = await replication.applyOwnerChanges(changes, await ring.current());
    stats.publish();
    if (result.firstFailedIndex === undefined) return { batchItemFailures: [] };
    logger.warn('replication incomplete; the stream retries from the first failed record', { ...result });
    return { batchItemFailures: [{ itemIdentifier: sequenceNumbers[result.firstFailedIndex]! }] };
  });
}
