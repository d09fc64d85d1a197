// Shard streams -> replicas and the change feed: copies each owner write to the key's other replicas (version-guarded)
// and appends it to its namespace's feed (docs/watch.md), the feed riding on this consumer because a stream shard
// takes two readers at most (the DR shipper is the other). A failed record is reported so the stream retries from
// it; applying a version twice is harmless, and appending it twice is a repeated delivery the feed allows.
import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { feedChangesOf, ownerChangesOf } from '../adapters/dynamodb-stream';
import { isReplicable, type ReplicationService } from '../core/replication';
import type { StreamOwnership } from '../core/stream-ownership';
import type { FeedWriter } from '../core/watch';
import type { MetricsSink } from '../http/metrics';

export interface ReplicatorDeps {
  replication: ReplicationService;
  feed: FeedWriter;
  /** Which writes are in their key's history: a former owner's write refused to its client is copied nowhere. */
  ownership: StreamOwnership;
  /** The replication metrics, flushed after each batch. */
  stats: MetricsSink;
  logger: Logger;
}

export function replicatorHandler({ replication, feed, ownership, stats, logger }: ReplicatorDeps) {
  return middy<DynamoDBStreamEvent, DynamoDBBatchResponse>().handler(async (event) => {
    const owned = ownerChangesOf(event.Records);
    const fed = feedChangesOf(event.Records);
    const [replicated, appended] = await Promise.all([
      ownership.weigh(owned.changes, isReplicable).then((weighing) => replication.applyOwnerChanges(owned.changes, weighing)),
      feed.append(fed.changes),
    ]);
    stats.publish();
    const failed = [
      replicated.firstFailedIndex === undefined ? undefined : owned.sequenceNumbers[replicated.firstFailedIndex],
      appended.firstFailedIndex === undefined ? undefined : fed.sequenceNumbers[appended.firstFailedIndex],
    ].filter((sequenceNumber): sequenceNumber is string => sequenceNumber !== undefined);
    if (failed.length === 0) return { batchItemFailures: [] };
    // The stream retries from the earliest record either part could not finish.
    const order = new Map(event.Records.map((record, index) => [record.dynamodb?.SequenceNumber ?? '', index]));
    const first = failed.reduce((earliest, candidate) => ((order.get(candidate) ?? 0) < (order.get(earliest) ?? 0) ? candidate : earliest));
    // A change of a fenced range is weighed once the fence lifts (StreamOwnership): expected during every cut-over and
    // failover, so not a warning unless something else failed.
    const onlyAwaitingFence =
      (replicated.firstFailedIndex === undefined || replicated.awaitingFence === true) &&
      (appended.firstFailedIndex === undefined || appended.awaitingFence === true);
    logger[onlyAwaitingFence ? 'debug' : 'warn'](
      onlyAwaitingFence
        ? 'a change waits for a fence to lift; the stream retries from the first change there'
        : 'replication or feed incomplete; the stream retries from the first failed record',
      { replication: replicated, feed: appended },
    );
    return { batchItemFailures: [{ itemIdentifier: first }] };
  });
}
