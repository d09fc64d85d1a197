// `npm run bench:engine-hold`: what one request of a rebalance's kinds holds DynamoDB Local for, and what a
// client's GetItem waits behind it (docs/benchmarks.md, "Rebalancing": why request size, not only the
// number in flight, sets the client p99 during a move).
//
// One shard table of the shard schema is seeded with BENCH_HOLD_KEYS items of 1 KiB. Then, kind by kind,
// a "mover" sends that kind of request back to back, one at a time, while a "client" sends a GetItem every
// 20 ms; reported per kind: the request's own latency (p50), the client's p50/p99 and its p99 as a ratio
// to the client alone (the first row, measured in the same run).
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, BatchWriteCommand, DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { performance } from 'node:perf_hooks';
import * as z from 'zod';
import { shardTableInput } from '../cdk/local/provision';
import { partitionKeyOf } from '../lambdas/adapters/dynamodb-item-codec';
import { forAllBounded } from '../lambdas/core/bounded';
import { shardSchema } from '../schemas/topology';
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
    BENCH_HOLD_KEYS: z.coerce.number().int().min(2_000).max(500_000).default(100_000),
    /** Seconds each kind of request runs under the client's GetItems. */
    BENCH_HOLD_SECONDS: z.coerce.number().int().min(2).max(120).default(10),
    BENCH_LABEL: benchLabelSetting,
  })
  .parse(process.env);

const table = 'hold-probe';
const namespace = 'probe';
const valueBytes = 1024;
const clientIntervalMs = 20;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (value: number) => Math.round(value * 100) / 100;

const itemOf = (n: number) => shardItemOf(namespace, n, valueBytes);

/** One request of each kind the move sends: the name says what it carries. */
function kinds(client: DynamoDBDocumentClient): Array<{ name: string; send: (n: number) => Promise<unknown> }> {
  const keys = (count: number, n: number) =>
    Array.from({ length: count }, (_, at) => ({ pk: partitionKeyOf(namespace, `k-${(n * count + at) % settings.BENCH_HOLD_KEYS}`) }));
  // A token bucket holds 1/256 of the keys (ring.ts tokenBucket): a range query reads at most that many.
  const bucketOf = (n: number) => n % 256;
  const tokenQuery = (limit: number, n: number) =>
    client.send(
      new QueryCommand({
        TableName: table,
        IndexName: shardSchema.tokenIndex.name,
        KeyConditionExpression: '#b = :b',
        ExpressionAttributeNames: { '#b': 'tb' },
        ExpressionAttributeValues: { ':b': bucketOf(n) },
        Limit: limit,
      }),
    );
  const batchWrite = (count: number, n: number) =>
    client.send(
      new BatchWriteCommand({
        RequestItems: {
          [table]: Array.from({ length: count }, (_, at) => ({
            PutRequest: { Item: itemOf((n * count + at) % settings.BENCH_HOLD_KEYS) },
          })),
        },
      }),
    );
  const batchGet = (count: number, n: number) =>
    client.send(new BatchGetCommand({ RequestItems: { [table]: { Keys: keys(count, n), ConsistentRead: true } } }));
  return [
    { name: 'none (the client alone)', send: () => sleep(clientIntervalMs) },
    { name: 'token-index query, 50 keys', send: (n) => tokenQuery(50, n) },
    { name: 'token-index query, 100 keys', send: (n) => tokenQuery(100, n) },
    { name: 'token-index query, 200 keys', send: (n) => tokenQuery(200, n) },
    { name: `token-index query, a whole bucket (${Math.round(settings.BENCH_HOLD_KEYS / 256)} keys)`, send: (n) => tokenQuery(1_000, n) },
    { name: 'BatchGetItem, 25 items', send: (n) => batchGet(25, n) },
    { name: 'BatchGetItem, 100 items', send: (n) => batchGet(100, n) },
    { name: 'BatchWriteItem, 10 items', send: (n) => batchWrite(10, n) },
    { name: 'BatchWriteItem, 25 items', send: (n) => batchWrite(25, n) },
    // Whether the engine overlaps a read with a write: the pair against the write alone (the row above).
    { name: 'BatchWriteItem of 25 and BatchGetItem of 100 at once', send: (n) => Promise.all([batchWrite(25, n), batchGet(100, n)]) },
    {
      name: 'BatchWriteItem of 25 and a token-index query of 100 at once',
      send: (n) => Promise.all([batchWrite(25, n), tokenQuery(100, n)]),
    },
  ];
}

async function main(): Promise<void> {
  startWatchdog(settings.BENCH_TIMEOUT_SECONDS, 'engine-hold');
  await withBareDynamoDbLocal(settings.RINGSTORE_VENDOR_DIR, measureHolds);
}

/** Each kind of the move's requests back to back on the engine at `options`, beside a client's reads. */
async function measureHolds(options: EngineClientOptions): Promise<void> {
  const raw = new DynamoDBClient(options);
  const mover = DynamoDBDocumentClient.from(raw);
  const reader = DynamoDBDocumentClient.from(new DynamoDBClient(options));
  try {
    const input = shardTableInput(table);
    await raw.send(new CreateTableCommand({ ...input, StreamSpecification: undefined }));
    const batches = Array.from({ length: Math.ceil(settings.BENCH_HOLD_KEYS / 25) }, (_, at) => at);
    await forAllBounded(batches, 8, async (batch) => {
      const items = Array.from({ length: 25 }, (_, at) => batch * 25 + at).filter((n) => n < settings.BENCH_HOLD_KEYS);
      await mover.send(new BatchWriteCommand({ RequestItems: { [table]: items.map((n) => ({ PutRequest: { Item: itemOf(n) } })) } }));
    });
    console.error(`seeded ${settings.BENCH_HOLD_KEYS} items`);
    const rows: Array<Record<string, number | string>> = [];
    let aloneP99 = 0;
    for (const kind of kinds(mover)) {
      let running = true;
      const own: number[] = [];
      const waits: number[] = [];
      const moving = (async () => {
        for (let n = 0; running; n += 1) {
          const started = performance.now();
          await kind.send(n);
          own.push(performance.now() - started);
        }
      })();
      const until = performance.now() + settings.BENCH_HOLD_SECONDS * 1000;
      for (let n = 0; performance.now() < until; n += 1) {
        const started = performance.now();
        await reader.send(
          new GetCommand({ TableName: table, Key: { pk: partitionKeyOf(namespace, `k-${(n * 7919) % settings.BENCH_HOLD_KEYS}`) } }),
        );
        waits.push(performance.now() - started);
        await sleep(Math.max(0, clientIntervalMs - (performance.now() - started)));
      }
      running = false;
      await moving;
      const sortedOwn = Float64Array.from(own).sort();
      const sortedWaits = Float64Array.from(waits).sort();
      const clientP99 = percentile(sortedWaits, 99);
      if (rows.length === 0) aloneP99 = clientP99;
      const row = {
        kind: kind.name,
        requestP50Ms: round(percentile(sortedOwn, 50)),
        clientGets: waits.length,
        clientP50Ms: round(percentile(sortedWaits, 50)),
        clientP99Ms: round(clientP99),
        clientP99Ratio: round(clientP99 / aloneP99),
      };
      rows.push(row);
      console.error(JSON.stringify(row));
    }
    await writeResults('engine-hold', settings, { rows });
  } finally {
    mover.destroy();
    reader.destroy();
  }
}

runBench(main);
