// `npm run bench`: raw DynamoDB Local vs Ringstore (in-process handler and HTTP) on one local cloud,
// then replication's own measurements (convergence after a burst, hint replay). Prints the results and
// ratios, writes bench/results/latest.json, docs/benchmarks-latest.svg and docs/benchmarks-replication.svg.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { Agent } from 'node:http';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import * as z from 'zod';
import { startLocalCloud } from '../cdk/local/cloud';
import { keyIdOf } from '../lambdas/core/auth';
import { namesFor } from '../schemas/topology';
import { captureShardRequests } from './capture';
import {
  type CaseDeps,
  createRawTable,
  diagnosticCases,
  expectAck,
  handlerCases,
  httpCases,
  httpPut,
  fetchCases,
  prepareReplayKeys,
  preloadRaw,
  replayReplicaPuts,
  rawCases,
  rawClient,
} from './cases';
import { echoCases, startEchoTargets } from './echo';
import {
  benchHome,
  codeVersion,
  commonSettingsShape,
  machineFacts,
  startWatchdog,
  benchDynamoDbJournal,
  benchResultsDir,
} from './environment';
import { kvEvent, lambdaContext } from './events';
import { strongGetLadderCases, strongGetStepCosts } from './ladder';
import { measure, median } from './measure';
import { renderReplicationSvg, renderSvg, replicationSubtitleOf, replicationSvgPath, subtitleOf, svgPath } from './plot';
import { withCpuProfile } from './profile';
import { runRounds } from './rounds';
import { benchRuntime } from './runtime';
import {
  type BurstDeps,
  type ConvergenceReport,
  type HintReplayReport,
  holdReplication,
  measureConvergence,
  measureHintReplay,
  watchReplicaWrites,
} from './replication';
import { type CaseResult, markdownTables, ratios, ratioTable, replicationLines, resultsTable, summarise, targets } from './report';
import { keyCount, makeWorkload, valueBytes } from './workload';

/** Defaults are the documented configuration; the variables exist for quick trial runs and profiling. */
const settings = z
  .object({
    ...commonSettingsShape,
    BENCH_WARMUP_OPS: z.coerce.number().int().min(0).default(200),
    BENCH_LATENCY_OPS: z.coerce.number().int().min(100).default(300),
    BENCH_THROUGHPUT_OPS: z.coerce.number().int().min(100).default(300),
    /** Only cases whose id starts with one of these (comma-separated), e.g. `http.,raw.`. */
    BENCH_CASES: z.string().optional(),
    /** After the measured rounds, profiles one more concurrency-1 run of each case into this folder. */
    BENCH_PROFILE_DIR: z.string().optional(),
    /** Eventual PUTs of the convergence burst (fresh keys, concurrency 8); 0 skips the measurement. */
    BENCH_BURST_WRITES: z.coerce.number().int().min(0).max(20_000).default(1_000),
    /** Strong PUTs made while one replica is down, whose hints are then replayed and timed; 0 skips it. */
    BENCH_HINT_WRITES: z.coerce.number().int().min(0).max(20_000).default(2_000),
    /**
     * Diagnosis only: hold the replicator during the warm-up and the rounds (the stream is not read), to
     * price what eventual writes' background replication costs the measured calls. Use with
     * BENCH_BURST_WRITES=0 BENCH_HINT_WRITES=0: the backlog would distort them.
     */
    BENCH_PAUSE_REPLICATION: z.enum(['0', '1']).default('0'),
  })
  .parse(process.env);

const latencyConcurrency = 1;
const throughputConcurrency = 8;
/** Calls per turn of a case; the cases take turns until each has made its calls for the round. */
const latencyBlockOps = 50;
const throughputBlockOps = 100;
const resultsDir = benchResultsDir;
/** Calls per round of the isolated mode (each waits for the replicator first, so fewer). */
const isolatedCalls = 60;
/** The isolated cases: Ringstore's write and strong-read paths over HTTP, their raw replays, a raw PutItem. */
const isolatedCaseIds = [
  'raw.put',
  'diag.gatewayEchoPut',
  'diag.gatewayEchoGet',
  'http.put',
  'diag.shardUpdate',
  'http.putStrong',
  'diag.shardStrongWrite',
  'http.getStrong',
  'diag.shardGetStrong',
];
/** Ringstore's case and the raw replay of exactly its DynamoDB requests: the overhead Ringstore adds. */
const isolatedPairs = [
  ['http.put', 'diag.shardUpdate', 'diag.gatewayEchoPut'],
  ['http.putStrong', 'diag.shardStrongWrite', 'diag.gatewayEchoPut'],
  ['http.getStrong', 'diag.shardGetStrong', 'diag.gatewayEchoGet'],
] as const;

const log = (line: string) => console.error(`[bench] ${line}`);

type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

async function main(): Promise<void> {
  startWatchdog(settings.BENCH_TIMEOUT_SECONDS, 'bench');
  const started = Date.now();
  const loadBefore = loadavg();
  const code = codeVersion();
  const home = benchHome(settings.RINGSTORE_VENDOR_DIR);
  log(`starting the local cloud in ${home}`);
  // Maintenance off: in AWS it runs once a minute, here every 2 s, and its anti-entropy scans would land
  // on whichever cases happened to be running. The stream poller stays on: replicating eventual writes
  // is part of what a write costs the system. Fault injection is on only so the hint replay measurement
  // can take a shard down; with no plan armed it is a pass-through (one Set lookup per shard call).
  // No automatic failover: the outage phase measures hint replay onto a shard that keeps its ranges.
  const cloud = await startLocalCloud({
    home,
    port: 0,
    dynamodbJournal: benchDynamoDbJournal,
    log,
    maintenanceIntervalMs: 0,
    faultInjection: true,
    autoFailover: false,
  });
  /** Undone in reverse order when the run ends, however it ends. */
  const cleanups: Array<() => Promise<void> | void> = [];
  try {
    const rt = benchRuntime(cloud.wiring);
    const runtime = () => rt;
    const readHandler: ProxyHandler = rt.readHandler;
    const writeHandler: ProxyHandler = rt.writeHandler;

    const keyId = keyIdOf(cloud.apiKey);
    if (!keyId) throw new Error('the local API key has no key id');
    const principal = await runtime().apiKeys.authenticate(cloud.apiKey);
    const caller = { namespace: principal.namespace, keyId };
    const workload = makeWorkload();
    const client = rawClient(cloud.engines.dynamodbEndpoint);
    cleanups.push(() => client.destroy());
    await createRawTable(client);

    log(`preloading ${keyCount} keys of ${valueBytes} bytes (raw table and Ringstore)`);
    await preloadRaw(client, workload, caller.namespace);
    const names = namesFor('local');
    const shardPrefix = names.shardTable(0).replace(/0$/, '');
    const capture = captureShardRequests(runtime().dynamodb, shardPrefix);
    for (let i = 0; i < keyCount; i += 1) {
      // Strong writes: every replica holds the key from the start, and the capture sees the replica PutItems.
      const put = await writeHandler(
        kvEvent({ method: 'PUT', key: workload.keyOf(i), caller, bodyBase64: workload.valueBase64Of(i), query: { consistency: 'strong' } }),
        lambdaContext('kvWrite'),
      );
      // A strong read: eventual ones are answered by the cache and would send no GetItem to capture.
      const get = await readHandler(
        kvEvent({ method: 'GET', key: workload.keyOf(i), caller, query: { consistency: 'strong' } }),
        lambdaContext('kvRead'),
      );
      if (put.statusCode !== 200 || get.statusCode !== 200)
        throw new Error(`preload of ${workload.keyOf(i)} failed: ${put.statusCode} ${put.body}`);
      expectAck(put.body, true, `preload PUT of ${workload.keyOf(i)}`);
    }
    const captured = capture.stop();
    const replicaPuts = [...captured.replicaPuts.values()].reduce((n, puts) => n + puts.length, 0);
    if (captured.updates.size !== keyCount || captured.gets.size !== keyCount || replicaPuts !== 2 * keyCount) {
      throw new Error(
        `captured ${captured.updates.size} UpdateItem, ${captured.gets.size} GetItem and ${replicaPuts} replica PutItem requests, ` +
          `expected ${keyCount}, ${keyCount} and ${2 * keyCount}`,
      );
    }
    await prepareReplayKeys(client, captured);

    const echo = await startEchoTargets(workload, 'local');
    cleanups.push(echo.stop);
    const httpAgent = new Agent({ keepAlive: true, maxSockets: throughputConcurrency });
    cleanups.push(() => httpAgent.destroy());
    const deps: CaseDeps = {
      workload,
      dynamodbEndpoint: cloud.engines.dynamodbEndpoint,
      url: cloud.url,
      apiKey: cloud.apiKey,
      caller,
      readHandler,
      writeHandler,
    };
    const prefixes = settings.BENCH_CASES?.split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    const cases = [
      ...rawCases(client, workload, caller.namespace),
      ...handlerCases(deps),
      ...httpCases(deps, httpAgent),
      ...diagnosticCases(client, workload, captured),
      ...(await strongGetLadderCases(runtime(), workload, caller.namespace)),
      ...fetchCases(deps),
      ...echoCases(echo, workload, httpAgent),
    ].filter((c) => !prefixes || prefixes.some((p) => c.id.startsWith(p)));

    let resumeReplication: (() => void) | undefined;
    if (settings.BENCH_PAUSE_REPLICATION === '1') {
      resumeReplication = holdReplication(runtime().replication);
      cleanups.push(() => resumeReplication?.());
      log('replication held until the rounds end (BENCH_PAUSE_REPLICATION=1, a diagnosis)');
    }

    if (settings.BENCH_WARMUP_OPS > 0) {
      log(`warm-up: ${settings.BENCH_WARMUP_OPS} ops per case at concurrency ${throughputConcurrency}`);
      for (const benchCase of cases) await measure(benchCase.run, { ops: settings.BENCH_WARMUP_OPS, concurrency: throughputConcurrency });
    }

    // Isolated calls of the write and strong-read paths and their raw replays: each starts once the
    // replicator has caught up, so a write's own latency is measured without the previous writes'
    // replica copies running on the same engine (on AWS they land on other tables' partitions).
    const isolatedIds = isolatedCaseIds.filter((id) => cases.some((c) => c.id === id));
    const { runs, loadPerRound } = await runRounds(
      cases,
      [
        { name: 'latency', ops: settings.BENCH_LATENCY_OPS, blockOps: latencyBlockOps, concurrency: latencyConcurrency },
        { name: 'throughput', ops: settings.BENCH_THROUGHPUT_OPS, blockOps: throughputBlockOps, concurrency: throughputConcurrency },
        {
          name: 'isolated',
          ops: isolatedCalls,
          blockOps: isolatedCalls / 2,
          concurrency: 1,
          settle: () => cloud.replicationCaughtUp(),
          caseIds: isolatedIds,
        },
      ],
      settings.BENCH_ROUNDS,
      log,
    );
    const isolated = Object.fromEntries(
      isolatedIds.map((id) => {
        const stats = runs.get('isolated')!.get(id)!;
        return [id, { p50Ms: median(stats.map((r) => r.p50Ms)), p99Ms: median(stats.map((r) => r.p99Ms)) }];
      }),
    );
    // The HTTP hop (the bench's client, node:http, the local gateway standing in for API Gateway) is priced
    // by the same gateway with handlers that answer at once: what is left over the raw replay without it is
    // the handler's own code (validation, routing, the adapters' command building, the cache).
    const isolatedOverhead = isolatedPairs.flatMap(([ringstore, raw, echo]) => {
      const a = isolated[ringstore];
      const b = isolated[raw];
      const hop = isolated[echo];
      if (!a || !b) return [];
      return [
        {
          ringstore,
          raw,
          p50: a.p50Ms / b.p50Ms,
          p99: a.p99Ms / b.p99Ms,
          ...(hop ? { gatewayHop: echo, gatewayHopP50Ms: hop.p50Ms, withoutHopP50: (a.p50Ms - hop.p50Ms) / b.p50Ms } : {}),
        },
      ];
    });
    const latencyRuns = runs.get('latency')!;
    const throughputRuns = runs.get('throughput')!;

    if (settings.BENCH_PROFILE_DIR) {
      // An extra round, not counted: the sampling profiler slows every call down.
      for (const benchCase of cases) {
        const path = join(settings.BENCH_PROFILE_DIR, `${benchCase.id}.cpuprofile`);
        await withCpuProfile(path, () => measure(benchCase.run, { ops: settings.BENCH_LATENCY_OPS, concurrency: latencyConcurrency }));
      }
      log(
        `wrote ${cases.length} CPU profiles (${settings.BENCH_LATENCY_OPS} calls each at concurrency 1) to ${settings.BENCH_PROFILE_DIR}; ` +
          `summarise with: npx tsx bench/profile-summary.ts --ops=${settings.BENCH_LATENCY_OPS} ${settings.BENCH_PROFILE_DIR}/*.cpuprofile`,
      );
    }

    resumeReplication?.();
    log('strong GET: pricing the in-process steps one by one');
    const strongGetSteps = await strongGetStepCosts(runtime(), workload, caller.namespace);

    // Replication's own measurements, after the rounds so they disturb none of them.
    let convergence: ConvergenceReport | undefined;
    let hintReplay: HintReplayReport | undefined;
    if (settings.BENCH_BURST_WRITES > 0 || settings.BENCH_HINT_WRITES > 0) {
      const burstKeyPrefix = 'bench/burst-';
      const watch = watchReplicaWrites(runtime().dynamodb, { shardPrefix, hints: runtime().config.hintsTable }, burstKeyPrefix);
      cleanups.push(() => watch.stop());
      const burstDeps: BurstDeps = {
        ring: await runtime().ring.current(),
        namespace: caller.namespace,
        raw: client,
        watch,
        runtime: runtime(),
        put: (key, n, strong) =>
          httpPut(httpAgent, `${cloud.url}/v1/kv/${encodeURIComponent(key)}`, cloud.apiKey, workload.valueOf(n), strong),
      };
      if (settings.BENCH_BURST_WRITES > 0) {
        log(
          `convergence: ${settings.BENCH_BURST_WRITES} eventual PUTs at concurrency ${throughputConcurrency}, then polling every replica`,
        );
        convergence = await measureConvergence(burstDeps, {
          writes: settings.BENCH_BURST_WRITES,
          concurrency: throughputConcurrency,
          keyPrefix: burstKeyPrefix,
        });
      }
      if (settings.BENCH_HINT_WRITES > 0) {
        log(`hint replay: ${settings.BENCH_HINT_WRITES} strong PUTs with one replica down, then one hinted handoff`);
        hintReplay = await measureHintReplay(burstDeps, {
          writes: settings.BENCH_HINT_WRITES,
          concurrency: throughputConcurrency,
          keyPrefix: 'bench/hint-',
        });
      }
    }

    const results: CaseResult[] = cases.map((c) => summarise(c, latencyRuns.get(c.id)!, throughputRuns.get(c.id)!));
    const ratioRows = ratios(results);
    const rawPutOpsPerSecond = results.find((r) => r.id === 'raw.put')?.throughput.opsPerSecond;
    const replication = {
      ...(convergence ? { convergence } : {}),
      ...(hintReplay
        ? {
            hintReplay: {
              ...hintReplay,
              ...(rawPutOpsPerSecond
                ? {
                    rawPutItemOpsPerSecondAtConcurrency8: Math.round(rawPutOpsPerSecond),
                    hintsPerRawPutItem: hintReplay.hintsPerSecond / rawPutOpsPerSecond,
                  }
                : {}),
            },
          }
        : {}),
      strongGetSteps,
      replayReplicaPuts: { ...replayReplicaPuts },
    };
    const machine = {
      ...machineFacts(),
      loadAverageBefore: loadBefore,
      loadAverageAfter: loadavg(),
      loadAverage1mAfterEachRound: loadPerRound,
      code,
    };
    const output = {
      finishedAt: new Date().toISOString(),
      durationSeconds: Math.round((Date.now() - started) / 1000),
      machine,
      settings: {
        keys: keyCount,
        valueBytes,
        warmupOpsPerCase: settings.BENCH_WARMUP_OPS,
        latency: { concurrency: latencyConcurrency, opsPerRound: settings.BENCH_LATENCY_OPS, opsPerBlock: latencyBlockOps },
        throughput: { concurrency: throughputConcurrency, opsPerRound: settings.BENCH_THROUGHPUT_OPS, opsPerBlock: throughputBlockOps },
        interleaving: 'each round, cases take turns in blocks, alternating forward and backward order',
        rounds: settings.BENCH_ROUNDS,
        summary: 'median over rounds, per metric',
        background: {
          maintenance: 'off (maintenanceIntervalMs 0)',
          streamPoller: settings.BENCH_PAUSE_REPLICATION === '1' ? 'replicator held during the rounds (diagnosis)' : 'on',
          faultInjection: 'on, nothing armed during the rounds',
        },
        targets,
        burstWrites: settings.BENCH_BURST_WRITES,
        hintWrites: settings.BENCH_HINT_WRITES,
      },
      results,
      ratios: ratioRows,
      isolated: { calls: isolatedCalls, latencyMs: isolated, overhead: isolatedOverhead },
      replication,
      markdown: markdownTables(results, ratioRows),
    };

    console.log(
      `\nRingstore bench: ${keyCount} keys, ${valueBytes} B values, ${settings.BENCH_ROUNDS} rounds (median), ` +
        `${machine.nproc} cores, Node ${machine.node}, load ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, ` +
        `code ${code.commit}${code.uncommitted.length ? ` + uncommitted ${code.uncommitted.join(' ')}` : ''}\n`,
    );
    console.log(resultsTable(results));
    console.log('');
    console.log(ratioTable(ratioRows));
    console.log('\nisolated calls (each once the replicator caught up), p50 / p99 ms:');
    for (const [id, stats] of Object.entries(isolated))
      console.log(`  ${id.padEnd(24)} ${stats.p50Ms.toFixed(2)} / ${stats.p99Ms.toFixed(2)}`);
    for (const row of isolatedOverhead) {
      const hop =
        row.withoutHopP50 === undefined
          ? ''
          : `; less the gateway hop (${row.gatewayHopP50Ms?.toFixed(2)} ms): p50 ${row.withoutHopP50.toFixed(2)}x`;
      console.log(`  overhead ${row.ringstore} over ${row.raw}: p50 ${row.p50.toFixed(2)}x, p99 ${row.p99.toFixed(2)}x${hop}`);
    }
    const misses = ratioRows.filter((r) => r.verdict === 'MISS');
    const judged = ratioRows.some((r) => r.targeted);
    console.log(
      !judged
        ? '\ntarget not judged: this run has no HTTP case with its raw baseline'
        : misses.length
          ? `\ntargets (p50): MISS on ${misses.map((r) => `${r.name} (${r.p50.toFixed(2)}x against ${r.target}x)`).join('; ')}`
          : '\ntargets (p50): all PASS',
    );
    console.log('');
    for (const line of replicationLines(replication)) console.log(line);

    await mkdir(resultsDir, { recursive: true });
    // A run of some cases only (BENCH_CASES) must not replace the full run's results and plot.
    if (prefixes) {
      await writeFile(join(resultsDir, 'partial.json'), `${JSON.stringify(output, null, 2)}\n`);
      log(`wrote bench/results/partial.json in ${output.durationSeconds} s (a partial run leaves latest.json and the plot alone)`);
    } else {
      await writeFile(join(resultsDir, 'latest.json'), `${JSON.stringify(output, null, 2)}\n`);
      await writeFile(svgPath, await renderSvg(results, subtitleOf(output)));
      await writeFile(replicationSvgPath, await renderReplicationSvg(ratioRows, replicationSubtitleOf(output)));
      log(`wrote bench/results/latest.json, docs/benchmarks-latest.svg and docs/benchmarks-replication.svg in ${output.durationSeconds} s`);
    }
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await cloud.stop();
    await rm(home, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(`[bench] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
