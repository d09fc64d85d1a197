// The local event source mapping: polls each shard table's DynamoDB stream and invokes the replicator
// handler with the same DynamoDBStreamEvent Lambda would send, in order per stream shard. A failed
// batch (thrown error, or batchItemFailures) is retried from the failed record after a backoff, as
// the event source mapping does. Checkpoints are kept on disk so a restart resumes where it stopped.
import { readFile, rename, writeFile } from 'node:fs/promises';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { lambdaImageOf } from '../../lambdas/adapters/dynamodb-stream';
import { lambdaContext } from './lambda-events';
import { localCredentials, localRegion } from './engines';

type StreamHandler = (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse>;

export interface StreamPollerOptions {
  endpoint: string;
  tables: string[];
  handler: StreamHandler;
  batchSize: number;
  /** Where sequence-number checkpoints are kept. */
  checkpointFile: string;
  /** The function's name, for its context and log lines (default `replicator`). */
  name?: string;
  log?: (line: string) => void;
  /**
   * Where a stream shard with no checkpoint is read from, for the shards there at the start: its oldest
   * record (the default, as an event source mapping at TRIM_HORIZON), or past its newest (LATEST: what was
   * written before the start is not handed over; a benchmark that seeded every copy itself starts so).
   */
  startAt?: 'oldest' | 'latest';
}

/**
 * Poll interval of an idle stream shard, as Lambda's event source mapping (about four polls a second). A
 * caller waiting for {@link RunningStreamPoller.caughtUp} wakes the idle shards at once, so a test or a
 * benchmark that waits for replication does not pay the interval.
 */
const idlePollMs = 250;
/** Retry backoff after a failed batch: doubles from the first value up to the last. */
const retryBackoffMs = { first: 50, max: 2_000 } as const;
/** How often the stream's shard list is re-read to pick up new shards. */
const describeEveryMs = 5_000;

export interface RunningStreamPoller {
  stop(): Promise<void>;
  /** Resolves once every stream shard has been read up to its end at the time of the call. */
  caughtUp(): Promise<void>;
}

interface ShardCursor {
  streamArn: string;
  shardId: string;
  iterator?: string;
  /** Last sequence number handed to the handler successfully. */
  checkpoint?: string;
  closed: boolean;
  /** Read from past its newest record until it has a checkpoint (StreamPollerOptions.startAt). */
  latest?: true;
}

export async function startStreamPoller(options: StreamPollerOptions): Promise<RunningStreamPoller> {
  const clientConfig = { region: localRegion, credentials: { ...localCredentials }, endpoint: options.endpoint };
  const dynamodb = new DynamoDBClient(clientConfig);
  const streams = new DynamoDBStreamsClient(clientConfig);
  const checkpoints: Record<string, string> = await readFile(options.checkpointFile, 'utf8').then(
    (text) => JSON.parse(text) as Record<string, string>,
    () => ({}),
  );
  const cursors = new Map<string, ShardCursor>();
  let stopped = false;
  // Read through a function where an await separates the read from the last check: stop() flips it meanwhile.
  const isStopped = () => stopped;
  let waiters: Array<{ pending: Set<string>; resolve: () => void }> = [];
  let checkpointWrite = Promise.resolve();
  /** The wake-ups of the shards sleeping after an empty poll. */
  const idleSleepers = new Set<() => void>();
  const idleSleep = (): Promise<void> =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        idleSleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, idlePollMs);
      idleSleepers.add(wake);
    });
  const wakeIdleShards = () => {
    for (const wake of [...idleSleepers]) wake();
  };

  const streamArns = await Promise.all(
    options.tables.map(async (table) => {
      const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: table }));
      if (!Table?.LatestStreamArn) throw new Error(`table ${table} has no stream`);
      return Table.LatestStreamArn;
    }),
  );

  async function discoverShards(atStart = false): Promise<void> {
    for (const streamArn of streamArns) {
      let start: string | undefined;
      do {
        const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: start }));
        for (const shard of StreamDescription?.Shards ?? []) {
          const id = `${streamArn}|${shard.ShardId}`;
          if (!cursors.has(id)) {
            const checkpoint = checkpoints[id];
            const latest = atStart && options.startAt === 'latest' && !checkpoint;
            cursors.set(id, {
              streamArn,
              shardId: shard.ShardId!,
              closed: false,
              ...(checkpoint ? { checkpoint } : {}),
              ...(latest ? { latest: true as const } : {}),
            });
          }
        }
        start = StreamDescription?.LastEvaluatedShardId;
      } while (start);
    }
  }

  async function iteratorOf(cursor: ShardCursor): Promise<string | undefined> {
    const { ShardIterator } = await streams.send(
      new GetShardIteratorCommand({
        StreamArn: cursor.streamArn,
        ShardId: cursor.shardId,
        ...(cursor.checkpoint
          ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: cursor.checkpoint }
          : { ShardIteratorType: cursor.latest ? 'LATEST' : 'TRIM_HORIZON' }),
      }),
    );
    return ShardIterator;
  }

  function saveCheckpoints(): void {
    for (const [id, cursor] of cursors) if (cursor.checkpoint) checkpoints[id] = cursor.checkpoint;
    const text = JSON.stringify(checkpoints);
    const temporary = `${options.checkpointFile}.tmp`;
    checkpointWrite = checkpointWrite
      .then(() => writeFile(temporary, text))
      .then(() => rename(temporary, options.checkpointFile))
      .catch((error: unknown) => options.log?.(`stream checkpoint not saved: ${String(error)}`));
  }

  function settleWaiters(id: string): void {
    for (const waiter of waiters) waiter.pending.delete(id);
    waiters = waiters.filter((waiter) => {
      if (waiter.pending.size > 0) return true;
      waiter.resolve();
      return false;
    });
  }

  /** Reads one batch of a shard; returns how many records it handed to the handler. */
  async function pollOnce(id: string, cursor: ShardCursor): Promise<number> {
    cursor.iterator ??= await iteratorOf(cursor);
    if (!cursor.iterator) {
      cursor.closed = true;
      return 0;
    }
    const { Records = [], NextShardIterator } = await streams.send(
      new GetRecordsCommand({ ShardIterator: cursor.iterator, Limit: options.batchSize }),
    );
    if (Records.length === 0) {
      if (NextShardIterator) cursor.iterator = NextShardIterator;
      else {
        delete cursor.iterator;
        cursor.closed = true;
      }
      settleWaiters(id);
      return 0;
    }
    const event: DynamoDBStreamEvent = { Records: Records.map((record) => lambdaRecordOf(record, cursor.streamArn)) };
    let failedSequence: string | undefined;
    try {
      const response = await options.handler(event, lambdaContext(options.name ?? 'replicator'));
      failedSequence = response.batchItemFailures[0]?.itemIdentifier;
    } catch (error) {
      failedSequence = Records[0]!.dynamodb!.SequenceNumber!;
      options.log?.(
        `${options.name ?? 'replicator'} failed; retrying the batch: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (failedSequence !== undefined) {
      // Retry from the failed record: everything before it succeeded and is checkpointed.
      const failedIndex = Records.findIndex((record) => record.dynamodb?.SequenceNumber === failedSequence);
      if (failedIndex > 0) cursor.checkpoint = Records[failedIndex - 1]!.dynamodb!.SequenceNumber!;
      delete cursor.iterator;
      saveCheckpoints();
      throw new Error('batch failed');
    }
    cursor.checkpoint = Records[Records.length - 1]!.dynamodb!.SequenceNumber!;
    cursor.iterator = NextShardIterator;
    if (!NextShardIterator) cursor.closed = true;
    saveCheckpoints();
    return Records.length;
  }

  async function runShard(id: string, cursor: ShardCursor): Promise<void> {
    let backoff: number = retryBackoffMs.first;
    while (!stopped && !cursor.closed) {
      try {
        const handled = await pollOnce(id, cursor);
        backoff = retryBackoffMs.first;
        if (handled === 0) await idleSleep();
      } catch (error) {
        if (isStopped()) return;
        if (!(error instanceof Error && error.message === 'batch failed')) {
          // DynamoDB Local answers the first GetRecords after a table's first write on an iterator taken
          // while it was empty with TrimmedDataAccessException (aws/aws-sdk-java#2923): nothing was
          // trimmed, a fresh TRIM_HORIZON iterator reads everything. Only other failures are worth a line.
          const emptyShardQuirk = (error as { name?: string }).name === 'TrimmedDataAccessException' && cursor.checkpoint === undefined;
          if (!emptyShardQuirk)
            options.log?.(`stream poll of ${cursor.shardId} failed: ${error instanceof Error ? error.message : String(error)}`);
          delete cursor.iterator;
        }
        await sleep(backoff);
        backoff = Math.min(backoff * 2, retryBackoffMs.max);
      }
    }
    settleWaiters(id);
  }

  const running = new Map<string, Promise<void>>();
  async function superviseShards(): Promise<void> {
    while (!stopped) {
      try {
        await discoverShards();
        for (const [id, cursor] of cursors) if (!running.has(id)) running.set(id, runShard(id, cursor));
      } catch (error) {
        if (!isStopped()) options.log?.(`stream discovery failed: ${error instanceof Error ? error.message : String(error)}`);
      }
      await sleep(describeEveryMs, () => stopped);
    }
  }
  await discoverShards(true);
  const supervisor = superviseShards();

  return {
    caughtUp: () =>
      new Promise<void>((resolve) => {
        const pending = new Set([...cursors].filter(([, cursor]) => !cursor.closed).map(([id]) => id));
        if (pending.size === 0) resolve();
        else {
          waiters.push({ pending, resolve });
          wakeIdleShards();
        }
      }),
    stop: async () => {
      stopped = true;
      wakeIdleShards();
      await supervisor;
      await Promise.all(running.values());
      await checkpointWrite;
      for (const waiter of waiters) waiter.resolve();
      dynamodb.destroy();
      streams.destroy();
    },
  };
}

/** The record as Lambda delivers it; the images keep DynamoDB's attribute-value form. */
function lambdaRecordOf(record: StreamRecord, streamArn: string): DynamoDBRecord {
  const data = record.dynamodb!;
  return {
    eventID: record.eventID!,
    eventName: record.eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: localRegion,
    eventSourceARN: streamArn,
    dynamodb: {
      // As Lambda delivers them: JSON, binary attributes base64-encoded.
      ...(data.Keys ? { Keys: lambdaImageOf(data.Keys) } : {}),
      ...(data.NewImage ? { NewImage: lambdaImageOf(data.NewImage) } : {}),
      ...(data.OldImage ? { OldImage: lambdaImageOf(data.OldImage) } : {}),
      SequenceNumber: data.SequenceNumber!,
      ...(data.SizeBytes === undefined ? {} : { SizeBytes: data.SizeBytes }),
      StreamViewType: data.StreamViewType,
      ...(data.ApproximateCreationDateTime ? { ApproximateCreationDateTime: data.ApproximateCreationDateTime.getTime() / 1000 } : {}),
    },
  };
}

/** Sleeps `ms`, waking early (checked every 100 ms) once `until` holds. */
async function sleep(ms: number, until?: () => boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (until?.()) return;
    await new Promise((resolve) => setTimeout(resolve, Math.min(100, deadline - Date.now())));
  }
}
