// `npm run bench:watch`: how long the change feed (GET /v1/watch, docs/watch.md) takes to hand a write to a waiting
// watcher, against how long the same write takes to reach its replicas, in the same run on the same local cloud (the
// machine is noisy: the feed's lag is reported as a ratio to the replication lag).
//
// Writers PUT fresh keys under `bw/` (eventual, 100 B values) at a fixed rate (20 a second), an open loop. Watchers
// long-poll the feed from a cursor taken before the first write (`waitSeconds=20`): BENCH_WATCH_WATCHERS of the prefix
// `bw/` (one partition of the feed) and as many of the whole namespace (all of its partitions). For each acknowledged
// write:
// - delivery lag: from the PUT's answer to the watch answer that carried it, per watcher;
// - replication lag: from the PUT's answer until the last of its replicas held it (the replica PutItems, seen on
//   the handlers' client, bench/replication.ts: an eventual write reaches its replicas by the stream path only);
// - when the appender stamped its feed entry (the position in the change's cursor), which splits the delivery lag
//   into the stream's part and the feed's own (the settle time and the poll interval, both by design).
// Also: repeated deliveries (same key and version), writes never delivered (any fails the run), and the feed's
// write units per write, counted by the capacity meter (bench/capacity/meter.ts) beside the capacity model's figure.
// After a warm-up at the same rate, whose writes are not counted. Writes bench/results/watch-<BENCH_LABEL>.json and
// docs/benchmarks-watch.svg.
import { rm, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { relative } from 'node:path';
import * as z from 'zod';
import { localNamespace, startLocalCloud, type LocalCloud } from '../cdk/local/cloud';
import { tokenOf, type Ring } from '../lambdas/core/ring';
import { documentClient } from '../lambdas/wiring/clients';
import { ringSource } from '../lambdas/wiring/control';
import { replicationStats } from '../lambdas/wiring/data';
import { namesFor } from '../schemas/topology';
import { meterCapacity, type CapacityTotals } from './capacity/meter';
import { operationCosts } from './capacity/operation-costs';
import {
  benchDynamoDbJournal,
  benchHome,
  benchLabelSetting,
  benchRoot,
  codeVersion,
  commonSettingsShape,
  runBench,
  startWatchdog,
  writeResults,
} from './environment';
import { percentile } from './measure';
import { type ReplicaWatch, watchReplicaWrites } from './replication';
import { type Ack, changeIdOf, type Endpoint, follow, put, startWatcher, waitSeconds, type Watcher, writeAtRate } from './watch-load';
import { renderWatchSvg, watchSvgPath } from './watch-plot';

const settings = z
  .object({
    ...commonSettingsShape,
    BENCH_LABEL: benchLabelSetting,
    /** Seconds of measured load. */
    BENCH_WATCH_SECONDS: z.coerce.number().int().min(2).max(600).default(30),
    /** Seconds of the same load before it, not counted: the handlers, the stream pollers and the engine warm up. */
    BENCH_WATCH_WARMUP_SECONDS: z.coerce.number().int().min(0).max(120).default(5),
    /**
     * Writes a second over all the writers. 20: on the 2-core machine, shared with other work, 50 a second pushed the
     * feed's appends past the settle time into restamps and retried batches that fed on themselves (docs/benchmarks.md, "Watch").
     */
    BENCH_WATCH_RATE: z.coerce.number().int().min(5).max(500).default(20),
    BENCH_WATCH_WRITERS: z.coerce.number().int().min(1).max(32).default(4),
    /** Watchers of the writes' prefix; as many again watch the whole namespace. */
    BENCH_WATCH_WATCHERS: z.coerce.number().int().min(1).max(16).default(2),
    /** The feed's settle time and poll interval, where not the defaults (docs/watch.md, "Limits and settings"). */
    BENCH_WATCH_SETTLE_MS: z.coerce.number().int().min(100).max(10_000).optional(),
    BENCH_WATCH_POLL_MS: z.coerce.number().int().min(50).max(5_000).optional(),
  })
  .parse(process.env);

/** The writes' topic: a prefix with a `/` is read from one partition of the feed (docs/watch.md, "Layout"). */
const topic = 'bw/';
/** Written after the measured writes: every watcher gets an answer with it, so none is left in a 20 s wait at the end. */
const lastKey = `${topic}~last`;
const valueBytes = 100;
/** How long the watchers may take, after the last write, to receive every acknowledged write: past it, the rest are missing. */
const drainBoundMs = 30_000;
/** A pause with no write, between the warm-up and the measured load, so the watchers start it idle. */
const quietMs = 1_000;

/** Bound on each wait for the replicator to catch up: a stream batch it keeps failing must end the run, not hang it. */
const catchUpBoundMs = 60_000;

const log = (line: string) => console.error(`[bench:watch] ${line}`);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Waits for the replicator to read every stream up to now, or says that it did not within the bound. */
async function replicationCaughtUp(cloud: LocalCloud, when: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const caughtUp = await Promise.race([
    cloud.replicationCaughtUp().then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), catchUpBoundMs))),
  ]);
  clearTimeout(timer);
  if (!caughtUp) log(`${when}: the replicator had not caught up after ${catchUpBoundMs / 1000} s (a stream batch it keeps retrying)`);
}

export interface Distribution {
  min: number;
  p50: number;
  p99: number;
  max: number;
  count: number;
}

function distribution(values: readonly number[]): Distribution {
  if (values.length === 0) return { min: 0, p50: 0, p99: 0, max: 0, count: 0 };
  const sorted = Float64Array.from(values).sort();
  return {
    min: sorted[0]!,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1]!,
    count: sorted.length,
  };
}

/** A value of `valueBytes` bytes (its content does not matter: every write is of a fresh key). */
function valueOfWrite(): Uint8Array {
  return new Uint8Array(valueBytes).fill(0x61);
}

/** What the measured phase leaves: the acknowledgements, the watchers' records, the replica writes and the units. */
interface Measured {
  acks: Ack[];
  failedWrites: number;
  lateMsMax: number;
  achievedRate: number;
  watchers: Watcher[];
  replicaWrites: ReplicaWatch['writes'];
  units: CapacityTotals;
  /** Watch requests sent while the meter counted (beside the feed Queries it counted). */
  watchRequests: number;
}

/**
 * The watchers first (cursors from before any write), then the warm-up and the measured load, then the last write;
 * the watchers stop once each has every acknowledged write and the last one, or `drainBoundMs` after the last write.
 */
async function measure(cloud: LocalCloud): Promise<Measured> {
  const endpoint: Endpoint = { url: cloud.url, apiKey: cloud.apiKey };
  const client = documentClient(cloud.wiring);
  const shardPrefix = namesFor('local').shardTable(0).replace(/0$/, '');
  const replicas = watchReplicaWrites(client, { shardPrefix, hints: cloud.wiring.config.hintsTable }, topic);
  const meter = meterCapacity(client, 'local');
  const kinds = [
    ...Array.from({ length: settings.BENCH_WATCH_WATCHERS }, () => ['prefix', topic] as const),
    ...Array.from({ length: settings.BENCH_WATCH_WATCHERS }, () => ['namespace', ''] as const),
  ];
  const started = await Promise.all(kinds.map(([kind, prefix]) => startWatcher(endpoint, kind, prefix)));
  const watchers = started.map(({ watcher }) => watcher);
  let expected: { ids: string[]; deadlineMs: number } | undefined;
  const done = (watcher: Watcher) =>
    expected !== undefined && (Date.now() > expected.deadlineMs || expected.ids.every((id) => watcher.deliveries.has(id)));
  // A watch that fails is kept until the end (the writes go on for the other watchers), then rethrown.
  let watchFailure: Error | undefined;
  const following = started.map(({ watcher, cursor }) =>
    follow(endpoint, watcher, cursor, done).catch((error: unknown) => {
      watchFailure ??= error instanceof Error ? error : new Error(JSON.stringify(error));
    }),
  );
  try {
    const plan = { rate: settings.BENCH_WATCH_RATE, writers: settings.BENCH_WATCH_WRITERS, value: valueOfWrite() };
    if (settings.BENCH_WATCH_WARMUP_SECONDS > 0) {
      log(`warming up: ${settings.BENCH_WATCH_WARMUP_SECONDS} s at ${plan.rate} writes/s`);
      await writeAtRate(endpoint, { ...plan, count: plan.rate * settings.BENCH_WATCH_WARMUP_SECONDS, keyOf: (n) => `${topic}warm-${n}` });
    }
    await replicationCaughtUp(cloud, 'after the warm-up');
    await sleep(cloud.wiring.config.watch.settleMs + cloud.wiring.config.watch.pollMs + quietMs);
    meter.reset();
    const requestsBefore = watchers.reduce((sum, watcher) => sum + watcher.requests, 0);
    log(`measuring: ${settings.BENCH_WATCH_SECONDS} s at ${plan.rate} writes/s, ${watchers.length} watchers`);
    const count = plan.rate * settings.BENCH_WATCH_SECONDS;
    const run = await writeAtRate(endpoint, { ...plan, count, keyOf: (n) => `${topic}${String(n).padStart(6, '0')}` });
    const last = await put(endpoint, lastKey, plan.value);
    if (!last) throw new Error(`the last write (${lastKey}) was not acknowledged`);
    expected = { ids: [...run.acks, last].map(changeIdOf), deadlineMs: Date.now() + drainBoundMs };
    await Promise.all(following);
    if (watchFailure) throw watchFailure;
    await replicationCaughtUp(cloud, 'after the measured writes');
    await meter.quiet(500);
    return {
      acks: run.acks,
      failedWrites: run.failed,
      lateMsMax: run.lateMsMax,
      achievedRate: (run.acks.length + run.failed) / (run.elapsedMs / 1000),
      watchers,
      replicaWrites: [...replicas.writes],
      units: meter.totals(),
      watchRequests: watchers.reduce((sum, watcher) => sum + watcher.requests, 0) - requestsBefore,
    };
  } finally {
    // A failed write or watch: the other watchers end at the deadline rather than waiting for changes.
    expected ??= { ids: [], deadlineMs: 0 };
    await Promise.all(following);
    replicas.stop();
  }
}

/**
 * Per acknowledged write, from its acknowledgement until the last of its replicas held it (the first applied
 * replica write of each replica table); writes of which a replica copy was not seen are counted apart.
 */
function replicationLags(acks: readonly Ack[], writes: Measured['replicaWrites'], ring: Ring): { lagsMs: number[]; unobserved: number } {
  const landedAt = new Map<string, number>();
  for (const write of writes) {
    const id = `${write.key}|${write.table}`;
    if (write.applied && !landedAt.has(id)) landedAt.set(id, write.doneAtMs);
  }
  const lagsMs: number[] = [];
  let unobserved = 0;
  for (const ack of acks) {
    const copies = ring
      .replicasOf(tokenOf(localNamespace, ack.key))
      .slice(1)
      .map((shard) => landedAt.get(`${ack.key}|${shard.table}`));
    if (copies.some((at) => at === undefined)) unobserved += 1;
    else lagsMs.push(Math.max(...(copies as number[])) - ack.ackAtMs);
  }
  return { lagsMs, unobserved };
}

/** The watchers of one kind, pooled: each write counted once per watcher. */
function deliveryOf(watchers: readonly Watcher[], acks: readonly Ack[]) {
  const lagsMs: number[] = [];
  const stampedAfterAckMs: number[] = [];
  const servedAfterStampMs: number[] = [];
  let missing = 0;
  let repeats = 0;
  for (const watcher of watchers) {
    for (const ack of acks) {
      repeats += watcher.repeats.get(changeIdOf(ack)) ?? 0;
      const delivery = watcher.deliveries.get(changeIdOf(ack));
      if (!delivery) {
        missing += 1;
        continue;
      }
      lagsMs.push(delivery.deliveredAtMs - ack.ackAtMs);
      stampedAfterAckMs.push(delivery.stampedAtMs - ack.ackAtMs);
      servedAfterStampMs.push(delivery.deliveredAtMs - delivery.stampedAtMs);
    }
  }
  return {
    watchers: watchers.length,
    prefix: watchers[0]?.prefix ?? '',
    lagMs: distribution(lagsMs),
    stampedAfterAckMs: distribution(stampedAfterAckMs),
    servedAfterStampMs: distribution(servedAfterStampMs),
    missing,
    repeats,
    requests: watchers.reduce((sum, watcher) => sum + watcher.requests, 0),
    lagsMs,
    stampedLagsMs: stampedAfterAckMs,
  };
}

const round2 = (value: number) => Math.round(value * 100) / 100;
const ratio = (value: number, baseline: number) => Math.round((value / Math.max(1, baseline)) * 100) / 100;

function summarise(measured: Measured, ring: Ring, cloud: LocalCloud) {
  const replication = replicationLags(measured.acks, measured.replicaWrites, ring);
  const replicationLagMs = distribution(replication.lagsMs);
  const byKind = (kind: Watcher['kind']) =>
    deliveryOf(
      measured.watchers.filter((watcher) => watcher.kind === kind),
      measured.acks,
    );
  const { lagsMs: prefixLags, stampedLagsMs, ...prefix } = byKind('prefix');
  const { lagsMs: namespaceLags, stampedLagsMs: _stampedAgain, ...namespace } = byKind('namespace');
  // The last write is a change of the feed too: every write unit of the window is one of these writes'.
  const writesInWindow = measured.acks.length + measured.failedWrites + 1;
  const feedWriteUnits = measured.units.writeUnits.feed ?? 0;
  const summary = {
    feed: { ...cloud.wiring.config.watch, waitSeconds },
    writes: {
      acknowledged: measured.acks.length,
      failed: measured.failedWrites,
      ratePerSecond: Math.round(measured.achievedRate * 10) / 10,
      lateMsMax: measured.lateMsMax,
      valueBytes,
    },
    replicationLagMs,
    replicaCopiesUnobserved: replication.unobserved,
    delivery: { prefix, namespace },
    ratios: {
      prefixP50: ratio(prefix.lagMs.p50, replicationLagMs.p50),
      prefixP99: ratio(prefix.lagMs.p99, replicationLagMs.p99),
      namespaceP50: ratio(namespace.lagMs.p50, replicationLagMs.p50),
      namespaceP99: ratio(namespace.lagMs.p99, replicationLagMs.p99),
    },
    capacity: {
      feedWriteUnitsPerWrite: Math.round((feedWriteUnits / writesInWindow) * 1000) / 1000,
      feedWriteUnitsModel: operationCosts['put eventual, new key'].writeUnits.feed ?? 0,
      // The watchers' reads as requests: DynamoDB Local reports read units for only some of its Queries (an empty one
      // reports none), so their units are docs/capacity.md's model, not a count.
      feedQueries: measured.units.requests['Query feed'] ?? 0,
      watchRequests: measured.watchRequests,
      totals: measured.units,
    },
    // The replicator's own ReplicationLag metric (in process: its last 2,000 copies, warm-up included), which counts
    // from the owner write's start (modifiedAt) rather than from the acknowledgement.
    replicationLagMetric: replicationStats(cloud.wiring).summary().lagMs,
  };
  return { summary, series: { replication: replication.lagsMs, stamped: stampedLagsMs, prefix: prefixLags, namespace: namespaceLags } };
}

type Summary = ReturnType<typeof summarise>['summary'];

function printSummary(summary: Summary): void {
  const row = (name: string, d: Distribution) => `| ${name} | ${d.p50} | ${d.p99} | ${d.max} | ${d.count} |`;
  const { prefix, namespace } = summary.delivery;
  console.log(
    [
      '| ms after the acknowledgement | p50 | p99 | max | samples |',
      '| --- | --: | --: | --: | --: |',
      row('replicas hold it (the last of the replica copies)', summary.replicationLagMs),
      row('feed entry stamped by the appender', prefix.stampedAfterAckMs),
      row(`delivered to a watcher of \`${prefix.prefix}\` (one partition)`, prefix.lagMs),
      row('delivered to a watcher of the whole namespace (every partition)', namespace.lagMs),
      '',
      `delivery / replication lag: prefix p50 ${summary.ratios.prefixP50}x, p99 ${summary.ratios.prefixP99}x; ` +
        `whole namespace p50 ${summary.ratios.namespaceP50}x, p99 ${summary.ratios.namespaceP99}x`,
      `served after the stamp (settle ${summary.feed.settleMs} ms, poll every ${summary.feed.pollMs} ms): ` +
        `min ${prefix.servedAfterStampMs.min} ms, p50 ${prefix.servedAfterStampMs.p50} ms, p99 ${prefix.servedAfterStampMs.p99} ms`,
      `writes: ${summary.writes.acknowledged} acknowledged, ${summary.writes.failed} failed, ${summary.writes.ratePerSecond}/s ` +
        `(latest send ${summary.writes.lateMsMax} ms behind schedule); repeats ${prefix.repeats} + ${namespace.repeats}, ` +
        `missing ${prefix.missing} + ${namespace.missing}`,
      `feed write units per write: ${summary.capacity.feedWriteUnitsPerWrite} (model ${summary.capacity.feedWriteUnitsModel}); ` +
        `${summary.capacity.feedQueries} feed Queries for ${summary.capacity.watchRequests} watch requests`,
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  startWatchdog(settings.BENCH_TIMEOUT_SECONDS, 'bench:watch');
  const home = benchHome(settings.RINGSTORE_VENDOR_DIR);
  log('starting a local cloud');
  const cloud = await startLocalCloud({
    home,
    port: 0,
    dynamodbJournal: benchDynamoDbJournal,
    maintenanceIntervalMs: 0,
    sweeperIntervalMs: 0,
    watch: {
      ...(settings.BENCH_WATCH_SETTLE_MS === undefined ? {} : { settleMs: settings.BENCH_WATCH_SETTLE_MS }),
      ...(settings.BENCH_WATCH_POLL_MS === undefined ? {} : { pollMs: settings.BENCH_WATCH_POLL_MS }),
    },
  });
  try {
    // The machine's load is part of what a run measured: the appends' speed, against the settle time, decides the repeats.
    const loadAverageBefore = loadavg()[0]!;
    const measured = await measure(cloud);
    const { summary, series } = summarise(measured, await ringSource(cloud.wiring).current(), cloud);
    const loadAverage = { before: round2(loadAverageBefore), after: round2(loadavg()[0]!) };
    // The per-write lags too (a few thousand numbers), so the plot can be drawn again from the file.
    const file = await writeResults('watch', settings, { at: new Date().toISOString(), loadAverage, summary, lagsMs: series });
    await writeFile(watchSvgPath, await renderWatchSvg({ code: codeVersion(), settings, summary, lagsMs: series }));
    printSummary(summary);
    log(`load average (1 min) ${loadAverage.before} before the run, ${loadAverage.after} after it`);
    log(`wrote ${relative(benchRoot, file)} and ${relative(benchRoot, watchSvgPath)}`);
    const missing = summary.delivery.prefix.missing + summary.delivery.namespace.missing;
    if (missing > 0) {
      throw new Error(`${missing} deliveries of acknowledged writes never came within ${drainBoundMs} ms of the last write`);
    }
  } finally {
    await cloud.stop();
    await rm(home, { recursive: true, force: true });
  }
}

runBench(main);
