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
import { startWithStack } from './resource-stack';
import type { TableWrites } from './table-writes';

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
  /**
   * The writes this process makes to the tables: with them, a stream shard nothing wrote since its last empty
   * poll waits for the next write, up to {@link quietPollMs}, instead of polling at Lambda's pace.
   */
  writes?: TableWrites;
}

/**
 * Poll interval of an idle stream shard, as Lambda's event source mapping (about four polls a second). A
 * caller waiting for {@link RunningStreamPoller.caughtUp} wakes the idle shards at once, so a test or a
 * benchmark that waits for replication does not pay the interval.
 */
const idlePollMs = 250;
/**
 * Quiet streams: the longest an idle stream shard waits when no write of this process reached its table since
 * its last poll began (StreamPollerOptions.writes). Such a write wakes it at Lambda's pace, so what this process
 * writes is delivered as soon as before; a write from elsewhere (a test's fixture, a tool) is delivered within
 * this. Polls of idle streams were half of an idle local cloud's CPU (docs/testing.md, "Where the CPU goes").
 */
const quietPollMs = 1_000;
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
  /** The table whose stream this is. */
  table: string;
  shardId: string;
  iterator?: string;
  /** Last sequence number handed to the handler successfully. */
  checkpoint?: string;
  closed: boolean;
  /** Read from past its newest record until it has a checkpoint (StreamPollerOptions.startAt). */
  latest?: true;
}

interface Waiter {
  pending: Set<string>;
  resolve: () => void;
}

/** The stream shards of some tables, each read by its own loop, and the loop that discovers new shards. */
class ShardReaders {
  readonly #options: StreamPollerOptions;
  readonly #streams: DynamoDBStreamsClient;
  /** Each stream's table, by stream ARN. */
  readonly #tablesByStream: ReadonlyMap<string, string>;
  readonly #checkpoints: Record<string, string>;
  readonly #cursors = new Map<string, ShardCursor>();
  readonly #running = new Map<string, Promise<void>>();
  /** The wake-ups of the shards sleeping after an empty poll. */
  readonly #idleSleepers = new Set<() => void>();
  #waiters: Waiter[] = [];
  #checkpointWrite = Promise.resolve();
  #supervisor = Promise.resolve();
  #stopped = false;

  constructor(
    options: StreamPollerOptions,
    streams: DynamoDBStreamsClient,
    tablesByStream: ReadonlyMap<string, string>,
    checkpoints: Record<string, string>,
  ) {
    this.#options = options;
    this.#streams = streams;
    this.#tablesByStream = tablesByStream;
    this.#checkpoints = checkpoints;
  }

  /** Finds the shards there now (read from where `startAt` says), then starts reading them and looking for more. */
  async start(): Promise<void> {
    await this.#discoverShards(true);
    this.#supervisor = this.#superviseShards();
  }

  caughtUp(): Promise<void> {
    return new Promise<void>((resolve) => {
      const pending = new Set([...this.#cursors].filter(([, cursor]) => !cursor.closed).map(([id]) => id));
      if (pending.size === 0) resolve();
      else {
        this.#waiters.push({ pending, resolve });
        this.#wakeIdleShards();
      }
    });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wakeIdleShards();
    await this.#supervisor;
    await Promise.all(this.#running.values());
    await this.#checkpointWrite;
    for (const waiter of this.#waiters) waiter.resolve();
  }

  // Read through a method where an await separates the read from the last check: stop() flips it meanwhile.
  #isStopped(): boolean {
    return this.#stopped;
  }

  /**
   * The wait after an empty poll: Lambda's pace, or, when nothing this process wrote reached the table since
   * `generationBefore` (read before the poll), until the next such write or {@link quietPollMs}.
   */
  #idleSleep(table: string, generationBefore: number): Promise<void> {
    const { writes } = this.#options;
    return new Promise<void>((resolve) => {
      let quietTimer: NodeJS.Timeout | undefined;
      let stopListening: (() => void) | undefined;
      const wake = () => {
        clearTimeout(paceTimer);
        clearTimeout(quietTimer);
        stopListening?.();
        this.#idleSleepers.delete(wake);
        resolve();
      };
      const paceTimer = setTimeout(() => {
        if (!writes || writes.generationOf(table) !== generationBefore) {
          wake();
          return;
        }
        stopListening = writes.onNextWrite(table, wake);
        quietTimer = setTimeout(wake, quietPollMs - idlePollMs);
      }, idlePollMs);
      this.#idleSleepers.add(wake);
    });
  }

  #wakeIdleShards(): void {
    for (const wake of [...this.#idleSleepers]) wake();
  }

  async #discoverShards(atStart = false): Promise<void> {
    for (const [streamArn, table] of this.#tablesByStream) {
      let start: string | undefined;
      do {
        const { StreamDescription } = await this.#streams.send(
          new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: start }),
        );
        for (const shard of StreamDescription?.Shards ?? []) {
          const id = `${streamArn}|${shard.ShardId}`;
          if (!this.#cursors.has(id)) {
            const checkpoint = this.#checkpoints[id];
            const latest = atStart && this.#options.startAt === 'latest' && !checkpoint;
            this.#cursors.set(id, {
              streamArn,
              table,
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

  async #iteratorOf(cursor: ShardCursor): Promise<string | undefined> {
    const { ShardIterator } = await this.#streams.send(
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

  #saveCheckpoints(): void {
    for (const [id, cursor] of this.#cursors) if (cursor.checkpoint) this.#checkpoints[id] = cursor.checkpoint;
    const text = JSON.stringify(this.#checkpoints);
    const { checkpointFile, log } = this.#options;
    const temporary = `${checkpointFile}.tmp`;
    this.#checkpointWrite = this.#checkpointWrite
      .then(() => writeFile(temporary, text))
      .then(() => rename(temporary, checkpointFile))
      .catch((error: unknown) => log?.(`stream checkpoint not saved: ${String(error)}`));
  }

  #settleWaiters(id: string): void {
    for (const waiter of this.#waiters) waiter.pending.delete(id);
    this.#waiters = this.#waiters.filter((waiter) => {
      if (waiter.pending.size > 0) return true;
      waiter.resolve();
      return false;
    });
  }

  /** Reads one batch of a shard; returns how many records it handed to the handler. */
  async #pollOnce(id: string, cursor: ShardCursor): Promise<number> {
    cursor.iterator ??= await this.#iteratorOf(cursor);
    if (!cursor.iterator) {
      cursor.closed = true;
      return 0;
    }
    const { Records = [], NextShardIterator } = await this.#streams.send(
      new GetRecordsCommand({ ShardIterator: cursor.iterator, Limit: this.#options.batchSize }),
    );
    if (Records.length === 0) {
      if (NextShardIterator) cursor.iterator = NextShardIterator;
      else {
        delete cursor.iterator;
        cursor.closed = true;
      }
      this.#settleWaiters(id);
      return 0;
    }
    const failedSequence = await this.#hand(Records, cursor.streamArn);
    if (failedSequence !== undefined) {
      // Retry from the failed record: everything before it succeeded and is checkpointed.
      const failedIndex = Records.findIndex((record) => record.dynamodb?.SequenceNumber === failedSequence);
      if (failedIndex > 0) cursor.checkpoint = Records[failedIndex - 1]!.dynamodb!.SequenceNumber!;
      delete cursor.iterator;
      this.#saveCheckpoints();
      throw new Error('batch failed');
    }
    cursor.checkpoint = Records[Records.length - 1]!.dynamodb!.SequenceNumber!;
    cursor.iterator = NextShardIterator;
    if (!NextShardIterator) cursor.closed = true;
    this.#saveCheckpoints();
    return Records.length;
  }

  /** Invokes the handler with a batch; the sequence number to retry from, undefined when all succeeded. */
  async #hand(records: StreamRecord[], streamArn: string): Promise<string | undefined> {
    const { handler, name = 'replicator', log } = this.#options;
    const event: DynamoDBStreamEvent = { Records: records.map((record) => lambdaRecordOf(record, streamArn)) };
    try {
      const response = await handler(event, lambdaContext(name));
      return response.batchItemFailures[0]?.itemIdentifier;
    } catch (error) {
      log?.(`${name} failed; retrying the batch: ${error instanceof Error ? error.message : String(error)}`);
      return records[0]!.dynamodb!.SequenceNumber!;
    }
  }

  async #runShard(id: string, cursor: ShardCursor): Promise<void> {
    let backoff: number = retryBackoffMs.first;
    while (!this.#stopped && !cursor.closed) {
      try {
        const generationBefore = this.#options.writes?.generationOf(cursor.table) ?? 0;
        const handled = await this.#pollOnce(id, cursor);
        backoff = retryBackoffMs.first;
        if (handled === 0) await this.#idleSleep(cursor.table, generationBefore);
      } catch (error) {
        if (this.#isStopped()) return;
        if (!(error instanceof Error && error.message === 'batch failed')) {
          // DynamoDB Local answers the first GetRecords after a table's first write on an iterator taken
          // while it was empty with TrimmedDataAccessException (aws/aws-sdk-java#2923): nothing was
          // trimmed, a fresh TRIM_HORIZON iterator reads everything. Only other failures are worth a line.
          const emptyShardQuirk = (error as { name?: string }).name === 'TrimmedDataAccessException' && cursor.checkpoint === undefined;
          if (!emptyShardQuirk)
            this.#options.log?.(`stream poll of ${cursor.shardId} failed: ${error instanceof Error ? error.message : String(error)}`);
          delete cursor.iterator;
        }
        await sleep(backoff);
        backoff = Math.min(backoff * 2, retryBackoffMs.max);
      }
    }
    this.#settleWaiters(id);
  }

  async #superviseShards(): Promise<void> {
    while (!this.#stopped) {
      try {
        await this.#discoverShards();
        for (const [id, cursor] of this.#cursors) if (!this.#running.has(id)) this.#running.set(id, this.#runShard(id, cursor));
      } catch (error) {
        if (!this.#isStopped()) this.#options.log?.(`stream discovery failed: ${error instanceof Error ? error.message : String(error)}`);
      }
      await sleep(describeEveryMs, () => this.#stopped);
    }
  }
}

export async function startStreamPoller(options: StreamPollerOptions): Promise<RunningStreamPoller> {
  // The clients go once the readers have stopped, or when the start fails part-way.
  return startWithStack(options.log ?? (() => undefined), async (stack) => {
    const clientConfig = { region: localRegion, credentials: { ...localCredentials }, endpoint: options.endpoint };
    const dynamodb = stack.use(new DynamoDBClient(clientConfig), (client) => client.destroy());
    const streams = stack.use(new DynamoDBStreamsClient(clientConfig), (client) => client.destroy());
    const checkpoints: Record<string, string> = await readFile(options.checkpointFile, 'utf8').then(
      (text) => JSON.parse(text) as Record<string, string>,
      () => ({}),
    );
    const streamArns = await Promise.all(
      options.tables.map(async (table) => {
        const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: table }));
        if (!Table?.LatestStreamArn) throw new Error(`table ${table} has no stream`);
        return [Table.LatestStreamArn, table] as const;
      }),
    );
    const readers = new ShardReaders(options, streams, new Map(streamArns), checkpoints);
    await readers.start();
    stack.defer(() => readers.stop());
    return { caughtUp: () => readers.caughtUp(), stop: () => stack.disposeAll() };
  });
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
