// `npm run bench`: raw DynamoDB Local vs Ringstore (in-process handler and HTTP) on one local cloud.
// Prints the results and ratios, writes bench/results/latest.json and docs/benchmarks-latest.svg.
import { existsSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { Agent } from 'node:http';
import { join, resolve } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { z } from 'zod';
import { startLocalCloud } from '../cdk/local/cloud';
import { DYNAMODB_LOCAL } from '../cdk/local/engines/dynamodb-local';
import { QUICK_START_JVM_FLAGS } from '../cdk/local/engines/java';
import { keyIdOf } from '../lambdas/core/auth';
import { namesFor } from '../lambdas/topology';
import { captureShardRequests } from './capture';
import {
  type BenchCase,
  type CaseDeps,
  createRawTable,
  diagnosticCases,
  handlerCases,
  httpCases,
  fetchCases,
  preloadRaw,
  rawCases,
  rawClient,
} from './cases';
import { echoCases, startEchoTargets } from './echo';
import { kvEvent, lambdaContext } from './events';
import { type Block, measure, measureBlock, type RunStats, statsOf } from './measure';
import { renderSvg, subtitleOf, svgPath } from './plot';
import { withCpuProfile } from './profile';
import { type CaseResult, markdownTables, ratios, ratioTable, resultsTable, summarise, targetRatioMax } from './report';
import { keyCount, makeWorkload, valueBytes } from './workload';

const root = resolve(__dirname, '..');

/** Defaults are the documented configuration; the variables exist for quick trial runs and profiling. */
const settings = z
  .object({
    BENCH_WARMUP_OPS: z.coerce.number().int().min(0).default(200),
    BENCH_LATENCY_OPS: z.coerce.number().int().min(100).default(300),
    BENCH_THROUGHPUT_OPS: z.coerce.number().int().min(100).default(300),
    BENCH_ROUNDS: z.coerce.number().int().min(1).max(9).default(5),
    /** Only cases whose id starts with one of these (comma-separated), e.g. `http.,raw.`. */
    BENCH_CASES: z.string().optional(),
    /** After the measured rounds, profiles one more concurrency-1 run of each case into this folder. */
    BENCH_PROFILE_DIR: z.string().optional(),
    /** Bound on the whole run; a stuck engine ends it instead of hanging CI. */
    BENCH_TIMEOUT_SECONDS: z.coerce.number().int().min(30).default(600),
    RINGSTORE_VENDOR_DIR: z.string().default(join(root, '.ringstore', 'vendor')),
  })
  .parse(process.env);

const latencyConcurrency = 1;
const throughputConcurrency = 8;
/** Calls per turn of a case; the cases take turns until each has made its calls for the round. */
const latencyBlockOps = 50;
const throughputBlockOps = 100;
const resultsDir = join(root, 'bench', 'results');

const log = (line: string) => console.error(`[bench] ${line}`);

type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** A throwaway home whose vendor/ is the shared jar cache, so the engines start from a clean database. */
function benchHome(): string {
  const home = mkdtempSync(join(tmpdir(), 'ringstore-bench-'));
  if (!existsSync(settings.RINGSTORE_VENDOR_DIR)) mkdirSync(settings.RINGSTORE_VENDOR_DIR, { recursive: true });
  symlinkSync(settings.RINGSTORE_VENDOR_DIR, join(home, 'vendor'), 'dir');
  return home;
}

/** Turns alternate forward and backward, so no case always runs first or after the same neighbour. */
function orderFor(turn: number, cases: BenchCase[]): BenchCase[] {
  return turn % 2 === 0 ? cases : [...cases].reverse();
}

async function main(): Promise<void> {
  const watchdog = setTimeout(() => {
    console.error(`[bench] gave up after ${settings.BENCH_TIMEOUT_SECONDS} s`);
    process.exit(2);
  }, settings.BENCH_TIMEOUT_SECONDS * 1000);
  watchdog.unref();
  const started = Date.now();
  const loadBefore = loadavg();
  const home = benchHome();
  log(`starting the local cloud in ${home}`);
  const cloud = await startLocalCloud({ home, port: 0, log });
  /** Undone in reverse order when the run ends, however it ends. */
  const cleanups: Array<() => Promise<void> | void> = [];
  try {
    // The handlers read their config at import, so they are imported only once the cloud has set it.
    const { handler: readHandler } = (await import('../lambdas/handlers/kv-read')) as { handler: ProxyHandler };
    const { handler: writeHandler } = (await import('../lambdas/handlers/kv-write')) as { handler: ProxyHandler };
    const { runtime } = await import('../lambdas/runtime');

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
    const capture = captureShardRequests(runtime().dynamodb, namesFor('local').shardTable(0).replace(/0$/, ''));
    for (let i = 0; i < keyCount; i += 1) {
      const put = await writeHandler(kvEvent({ method: 'PUT', key: workload.keyOf(i), caller, bodyBase64: workload.valueBase64Of(i) }), lambdaContext('kvWrite'));
      // A strong read: eventual ones are answered by the cache and would send no GetItem to capture.
      const get = await readHandler(kvEvent({ method: 'GET', key: workload.keyOf(i), caller, query: { consistency: 'strong' } }), lambdaContext('kvRead'));
      if (put.statusCode !== 200 || get.statusCode !== 200) throw new Error(`preload of ${workload.keyOf(i)} failed: ${put.statusCode} ${put.body}`);
    }
    const captured = capture.stop();
    if (captured.updates.size !== keyCount || captured.gets.size !== keyCount) {
      throw new Error(`captured ${captured.updates.size} UpdateItem and ${captured.gets.size} GetItem requests, expected ${keyCount} each`);
    }

    const echo = await startEchoTargets(workload, 'local');
    cleanups.push(echo.stop);
    const httpAgent = new Agent({ keepAlive: true, maxSockets: throughputConcurrency });
    cleanups.push(() => httpAgent.destroy());
    const deps: CaseDeps = { workload, dynamodbEndpoint: cloud.engines.dynamodbEndpoint, url: cloud.url, apiKey: cloud.apiKey, caller, readHandler, writeHandler };
    const prefixes = settings.BENCH_CASES?.split(',').map((p) => p.trim()).filter(Boolean);
    const cases = [
      ...rawCases(client, workload, caller.namespace),
      ...handlerCases(deps),
      ...httpCases(deps, httpAgent),
      ...diagnosticCases(client, workload, captured),
      ...fetchCases(deps),
      ...echoCases(echo, workload),
    ].filter((c) => !prefixes || prefixes.some((p) => c.id.startsWith(p)));

    if (settings.BENCH_WARMUP_OPS > 0) {
      log(`warm-up: ${settings.BENCH_WARMUP_OPS} ops per case at concurrency ${throughputConcurrency}`);
      for (const benchCase of cases) await measure(benchCase.run, { ops: settings.BENCH_WARMUP_OPS, concurrency: throughputConcurrency });
    }

    const latencyRuns = new Map<string, RunStats[]>(cases.map((c) => [c.id, []]));
    const throughputRuns = new Map<string, RunStats[]>(cases.map((c) => [c.id, []]));
    const loadPerRound: number[] = [];
    for (let round = 0; round < settings.BENCH_ROUNDS; round += 1) {
      const roundStarted = Date.now();
      const firstIndex = round * 100_003;
      // Blocks of every case take turns, so a burst of load from elsewhere on the machine falls on
      // all cases alike instead of on whichever case happened to be running.
      const interleaved = async (mode: 'latency' | 'throughput'): Promise<Map<string, Block[]>> => {
        const { ops, blockOps, concurrency } = mode === 'latency'
          ? { ops: settings.BENCH_LATENCY_OPS, blockOps: latencyBlockOps, concurrency: latencyConcurrency }
          : { ops: settings.BENCH_THROUGHPUT_OPS, blockOps: throughputBlockOps, concurrency: throughputConcurrency };
        const blocks = new Map<string, Block[]>(cases.map((c) => [c.id, []]));
        for (let done = 0, turn = 0; done < ops; done += blockOps, turn += 1) {
          const size = Math.min(blockOps, ops - done);
          for (const benchCase of orderFor(round + turn, cases)) {
            blocks.get(benchCase.id)!.push(await measureBlock(benchCase.run, { ops: size, concurrency, firstIndex: firstIndex + done }));
          }
        }
        return blocks;
      };
      for (const [id, blocks] of await interleaved('latency')) latencyRuns.get(id)!.push(statsOf(blocks));
      for (const [id, blocks] of await interleaved('throughput')) throughputRuns.get(id)!.push(statsOf(blocks));
      loadPerRound.push(loadavg()[0]!);
      log(`round ${round + 1}/${settings.BENCH_ROUNDS} done in ${((Date.now() - roundStarted) / 1000).toFixed(1)} s`);
    }

    if (settings.BENCH_PROFILE_DIR) {
      // An extra round, not counted: the sampling profiler slows every call down.
      for (const benchCase of cases) {
        const path = join(settings.BENCH_PROFILE_DIR, `${benchCase.id}.cpuprofile`);
        await withCpuProfile(path, () => measure(benchCase.run, { ops: settings.BENCH_LATENCY_OPS, concurrency: latencyConcurrency }));
      }
      log(`wrote ${cases.length} CPU profiles (${settings.BENCH_LATENCY_OPS} calls each at concurrency 1) to ${settings.BENCH_PROFILE_DIR}; ` +
        `summarise with: npx tsx bench/profile-summary.ts --ops=${settings.BENCH_LATENCY_OPS} ${settings.BENCH_PROFILE_DIR}/*.cpuprofile`);
    }

    const results: CaseResult[] = cases.map((c) => summarise(c, latencyRuns.get(c.id)!, throughputRuns.get(c.id)!));
    const ratioRows = ratios(results);
    const machine = {
      nproc: availableParallelism(),
      cpuModel: cpus()[0]?.model ?? 'unknown',
      totalMemoryMb: Math.round(totalmem() / 2 ** 20),
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      dynamodbLocal: DYNAMODB_LOCAL.version,
      dynamodbLocalQuickStartJvmFlags: QUICK_START_JVM_FLAGS,
      loadAverageBefore: loadBefore,
      loadAverageAfter: loadavg(),
      loadAverage1mAfterEachRound: loadPerRound,
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
        targetRatioMax,
      },
      results,
      ratios: ratioRows,
      markdown: markdownTables(results, ratioRows),
    };

    console.log(`\nRingstore bench: ${keyCount} keys, ${valueBytes} B values, ${settings.BENCH_ROUNDS} rounds (median), ` +
      `${machine.nproc} cores, Node ${machine.node}, load ${loadBefore.map((l) => l.toFixed(2)).join(' ')}\n`);
    console.log(resultsTable(results));
    console.log('');
    console.log(ratioTable(ratioRows));
    const misses = ratioRows.filter((r) => r.verdict === 'MISS');
    const judged = ratioRows.some((r) => r.targeted);
    console.log(!judged
      ? '\ntarget not judged: this run has no HTTP case with its raw baseline'
      : misses.length
      ? `\ntargets (p50): MISS on ${misses.map((r) => `${r.name} (${r.p50.toFixed(2)}x > ${r.target}x)`).join('; ')}`
      : '\ntargets (p50): all PASS');

    await mkdir(resultsDir, { recursive: true });
    // A run of some cases only (BENCH_CASES) must not replace the full run's results and plot.
    if (prefixes) {
      await writeFile(join(resultsDir, 'partial.json'), `${JSON.stringify(output, null, 2)}\n`);
      log(`wrote bench/results/partial.json in ${output.durationSeconds} s (a partial run leaves latest.json and the plot alone)`);
    } else {
      await writeFile(join(resultsDir, 'latest.json'), `${JSON.stringify(output, null, 2)}\n`);
      await writeFile(svgPath, await renderSvg(results, subtitleOf(output)));
      log(`wrote bench/results/latest.json and docs/benchmarks-latest.svg in ${output.durationSeconds} s`);
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
