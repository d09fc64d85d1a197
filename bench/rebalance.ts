// `npm run bench:rebalance`: how fast a rebalance moves keys, and what clients notice meanwhile
// (docs/rebalancing.md, docs/benchmarks.md "Rebalancing"). One local cloud (4 shards on the ring and a
// spare table, RF 3) is seeded with BENCH_REBALANCE_KEYS keys of 1 KiB by raw BatchWriteItem before its
// stream pollers start. Then, in the same run and on the same engine:
// 1. the copy's parts: raw BatchWriteItem items/s into a table of the shard schema, the copy's page
//    reads, its conditional PutItem writes and the cleanup's deletes, item by item, and from them the best
//    ratio a move can reach on this engine (breakdown.ceilingToCutOver, ceilingWholeJob);
// 2. adding the spare shard with no clients: the move's copy rate (item writes per second, as
//    BatchWriteItem's are counted) against the baseline: raw BatchWriteItem of baselineItems fresh items
//    into a fresh table of the shard schema, measured just before the move and again just after it, their
//    mean (one short measurement swung by a fifth from run to run);
// 3. a paced client load (PUT and GET, strong and eventual) without a move, then the same load while the
//    shard is removed again, then once more without a move: p50/p99 with the move against the phases
//    without it (pooled, BENCH_REBALANCE_STEADY_SECONDS each), and the requests that failed;
// 4. with BENCH_REBALANCE_APART=1 (the default), the spare shard added again with no clients, and removed
//    again under the same load, both with the rebalance's steps in a process of their own
//    (rebalance-apart.ts), as on AWS, where the step is a Lambda apart from the API's: `apart` in the
//    summary, the add against raw BatchWriteItem measured just before and after it, the removal against
//    the same steady phases. The local cloud plays every function in one process, so in step 3 a client's request
//    also waits for the move's work on the one event loop (`eventLoopDelayMs` measures how long).
// At the end every key's replicas are checked against the finished ring.
// Writes bench/results/rebalance-<BENCH_LABEL>.json and docs/benchmarks-rebalance.svg.
import { CreateTableCommand, DynamoDBClient, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { PutItemCommand } from 'dynamodb-toolbox';
import { spawn } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type IntervalHistogram, monitorEventLoopDelay, performance } from 'node:perf_hooks';
import * as z from 'zod';
import { localNamespace, startLocalCloud, type LocalCloud } from '../cdk/local/cloud';
import { localCredentials, localRegion } from '../cdk/local/engines/aws';
import { shardTableInput } from '../cdk/local/provision';
import { kvEntity, listingPartitionOf, partitionKeyOf, shardTable, toCopiedAttributes } from '../lambdas/adapters/dynamodb-item-codec';
import { forAllBounded } from '../lambdas/core/bounded';
import { Ring, tokenBucket, tokenOf } from '../lambdas/core/ring';
import type { RangeCursor, RebalanceChange, RingState, StoredItem } from '../lambdas/ports';
import { DynamoRangeStore } from '../lambdas/adapters/dynamodb-range-store';
import { ringStore } from '../lambdas/wiring/control';
import { rebalanceService } from '../lambdas/wiring/rebalance';
import { shardStore } from '../lambdas/wiring/data';
import { DynamoShardStore } from '../lambdas/adapters/dynamodb-shard-store';
import { DynamoRingStore } from '../lambdas/adapters/dynamodb-ring-store';
import { FailoverService } from '../lambdas/core/failover-service';
import { BackfillStage } from '../lambdas/core/rebalance-backfill';
import { CatchUpStage } from '../lambdas/core/rebalance-catch-up';
import { CleanupStage } from '../lambdas/core/rebalance-cleanup';
import { CutOverStage } from '../lambdas/core/rebalance-cutover';
import { RebalanceStep } from '../lambdas/core/rebalance-scheduler';
import type { RebalanceStatusView } from '../lambdas/core/rebalance-service';
import { startEngineSampler } from './engine-sampler';
import { percentile } from './measure';
import { toSvg } from './plot';
import {
  benchHome,
  benchRoot,
  codeVersion,
  commonSettingsShape,
  machineFacts,
  startWatchdog,
  benchDynamoDbJournal,
  benchResultsDir,
  benchPlotsDir,
} from './environment';

const settings = z
  .object({
    ...commonSettingsShape,
    BENCH_REBALANCE_KEYS: z.coerce.number().int().min(1_000).max(1_000_000).default(100_000),
    BENCH_REBALANCE_CLIENTS: z.coerce.number().int().min(1).max(32).default(4),
    /** The clients' paced load, requests per second over all of them (an open loop: a slow answer does not slow it). */
    BENCH_REBALANCE_LOAD_RPS: z.coerce.number().min(1).max(1_000).default(20),
    /** The rebalance's copy rate ceiling (keys/s; 0: none, the move as fast as it goes). */
    BENCH_REBALANCE_RATE: z.coerce.number().int().min(0).default(0),
    /**
     * How long the clients run without a move, for the baseline latencies: long enough that the steady p99
     * rests on about as many requests as the move's (a p99 of 400 requests is their 4th slowest).
     */
    BENCH_REBALANCE_STEADY_SECONDS: z.coerce.number().int().min(5).max(600).default(60),
    /**
     * 1: DynamoDB Local's SQLite thread is sampled through the baselines and the add (engine-sampler.ts),
     * `engineThread` in the summary. The samples pause the engine: a diagnosis, not a run of record.
     */
    BENCH_ENGINE_SAMPLES: z.enum(['0', '1']).default('0'),
    /** 0: phases 1 and 2 only (the move rate, no client load). */
    BENCH_REBALANCE_UNDER_LOAD: z.enum(['0', '1']).default('1'),
    /** 1: step 4 too, the removal under load again with the rebalance's steps in a process of their own. */
    BENCH_REBALANCE_APART: z.enum(['0', '1']).default('1'),
    BENCH_LABEL: z
      .string()
      .regex(/^[a-z0-9-]+$/)
      .default('latest'),
  })
  .parse(process.env);

const valueBytes = 1024;
/** Items the copy breakdown reads and writes (half by each design). */
const breakdownItems = 6_000;
/** Items of each raw BatchWriteItem baseline (before and after the add): about 15 s of writes each. */
const baselineItems = 10_000;
/** BatchWriteItem requests in flight at once while seeding (the baseline). */
const seedConcurrency = 8;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Sample {
  op: string;
  /** When the request was sent (performance.now()). */
  atMs: number;
  ms: number;
  status: number;
}

/** Writes items with raw BatchWriteItem, 25 a request, `seedConcurrency` at once; returns item writes per second. */
async function batchWrite(
  client: DynamoDBDocumentClient,
  writes: Array<{ table: string; item: Record<string, unknown> }>,
  what: string,
): Promise<number> {
  const batches: Array<typeof writes> = [];
  for (let start = 0; start < writes.length; start += 25) batches.push(writes.slice(start, start + 25));
  const started = performance.now();
  let done = 0;
  await forAllBounded(batches, seedConcurrency, async (batch) => {
    if (++done % 400 === 0) console.error(`${what}: ${done * 25} of ${writes.length} items`);
    let pending: Record<string, Array<{ PutRequest: { Item: Record<string, unknown> } }>> = {};
    for (const { table, item } of batch) (pending[table] ??= []).push({ PutRequest: { Item: item } });
    for (let attempt = 0; Object.keys(pending).length > 0; attempt += 1) {
      if (attempt > 0) await sleep(2 ** Math.min(attempt, 6) * 10);
      const { UnprocessedItems = {} } = await client.send(new BatchWriteCommand({ RequestItems: pending }));
      pending = UnprocessedItems as typeof pending;
    }
  });
  return (writes.length * 1000) / (performance.now() - started);
}

/** The stored form of a seeded key, as an owner (listed) or a replica holds it. */
function seededItem(n: number): StoredItem {
  const key = `rb-${n}`;
  const value = new Uint8Array(valueBytes).fill(n % 251);
  return {
    namespace: localNamespace,
    key,
    token: tokenOf(localNamespace, key),
    version: 1,
    contentType: 'application/octet-stream',
    size: valueBytes,
    sha256: '0'.repeat(64),
    tombstone: false,
    value,
    modifiedAtMs: Date.now(),
  };
}

function attributesOf(entity: ReturnType<typeof kvEntity>, item: StoredItem, listed: boolean): Record<string, unknown> {
  return entity
    .build(PutItemCommand)
    .item({
      pk: partitionKeyOf(item.namespace, item.key),
      tb: tokenBucket(item.token),
      ...(listed ? { lp: listingPartitionOf(item.namespace, item.token) } : {}),
      ...toCopiedAttributes(item),
    })
    .params().Item as Record<string, unknown>;
}

/**
 * Seeds every key on its owner (listed) and its replicas, before the stream pollers start (they then
 * start past these records, so nothing replays them). The owners' writes are the baseline: raw
 * BatchWriteItem into the shard tables (the same two indexes and stream), with nothing else running.
 */
async function seed(dynamodbEndpoint: string, state: RingState): Promise<{ baselineKeysPerSecond: number; replicaKeysPerSecond: number }> {
  const ring = new Ring(state);
  const entity = kvEntity(shardTable());
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: dynamodbEndpoint, region: localRegion, credentials: { ...localCredentials } }),
  );
  try {
    const owners: Array<{ table: string; item: Record<string, unknown> }> = [];
    const replicas: Array<{ table: string; item: Record<string, unknown> }> = [];
    for (let n = 0; n < settings.BENCH_REBALANCE_KEYS; n += 1) {
      const item = seededItem(n);
      const [owner, ...others] = ring.replicasOf(item.token);
      owners.push({ table: owner!.table, item: attributesOf(entity, item, true) });
      for (const replica of others) replicas.push({ table: replica.table, item: attributesOf(entity, item, false) });
    }
    // DynamoDB Local reads a stream's records one GetRecords at a time over its whole log, so a stream of
    // hundreds of thousands of seeded records would slow every later call: the seed is written with the
    // streams off, and they are turned on again empty (new streams, which the pollers start on).
    const tables = [...new Set(state.shards.map((shard) => shard.table))];
    await setStreams(dynamodbEndpoint, tables, false);
    const seedOwnersKeysPerSecond = await batchWrite(client, owners, 'owners');
    const replicaKeysPerSecond = await batchWrite(client, replicas, 'replicas');
    await setStreams(dynamodbEndpoint, tables, true);
    return { baselineKeysPerSecond: seedOwnersKeysPerSecond, replicaKeysPerSecond };
  } finally {
    client.destroy();
  }
}

async function setStreams(endpoint: string, tables: readonly string[], enabled: boolean): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: localRegion, credentials: { ...localCredentials } });
  try {
    for (const table of tables) {
      await client.send(
        new UpdateTableCommand({
          TableName: table,
          StreamSpecification: enabled ? { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' } : { StreamEnabled: false },
        }),
      );
    }
  } finally {
    client.destroy();
  }
}

/** Clients of a mixed load until `stop()`: a third writes, half of each strong; every answer and its latency recorded. */
function load(cloud: LocalCloud, samples: Sample[]): { stop(): Promise<void> } {
  let running = true;
  const intervalMs = (1000 * settings.BENCH_REBALANCE_CLIENTS) / settings.BENCH_REBALANCE_LOAD_RPS;
  const client = async (id: number) => {
    const firstMs = performance.now() + (intervalMs * id) / settings.BENCH_REBALANCE_CLIENTS;
    for (let n = 0; running; n += 1) {
      await sleep(Math.max(0, firstMs + n * intervalMs - performance.now()));
      const key = `rb-${(id * 7919 + n * 104_729) % settings.BENCH_REBALANCE_KEYS}`;
      const write = n % 3 === 0;
      const strong = n % 2 === 0;
      const consistency = strong ? 'strong' : 'eventual';
      const started = performance.now();
      let status: number;
      try {
        const response = await fetch(`${cloud.url}/v1/kv/${key}?consistency=${consistency}`, {
          method: write ? 'PUT' : 'GET',
          headers: { 'x-api-key': cloud.apiKey, ...(write ? { 'content-type': 'application/octet-stream' } : {}) },
          ...(write ? { body: new Uint8Array(valueBytes).fill(n % 251) } : {}),
          signal: AbortSignal.timeout(15_000),
        });
        await response.arrayBuffer();
        status = response.status;
      } catch {
        status = 0;
      }
      samples.push({ op: `${write ? 'PUT' : 'GET'} ${consistency}`, atMs: started, ms: performance.now() - started, status });
    }
  };
  const clients = Array.from({ length: settings.BENCH_REBALANCE_CLIENTS }, (_, id) => client(id));
  return {
    stop: async () => {
      running = false;
      await Promise.all(clients);
    },
  };
}

function latencies(samples: readonly Sample[]) {
  const byOp = new Map<string, number[]>();
  for (const sample of samples) {
    const values = byOp.get(sample.op) ?? [];
    values.push(sample.ms);
    byOp.set(sample.op, values);
  }
  const summary: Record<string, { count: number; p50: number; p99: number; failed: number }> = {};
  for (const [op, values] of [...byOp, ['all', samples.map((sample) => sample.ms)] as const]) {
    const sorted = Float64Array.from(values).sort();
    const failed = samples.filter((sample) => (op === 'all' || sample.op === op) && sample.status !== 200 && sample.status !== 404).length;
    summary[op] = { count: values.length, p50: round(percentile(sorted, 50)), p99: round(percentile(sorted, 99)), failed };
  }
  return summary;
}

const round = (value: number) => Math.round(value * 100) / 100;

/** The histograms' timer resolution (ms): each sample is the time between two of its ticks. */
const loopDelayResolutionMs = 10;

/** How late the event loop ran a timer since the histogram was last reset (ms: p50, p99, max), then resets it. */
function eventLoopDelayOf(histogram: IntervalHistogram): { p50: number; p99: number; max: number } {
  const ms = (ns: number) => round(Math.max(0, ns / 1e6 - loopDelayResolutionMs));
  const delay = { p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max) };
  histogram.reset();
  return delay;
}

/**
 * Where the slow requests of a move fall: per phase of the move (from the progress samples, each
 * second), the requests sent in it and those slower than twice the steady load's p99 (the target).
 */
function slowByPhase(samples: readonly Sample[], progress: readonly Point[], steadyP99: number) {
  const byPhase: Record<string, { requests: number; slow: number; slowestMs: number; slowByOp: Record<string, number> }> = {};
  for (const sample of samples) {
    const next = progress.find((point) => point.atMs >= sample.atMs);
    const phase = next ? next.phase : 'after';
    const entry = (byPhase[phase] ??= { requests: 0, slow: 0, slowestMs: 0, slowByOp: {} });
    entry.requests += 1;
    if (sample.ms > 2 * steadyP99) {
      entry.slow += 1;
      entry.slowByOp[sample.op] = (entry.slowByOp[sample.op] ?? 0) + 1;
    }
    entry.slowestMs = Math.max(entry.slowestMs, round(sample.ms));
  }
  return byPhase;
}

/** Every seeded key is held by exactly its replicas on the finished ring, at its latest version or newer. */
async function checkPlacement(cloud: LocalCloud): Promise<{ checked: number; misplaced: number; missing: number }> {
  const state = await ringStore(cloud.wiring).readRing();
  const ring = new Ring(state!);
  const shards = shardStore(cloud.wiring);
  let misplaced = 0;
  let missing = 0;
  let checked = 0;
  for (const range of ring.ranges()) {
    const holders = new Set(range.replicas);
    for (const shard of ring.shards) {
      const entries = await shards.versionsInRange(shard.table, range);
      if (holders.has(shard.id)) checked += entries.length;
      else misplaced += entries.length;
    }
    const owner = await shards.versionsInRange(ring.shard(range.owner).table, range);
    for (const replica of range.replicas.slice(1)) {
      const held = new Set((await shards.versionsInRange(ring.shard(replica).table, range)).map((entry) => entry.key));
      missing += owner.filter((entry) => !held.has(entry.key)).length;
    }
  }
  return { checked, misplaced, missing };
}

/**
 * Where a move's time goes: every call of the named methods (the service's stages and the ports they
 * use) is timed, summed per method. Calls in parallel overlap, so the sums are not a partition of the
 * wall time; the stages (copyPages, cutOver, finishAndClean) are sequential and are.
 */
function profileCalls(targets: ReadonlyArray<readonly [string, object, readonly string[]]>) {
  const totals = new Map<string, { calls: number; ms: number }>();
  for (const [owner, prototype, names] of targets) {
    const methods = prototype as Record<string, (...args: unknown[]) => unknown>;
    for (const name of names) {
      const original = methods[name];
      if (typeof original !== 'function') throw new Error(`${owner}.${name} is not a method`);
      methods[name] = async function (this: unknown, ...args: unknown[]) {
        const started = performance.now();
        try {
          return await original.apply(this, args);
        } finally {
          const total = totals.get(`${owner}.${name}`) ?? { calls: 0, ms: 0 };
          totals.set(`${owner}.${name}`, { calls: total.calls + 1, ms: total.ms + performance.now() - started });
        }
      };
    }
  }
  return {
    reset: () => totals.clear(),
    snapshot: () => Object.fromEntries([...totals].map(([name, { calls, ms }]) => [name, { calls, seconds: round(ms / 1000) }] as const)),
  };
}

// One name per method, as the results before the service was split into stages named them.
const profile = profileCalls([
  ['rebalance', RebalanceStep.prototype, ['moveRange']],
  ['rebalance', BackfillStage.prototype, ['copyPages']],
  ['rebalance', CatchUpStage.prototype, ['catchUp']],
  ['rebalance', CutOverStage.prototype, ['cutOver']],
  ['rebalance', CleanupStage.prototype, ['finishAndClean']],
  ['ranges', DynamoRangeStore.prototype, ['itemsInRange', 'backfillItems', 'copyItems', 'removeCopies']],
  ['shards', DynamoShardStore.prototype, ['versionsInRange']],
  ['rings', DynamoRingStore.prototype, ['publishRing']],
  ['transactions', FailoverService.prototype, ['findTransactions', 'applyCommitted']],
]);

/**
 * Every request the bench's process sends to the engine, counted and timed per command and table (shard
 * tables as `shard-N`): what shares DynamoDB Local with a move besides its copy (stream pollers, the
 * replicator, the control table). Calls overlap, so the seconds are summed waits, not engine time.
 */
function countRequests() {
  const totals = new Map<string, { calls: number; items: number; ms: number }>();
  const tableOf = (input: Record<string, unknown>): string => {
    const name =
      (input.TableName as string | undefined) ??
      Object.keys((input.RequestItems as object | undefined) ?? {})[0] ??
      (input.StreamArn as string | undefined)?.split('/')[1] ??
      (input.ShardIterator ? 'stream' : 'other');
    return name.replace(/^.*-(shard-\d+)$/, '$1').replace(/^ringstore-[a-z0-9]+-/, '');
  };
  const itemsOf = (input: Record<string, unknown>, output: unknown): number => {
    const requestItems = input.RequestItems as Record<string, unknown[] | { Keys: unknown[] }> | undefined;
    if (requestItems) {
      const first = Object.values(requestItems)[0];
      return Array.isArray(first) ? first.length : (first?.Keys.length ?? 0);
    }
    const records = (output as { Records?: unknown[]; Items?: unknown[] } | undefined) ?? {};
    return records.Records?.length ?? records.Items?.length ?? 1;
  };
  for (const prototype of [DynamoDBClient.prototype, DynamoDBDocumentClient.prototype, DynamoDBStreamsClient.prototype]) {
    const original = prototype.send as (command: { input: Record<string, unknown> }, ...rest: unknown[]) => Promise<unknown>;
    (prototype as { send: unknown }).send = async function (
      this: unknown,
      command: { input: Record<string, unknown> },
      ...rest: unknown[]
    ) {
      const started = performance.now();
      let output: unknown;
      try {
        output = await original.call(this, command, ...rest);
        return output;
      } finally {
        const name = `${command.constructor.name.replace(/Command$/, '')} ${tableOf(command.input)}`;
        const total = totals.get(name) ?? { calls: 0, items: 0, ms: 0 };
        totals.set(name, {
          calls: total.calls + 1,
          items: total.items + itemsOf(command.input, output),
          ms: total.ms + performance.now() - started,
        });
      }
    };
  }
  return {
    reset: () => totals.clear(),
    snapshot: () =>
      Object.fromEntries(
        [...totals]
          .sort(([, a], [, b]) => b.ms - a.ms)
          .map(([name, { calls, items, ms }]) => [name, { calls, items, seconds: round(ms / 1000) }] as const),
      ),
  };
}

const requests = countRequests();

interface Point {
  seconds: number;
  /** performance.now() of the sample. */
  atMs: number;
  keysCopied: number;
  rangesMoved: number;
  progress: number;
  /** What the move was doing: copying (backfill, catch-up), cutting over, or cleaning up. */
  phase: 'copy' | 'cut-overs' | 'cleanup';
}

/**
 * The copy (the backfill, with the catch-up and hand-over of ranges whose owner stays beside it, and the
 * catch-up left after it), the cut-overs (only ranges ready for one left: the fenced waves), the cleanup.
 */
const phaseOf = (status: RebalanceStatusView): Point['phase'] => {
  if (status.ranges.cleaned > 0 || status.ranges.moved === status.ranges.total) return 'cleanup';
  return status.job.ranges.every((range) => range.stage === 'cutover' || range.stage === 'moved') ? 'cut-overs' : 'copy';
};

/** The phase, with the copy split into the backfill (a range still planned) and the catch-up after it. */
const stageOf = (status: RebalanceStatusView): string => {
  const phase = phaseOf(status);
  if (phase !== 'copy') return phase;
  return status.job.ranges.some((range) => range.stage === 'planned') ? 'backfill' : 'catch-up';
};

/** Runs one rebalance through its workflow to the end, sampling its progress every second. */
async function runRebalance(
  cloud: LocalCloud,
  service: ReturnType<typeof rebalanceService>,
  change: RebalanceChange,
  id: string,
  rateKeysPerSecond: number,
  onStage: (stage: string) => void = () => undefined,
  where: 'in the cloud' | 'apart' = 'in the cloud',
): Promise<{ status: RebalanceStatusView; progress: Point[]; copyMs: number; movedMs: number }> {
  await service.start(change, { id, rateKeysPerSecond });
  const startedMs = performance.now();
  const apart = where === 'apart' ? stepsApart(cloud, id) : undefined;
  if (!apart) await cloud.wiring.rebalances!.start({ id, run: `${id}-1` });
  const progress: Point[] = [];
  let status = await service.status();
  onStage('backfill');
  // When every range had its cut-over (sampled each second): the keys are moved; the cleanup after it
  // removes the copies left behind.
  let movedMs: number | undefined;
  while (status && status.job.status === 'running') {
    const seconds = round((performance.now() - startedMs) / 1000);
    onStage(stageOf(status));
    if (movedMs === undefined && status.ranges.moved + status.ranges.cleaned === status.ranges.total) movedMs = seconds * 1000;
    progress.push({
      seconds,
      atMs: performance.now(),
      keysCopied: status.keysCopied,
      rangesMoved: status.ranges.moved + status.ranges.cleaned,
      progress: round(status.progress),
      phase: phaseOf(status),
    });
    if (Math.round(seconds) % 15 === 0)
      console.error(`${id}: ${status.ranges.moved + status.ranges.cleaned} of ${status.ranges.total} ranges, ${status.keysCopied} copies`);
    await sleep(1_000);
    status = await service.status();
  }
  await apart;
  if (status?.job.status !== 'done') throw new Error(`${id} ended ${status?.job.status}: ${status?.job.message ?? ''}`);
  const copyMs = Math.max(1, (status.job.finishedAtMs ?? Date.now()) - status.job.startedAtMs);
  progress.push({
    seconds: round(copyMs / 1000),
    atMs: performance.now(),
    keysCopied: status.keysCopied,
    rangesMoved: status.ranges.total,
    progress: 1,
    phase: 'cleanup',
  });
  return { status, progress, copyMs, movedMs: movedMs ?? copyMs };
}

/** Runs the steps of rebalance `id` in a process of their own (rebalance-apart.ts) until it is no longer running. */
function stepsApart(cloud: LocalCloud, id: string): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(benchRoot, 'bench', 'rebalance-apart.ts'), id], {
    env: { ...process.env, RINGSTORE_BENCH_CONFIG: JSON.stringify(cloud.wiring.config) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`the steps of ${id} apart ended with code ${code}`))));
  });
}

/** A client of the cloud's DynamoDB Local, with a fresh table of the shard schema named `table` created. */
async function withShardTable(cloud: LocalCloud, table: string): Promise<DynamoDBClient> {
  const client = new DynamoDBClient({
    endpoint: cloud.engines.dynamodbEndpoint,
    region: localRegion,
    credentials: { ...localCredentials },
  });
  await client.send(new CreateTableCommand(shardTableInput(table)));
  return client;
}

/**
 * Raw BatchWriteItem items/s on the running cloud (its stream pollers polling, as during the move):
 * baselineItems new keys of valueBytes into a fresh table of the shard schema, 25 a request,
 * seedConcurrency at once.
 */
async function rawBatchWriteRate(cloud: LocalCloud, table: string, firstKey: number): Promise<number> {
  const client = await withShardTable(cloud, table);
  try {
    const entity = kvEntity(shardTable());
    const writes = Array.from({ length: baselineItems }, (_, at) => ({
      table,
      item: attributesOf(entity, seededItem(firstKey + at), false),
    }));
    return await batchWrite(DynamoDBDocumentClient.from(client), writes, `baseline ${table}`);
  } finally {
    client.destroy();
  }
}

/**
 * What a copy costs, item by item, on this engine in this run: reading pages of a range (token index and
 * BatchGetItem), writing them with the copy's conditional PutItem (design A, what the rebalance uses) and
 * with unconditional BatchWriteItem (design B, which cannot guard versions), into a scratch table.
 */
async function copyBreakdown(cloud: LocalCloud): Promise<Record<string, number>> {
  const scratch = 'ringstore-bench-scratch';
  const client = await withShardTable(cloud, scratch);
  try {
    const ranges = new DynamoRangeStore(DynamoDBDocumentClient.from(client));
    const ring = new Ring((await ringStore(cloud.wiring).readRing())!);
    const source = ring.shards[0]!;
    const items: StoredItem[] = [];
    let readMs = 0;
    for (const range of ring.ranges().filter((candidate) => candidate.owner === source.id)) {
      let after: RangeCursor | undefined;
      do {
        const started = performance.now();
        const page = await ranges.itemsInRange(source.table, range, { limit: 500, ...(after ? { after } : {}) });
        readMs += performance.now() - started;
        items.push(...page.items);
        after = page.next;
      } while (after && items.length < breakdownItems);
      if (items.length >= breakdownItems) break;
    }
    const half = Math.floor(items.length / 2);
    const conditional = performance.now();
    await ranges.copyItems(scratch, items.slice(0, half), { nowSeconds: Math.floor(Date.now() / 1000), listed: false });
    const conditionalMs = performance.now() - conditional;
    const entity = kvEntity(shardTable());
    const batchMs =
      (half * 1000) /
      (await batchWrite(
        DynamoDBDocumentClient.from(client),
        items.slice(half, half * 2).map((item) => ({ table: scratch, item: attributesOf(entity, item, false) })),
        'design B',
      ));
    // The cleanup's part: the same items removed again with BatchWriteItem, as removeCopies does.
    const deleting = performance.now();
    await ranges.removeCopies(scratch, items.slice(half, half * 2));
    const deleteMs = performance.now() - deleting;
    const readItemsPerSecond = (items.length * 1000) / readMs;
    const batchWriteItemsPerSecond = (half * 1000) / batchMs;
    const deleteItemsPerSecond = (half * 1000) / deleteMs;
    return {
      items: half * 2,
      readItemsPerSecond: Math.round(readItemsPerSecond),
      conditionalPutItemsPerSecond: Math.round((half * 1000) / conditionalMs),
      batchWriteItemsPerSecond: Math.round(batchWriteItemsPerSecond),
      deleteItemsPerSecond: Math.round(deleteItemsPerSecond),
      // What stands in the way on this engine: it serves one request at a time (one SQLite thread), so a
      // move that reads each moved item once, writes it once (and, for the whole job, deletes it once
      // from the shard it left) is at best this fraction of raw BatchWriteItem, before any verification,
      // ring change, lease wait or stream read.
      ceilingToCutOver: round(1 / (1 + batchWriteItemsPerSecond / readItemsPerSecond)),
      ceilingWholeJob: round(1 / (1 + batchWriteItemsPerSecond / readItemsPerSecond + batchWriteItemsPerSecond / deleteItemsPerSecond)),
    };
  } finally {
    client.destroy();
  }
}

async function main(): Promise<void> {
  startWatchdog(settings.BENCH_TIMEOUT_SECONDS, 'bench:rebalance');
  const home = benchHome(settings.RINGSTORE_VENDOR_DIR);
  let seeded: { baselineKeysPerSecond: number; replicaKeysPerSecond: number } | undefined;
  console.error(`seeding ${settings.BENCH_REBALANCE_KEYS} keys of ${valueBytes} B on 4 shards, RF 3, before the streams are read`);
  const cloud = await startLocalCloud({
    home,
    port: 0,
    dynamodbJournal: benchDynamoDbJournal,
    shardCount: 4,
    spareShards: 1,
    autoFailover: false,
    maintenanceIntervalMs: 0,
    beforeStreams: async ({ dynamodbEndpoint, ring }) => void (seeded = await seed(dynamodbEndpoint, ring)),
  });
  try {
    const { baselineKeysPerSecond, replicaKeysPerSecond } = seeded!;
    console.error(
      `raw BatchWriteItem: ${Math.round(baselineKeysPerSecond)} items/s (owners), ${Math.round(replicaKeysPerSecond)} (replicas)`,
    );

    // Phase 1, no clients: the move's own rate (adding shard 4), against raw BatchWriteItem.
    const service = rebalanceService(cloud.wiring);
    // The baseline and the copy's parts, measured now on the running cloud (its stream pollers polling), as the move will run.
    const breakdown = await copyBreakdown(cloud);
    const sampler = settings.BENCH_ENGINE_SAMPLES === '1' ? startEngineSampler(home) : undefined;
    sampler?.mark('baseline');
    const baselineBefore = await rawBatchWriteRate(cloud, 'ringstore-bench-baseline-before', 10_000_000);
    profile.reset();
    requests.reset();
    const added = await runRebalance(cloud, service, { join: [4], leave: [] }, 'bench-add-4', 0, (stage) => sampler?.mark(`add: ${stage}`));
    const addProfile = profile.snapshot();
    const addRequests = requests.snapshot();
    sampler?.mark('baseline');
    const baselineAfter = await rawBatchWriteRate(cloud, 'ringstore-bench-baseline-after', 20_000_000);
    const engineThread = await sampler?.stop();
    const baseline = (baselineBefore + baselineAfter) / 2;
    await cloud.replicationCaughtUp();
    // The add's results are written before phase 2, so that a long run stopped during the removal keeps them.
    const report = async (underLoad: Awaited<ReturnType<typeof removeUnderLoad>> | undefined, last: boolean) => {
      const placement = last ? await checkPlacement(cloud) : undefined;
      const moveKeysPerSecond = (added.status.keysCopied * 1000) / added.copyMs;
      const summary = {
        keys: settings.BENCH_REBALANCE_KEYS,
        ranges: added.status.job.ranges.length,
        keysCopied: added.status.keysCopied,
        moveSeconds: round(added.copyMs / 1000),
        moveKeysPerSecond: Math.round(moveKeysPerSecond),
        baselineKeysPerSecond: Math.round(baseline),
        baseline: { items: baselineItems, beforeKeysPerSecond: Math.round(baselineBefore), afterKeysPerSecond: Math.round(baselineAfter) },
        moveToBatchWriteRatio: round(moveKeysPerSecond / baseline),
        // Up to the last cut-over, without the cleanup.
        cutOverSeconds: round(added.movedMs / 1000),
        cutOverKeysPerSecond: Math.round((added.status.keysCopied * 1000) / added.movedMs),
        cutOverToBatchWriteRatio: round((added.status.keysCopied * 1000) / added.movedMs / baseline),
        seedOwnersKeysPerSecond: Math.round(baselineKeysPerSecond),
        replicaSeedKeysPerSecond: Math.round(replicaKeysPerSecond),
        breakdown,
        addProfile,
        addRequests,
        ...(engineThread ? { engineThread } : {}),
        ...(underLoad ? underLoad.summary : {}),
        placement: placement ?? 'checked at the end of the run (after the removal under load)',
      };
      console.log(JSON.stringify(summary, null, 2));
      return summary;
    };
    const write = async (underLoad: Awaited<ReturnType<typeof removeUnderLoad>> | undefined, last: boolean) => {
      const summary = await report(underLoad, last);
      const resultsDir = benchResultsDir;
      await mkdir(resultsDir, { recursive: true });
      const file = join(resultsDir, `rebalance-${settings.BENCH_LABEL}.json`);
      const code = codeVersion();
      const progress = [
        ...added.progress.map((point) => ({ ...point, series: 'add shard 4 (no clients)' })),
        ...(underLoad?.removed.progress ?? []).map((point) => ({ ...point, series: 'remove shard 4 (under the client load)' })),
        ...(underLoad?.apart?.removed.progress ?? []).map((point) => ({ ...point, series: 'remove shard 4 again, its steps apart' })),
      ];
      await writeFile(
        file,
        JSON.stringify(
          {
            label: settings.BENCH_LABEL,
            code,
            machine: machineFacts(),
            settings,
            summary,
            steadyLatency: underLoad?.steadyLatency,
            moveLatency: underLoad?.moveLatency,
            ...(underLoad?.apart ? { moveLatencyApart: underLoad.apart.moveLatency } : {}),
            progress,
          },
          null,
          2,
        ),
      );
      await writeFile(
        join(benchPlotsDir, 'benchmarks-rebalance.svg'),
        await toSvg({
          $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
          title: {
            text: `Rebalancing ${settings.BENCH_REBALANCE_KEYS.toLocaleString('en')} keys of 1 KiB (4 <-> 5 shards, RF 3)`,
            subtitle: `add: ${summary.moveKeysPerSecond} items/s = ${summary.moveToBatchWriteRatio}x raw BatchWriteItem (${summary.baselineKeysPerSecond}/s); ${code.commit}`,
          },
          config: { font: 'sans-serif', background: 'white' },
          width: 560,
          height: 240,
          data: { values: progress },
          mark: { type: 'line', point: true },
          encoding: {
            x: { field: 'seconds', type: 'quantitative', title: 'seconds since the start' },
            y: { field: 'progress', type: 'quantitative', title: 'share of the moving token space moved', scale: { domain: [0, 1] } },
            color: { field: 'series', type: 'nominal', title: null },
          },
        }),
      );
      console.error(`wrote ${file}`);
    };
    const underLoad = settings.BENCH_REBALANCE_UNDER_LOAD === '1';
    await write(undefined, !underLoad);
    // Phase 2: a paced client load without a move, then the same load while shard 4 is removed again.
    if (underLoad) await write(await removeUnderLoad(cloud, service), true);
  } finally {
    await cloud.stop();
    await rm(home, { recursive: true, force: true });
  }
}

/**
 * Phase 2: the client load without a move, then the same load while shard 4 is removed again, then the
 * load without a move once more. The steady latency pools the phases before and after the move, as the
 * raw baseline does: the engine's speed drifts over a run, and one short phase gave a p99 of 26 to 40 ms
 * from run to run.
 */
async function removeUnderLoad(cloud: LocalCloud, service: ReturnType<typeof rebalanceService>) {
  // The bench's one process runs the clients, the API's handlers, the stream pollers and the move (on AWS,
  // separate Lambdas): how long its event loop lagged tells what of a client's latency is waiting for it.
  const loopDelay = monitorEventLoopDelay({ resolution: loopDelayResolutionMs });
  loopDelay.enable();
  const steadyBeforeSamples: Sample[] = [];
  const steadyBefore = load(cloud, steadyBeforeSamples);
  await sleep(settings.BENCH_REBALANCE_STEADY_SECONDS * 1000);
  await steadyBefore.stop();
  const loopDelayBefore = eventLoopDelayOf(loopDelay);
  const inTheCloud = await removalUnderLoad(cloud, service, 'bench-remove-4', 'in the cloud', loopDelay);
  await cloud.replicationCaughtUp();
  loopDelay.reset();
  const steadyAfterSamples: Sample[] = [];
  const steadyAfter = load(cloud, steadyAfterSamples);
  await sleep(settings.BENCH_REBALANCE_STEADY_SECONDS * 1000);
  await steadyAfter.stop();
  const loopDelayAfter = eventLoopDelayOf(loopDelay);
  // Step 4: the shard added again with no clients and its steps apart, its rate against raw BatchWriteItem
  // measured just before and after it; then removed again under the load with the steps apart.
  let apart: Awaited<ReturnType<typeof removalUnderLoad>> | undefined;
  let addApart: Record<string, number> | undefined;
  if (settings.BENCH_REBALANCE_APART === '1') {
    const rawBefore = await rawBatchWriteRate(cloud, 'ringstore-bench-baseline-apart-before', 30_000_000);
    const added = await runRebalance(cloud, service, { join: [4], leave: [] }, 'bench-add-4-apart', 0, undefined, 'apart');
    const rawAfter = await rawBatchWriteRate(cloud, 'ringstore-bench-baseline-apart-after', 40_000_000);
    const baseline = (rawBefore + rawAfter) / 2;
    const cutOverKeysPerSecond = (added.status.keysCopied * 1000) / added.movedMs;
    addApart = {
      keysCopied: added.status.keysCopied,
      cutOverSeconds: round(added.movedMs / 1000),
      cutOverKeysPerSecond: Math.round(cutOverKeysPerSecond),
      baselineKeysPerSecond: Math.round(baseline),
      baselineBeforeKeysPerSecond: Math.round(rawBefore),
      baselineAfterKeysPerSecond: Math.round(rawAfter),
      cutOverToBatchWriteRatio: round(cutOverKeysPerSecond / baseline),
    };
    await cloud.replicationCaughtUp();
    apart = await removalUnderLoad(cloud, service, 'bench-remove-4-apart', 'apart', loopDelay);
    await cloud.replicationCaughtUp();
  }
  loopDelay.disable();
  const steadyLatency = latencies([...steadyBeforeSamples, ...steadyAfterSamples]);
  const impact = (removal: Awaited<ReturnType<typeof removalUnderLoad>>) => {
    const moveLatency = latencies(removal.samples);
    return {
      underLoad: {
        keysCopied: removal.removed.status.keysCopied,
        moveSeconds: round(removal.removed.copyMs / 1000),
        keysPerSecond: Math.round((removal.removed.status.keysCopied * 1000) / removal.removed.copyMs),
        rateCeiling: settings.BENCH_REBALANCE_RATE,
        profile: removal.profile,
      },
      p50Ratio: {
        put: round(moveLatency['PUT strong']!.p50 / steadyLatency['PUT strong']!.p50),
        get: round(moveLatency['GET eventual']!.p50 / steadyLatency['GET eventual']!.p50),
        all: round(moveLatency.all!.p50 / steadyLatency.all!.p50),
      },
      p99Ratio: {
        put: round(moveLatency['PUT strong']!.p99 / steadyLatency['PUT strong']!.p99),
        get: round(moveLatency['GET eventual']!.p99 / steadyLatency['GET eventual']!.p99),
        all: round(moveLatency.all!.p99 / steadyLatency.all!.p99),
      },
      failedDuringMove: moveLatency.all!.failed,
      eventLoopDelayMoveMs: removal.loopDelay,
      slowByPhase: slowByPhase(removal.samples, removal.removed.progress, steadyLatency.all!.p99),
    };
  };
  const summary = {
    steadyP99Ms: {
      before: round(latencies(steadyBeforeSamples).all!.p99),
      after: round(latencies(steadyAfterSamples).all!.p99),
      pooled: round(steadyLatency.all!.p99),
    },
    eventLoopDelaySteadyMs: { before: loopDelayBefore, after: loopDelayAfter },
    ...impact(inTheCloud),
    ...(apart ? { apart: { add: addApart, ...impact(apart) } } : {}),
  };
  return {
    removed: inTheCloud.removed,
    steadyLatency,
    moveLatency: latencies(inTheCloud.samples),
    ...(apart ? { apart: { removed: apart.removed, moveLatency: latencies(apart.samples) } } : {}),
    summary,
  };
}

/** The client load while shard 4 is removed (its steps `where`), and the event loop's delay meanwhile. */
async function removalUnderLoad(
  cloud: LocalCloud,
  service: ReturnType<typeof rebalanceService>,
  id: string,
  where: 'in the cloud' | 'apart',
  loopDelay: IntervalHistogram,
) {
  const samples: Sample[] = [];
  const moving = load(cloud, samples);
  await sleep(2_000);
  profile.reset();
  loopDelay.reset();
  const removed = await runRebalance(cloud, service, { join: [], leave: [4] }, id, settings.BENCH_REBALANCE_RATE, undefined, where);
  const removeProfile = profile.snapshot();
  await moving.stop();
  return { removed, samples, profile: removeProfile, loopDelay: eventLoopDelayOf(loopDelay) };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
