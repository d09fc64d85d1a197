// `npm run bench:copy-shape`: how close a backfill's request shape alone comes to raw BatchWriteItem on an
// idle DynamoDB Local, and what reading the copies back from the stream costs (docs/benchmarks.md,
// "Rebalancing": what stands in the way of the move rate).
//
// A source table of the shard schema is seeded with BENCH_SHAPE_SOURCE_ITEMS items of 1 KiB. Then, round
// by round, each shape writes BENCH_SHAPE_ITEMS items into a fresh table of the shard schema:
// - raw: BatchWriteItem of 25 items, 8 at once (the move rate's baseline in bench:rebalance);
// - copy, batches of N: the backfill's shape without the rest of the cloud. Pages of pageSize items are read
//   from the source by consistent BatchGetItem of 100, the next page while this one is written, and
//   written N items a request, all through one client with 2 requests in flight (rebalanceDefaults);
// - the same with the written table's stream read back meanwhile (GetRecords of 100, as the local stream
//   poller does for the replicator), which the move's copies cost on this engine and not on DynamoDB.
// Reported per shape: items/s per round and the median's ratio to raw's median.
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import { BatchGetCommand, BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { performance } from 'node:perf_hooks';
import * as z from 'zod';
import { shardTableInput } from '../cdk/local/provision';
import { partitionKeyOf } from '../lambdas/adapters/dynamodb-item-codec';
import { forAllBounded } from '../lambdas/core/bounded';
import { boundRequestsInFlight } from '../lambdas/wiring/clients';
import { rebalanceDefaults } from '../schemas/topology';
import {
  benchLabelSetting,
  commonSettingsShape,
  type EngineClientOptions,
  runBench,
  startWatchdog,
  withBareDynamoDbLocal,
  writeResults,
} from './environment';
import { shardItemOf } from './shard-items';
import { percentile } from './measure';

const settings = z
  .object({
    ...commonSettingsShape,
    BENCH_SHAPE_SOURCE_ITEMS: z.coerce.number().int().min(2_000).max(200_000).default(30_000),
    BENCH_SHAPE_ITEMS: z.coerce.number().int().min(1_000).max(100_000).default(8_000),
    BENCH_SHAPE_ROUNDS: z.coerce.number().int().min(1).max(10).default(3),
    BENCH_LABEL: benchLabelSetting,
  })
  .parse(process.env);

const namespace = 'shape';
const pageItems = rebalanceDefaults.pageSize;
const readItemsPerRequest = 100;

const itemOf = (n: number) => shardItemOf(namespace, n);

async function main(): Promise<void> {
  startWatchdog(settings.BENCH_TIMEOUT_SECONDS, 'copy-shape');
  await withBareDynamoDbLocal(settings.RINGSTORE_VENDOR_DIR, measureShapes);
}

/** Every shape in rounds on the engine at `options`, against raw BatchWriteItem in the same rounds. */
async function measureShapes(options: EngineClientOptions): Promise<void> {
  const raw = new DynamoDBClient(options);
  const streams = new DynamoDBStreamsClient(options);
  const seeder = DynamoDBDocumentClient.from(raw);
  const writeBatches = async (
    client: DynamoDBDocumentClient,
    table: string,
    items: Array<Record<string, unknown>>,
    size: number,
    atOnce: number,
  ) => {
    const batches = Array.from({ length: Math.ceil(items.length / size) }, (_, at) => items.slice(at * size, (at + 1) * size));
    await forAllBounded(batches, atOnce, async (batch) => {
      await client.send(new BatchWriteCommand({ RequestItems: { [table]: batch.map((Item) => ({ PutRequest: { Item } })) } }));
    });
  };
  /** Reads `table`'s stream from its start until `done`, 100 records a request, as the local stream poller does. */
  const readStream = async (table: string, done: () => boolean) => {
    const arn = (await raw.send(new DescribeTableCommand({ TableName: table }))).Table!.LatestStreamArn!;
    const [shard] = (await streams.send(new DescribeStreamCommand({ StreamArn: arn }))).StreamDescription!.Shards!;
    const start = new GetShardIteratorCommand({ StreamArn: arn, ShardId: shard!.ShardId!, ShardIteratorType: 'TRIM_HORIZON' });
    let iterator = (await streams.send(start)).ShardIterator;
    while (iterator && !done()) {
      const { Records = [], NextShardIterator } = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 100 }));
      iterator = NextShardIterator;
      if (Records.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  try {
    await raw.send(new CreateTableCommand(shardTableInput('shape-source')));
    const sourceItems = Array.from({ length: settings.BENCH_SHAPE_SOURCE_ITEMS }, (_, n) => n);
    await forAllBounded(
      Array.from({ length: Math.ceil(sourceItems.length / 25) }, (_, at) => sourceItems.slice(at * 25, (at + 1) * 25)),
      8,
      async (batch) => {
        await seeder.send(
          new BatchWriteCommand({ RequestItems: { 'shape-source': batch.map((n) => ({ PutRequest: { Item: itemOf(n) } })) } }),
        );
      },
    );
    console.error(`seeded ${settings.BENCH_SHAPE_SOURCE_ITEMS} items`);
    let nextTable = 0;
    let readFrom = 0;
    const copy = (size: number, withStream: boolean) => async (table: string) => {
      const mover = DynamoDBDocumentClient.from(boundRequestsInFlight(new DynamoDBClient(options), rebalanceDefaults.requestsInFlight));
      const readPage = async (page: number) => {
        const items: Array<Record<string, unknown>> = [];
        for (let at = 0; at < pageItems; at += readItemsPerRequest) {
          const Keys = Array.from({ length: readItemsPerRequest }, (_, offset) => ({
            pk: partitionKeyOf(namespace, `k-${(readFrom + page * pageItems + at + offset) % settings.BENCH_SHAPE_SOURCE_ITEMS}`),
          }));
          const { Responses = {} } = await mover.send(
            new BatchGetCommand({ RequestItems: { 'shape-source': { Keys, ConsistentRead: true } } }),
          );
          items.push(...(Responses['shape-source'] ?? []));
        }
        return items;
      };
      let copied = false;
      const stream = withStream ? readStream(table, () => copied) : Promise.resolve();
      const pages = Math.ceil(settings.BENCH_SHAPE_ITEMS / pageItems);
      let reading = readPage(0);
      for (let page = 0; page < pages; page += 1) {
        const items = await reading;
        if (page + 1 < pages) reading = readPage(page + 1);
        await writeBatches(mover, table, items, size, 4);
      }
      copied = true;
      await stream;
      readFrom += pages * pageItems;
      mover.destroy();
    };
    const shapes: Array<{ name: string; run: (table: string) => Promise<void> }> = [
      {
        name: 'raw BatchWriteItem, 25 items, 8 at once',
        run: (table) =>
          writeBatches(
            seeder,
            table,
            Array.from({ length: settings.BENCH_SHAPE_ITEMS }, (_, n) => itemOf(1e7 + n)),
            25,
            8,
          ),
      },
      { name: 'copy, batches of 10', run: copy(10, false) },
      { name: 'copy, batches of 25', run: copy(25, false) },
      { name: 'copy, batches of 25, its stream read back', run: copy(25, true) },
    ];
    const perShape = new Map<string, number[]>();
    for (let round = 1; round <= settings.BENCH_SHAPE_ROUNDS; round += 1) {
      for (const shape of shapes) {
        const table = `shape-target-${nextTable++}`;
        await raw.send(new CreateTableCommand(shardTableInput(table)));
        const started = performance.now();
        await shape.run(table);
        const itemsPerSecond = (settings.BENCH_SHAPE_ITEMS * 1000) / (performance.now() - started);
        perShape.set(shape.name, [...(perShape.get(shape.name) ?? []), Math.round(itemsPerSecond)]);
        console.error(JSON.stringify({ round, shape: shape.name, itemsPerSecond: Math.round(itemsPerSecond) }));
      }
    }
    const median = (values: number[]) => percentile(Float64Array.from(values).sort(), 50);
    const rawMedian = median(perShape.get(shapes[0]!.name)!);
    const rows = shapes.map(({ name }) => ({
      shape: name,
      itemsPerSecond: perShape.get(name)!,
      medianRatioToRaw: Math.round((median(perShape.get(name)!) / rawMedian) * 100) / 100,
    }));
    console.log(JSON.stringify(rows, null, 2));
    await writeResults('copy-shape', settings, { rows });
  } finally {
    raw.destroy();
    streams.destroy();
  }
}

runBench(main);
