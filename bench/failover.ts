// `npm run bench:failover`: how long a failed shard's keys stay unwritable, measured the way a client
// sees it. Each run starts a fresh local cloud (automatic failover on, fault injection on), keeps a
// mixed load of strong and eventual reads and writes on every shard, takes one shard down, and
// measures from the first request that fails to the first acknowledged strong write of a key that
// shard owned. Then it checks that every acknowledged write is still readable at its version or a
// newer one, and counts the requests that failed (only retryable 503s are allowed), separately for
// the clients that retry after 20 ms and those that wait the answer's Retry-After, as the SDK does.
// The failover's record gives each step's own time, so each run also says where the time went.
// Writes bench/results/failover-<BENCH_LABEL>.json.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import * as z from 'zod';
import { faultsPath } from '../cdk/local/gateway';
import { localNamespace, startLocalCloud, type LocalCloud } from '../cdk/local/cloud';
import { Ring, tokenOf } from '../lambdas/core/ring';
import type { RingState } from '../lambdas/ports';
import {
  benchHome,
  codeVersion,
  commonSettingsShape,
  machineFacts,
  startWatchdog,
  benchDynamoDbJournal,
  benchResultsDir,
} from './environment';

const settings = z
  .object({
    ...commonSettingsShape,
    BENCH_FAILOVER_RUNS: z.coerce.number().int().min(1).max(50).default(10),
    /** Concurrent clients of the background load. */
    BENCH_FAILOVER_CLIENTS: z.coerce.number().int().min(1).max(32).default(4),
    BENCH_LABEL: z
      .string()
      .regex(/^[a-z0-9-]+$/)
      .default('latest'),
  })
  .parse(process.env);

const keysPerShard = 8;
/** The load runs this long before the outage, so the failure lands on warm handlers and the run has a steady part. */
const warmMs = 3_000;
/** Bound on one run's wait for the first acknowledged write after the outage. */
const recoveryBoundMs = 20_000;
/** The load keeps running this long after the recovery, on the new owners. */
const afterMs = 8_000;

interface Outcome {
  op: string;
  status: number;
  atMs: number;
  /** Sent by a client that waits `Retry-After` after a 503 (as the SDK does), not 20 ms. */
  patient: boolean;
}

interface RunResult {
  run: number;
  victim: string;
  /** First failed request to the first acknowledged strong write of a key the victim owned. */
  failoverMs: number;
  requests: number;
  failed: number;
  /** The same two counts for the clients that honour `Retry-After` (half of them). */
  patientRequests: number;
  patientFailed: number;
  /** Failed requests that were not a retryable 503. */
  failedOther: number;
  acknowledgedWrites: number;
  lostWrites: number;
  statuses: Record<string, number>;
  /** Where the failover time went, from the failover's record (each step's own time) and the clocks around it. */
  phases: Phases;
}

interface Phases {
  /** First failed request to the workflow's start (the automatic start by the request that found the owner down). */
  startMs: number;
  confirmMs: number;
  /** The fence write and the lease wait (ringLeaseMs + ringLeaseMarginMs). */
  fenceMs: number;
  /** The slowest range's hand-over (the Map runs them 16 at a time). */
  handOverMs: number;
  settleMs: number;
  publishMs: number;
  /** After the publication (not part of the failover time): adding, backfilling and readying replicas. */
  reReplicateMs: number;
}

interface StepTimes {
  confirm?: { durationMs?: number };
  fence?: { durationMs?: number };
  ranges?: Array<{ durationMs?: number }>;
  transactions?: { durationMs?: number };
  publish?: { durationMs?: number };
  reReplication?: { durationMs?: number };
}

/** The failover's record once it has finished, with each step's own time. */
async function phasesOf(cloud: LocalCloud, firstFailureWallMs: number): Promise<Phases> {
  for (const deadline = Date.now() + 15_000; Date.now() < deadline;) {
    await sleep(100);
    const response = await fetch(`${cloud.url}/v1/admin/failovers`, { headers: { 'x-api-key': cloud.adminKey } });
    const { failovers } = (await response.json()) as { failovers: Array<{ status: string; requestedAt: string; report?: StepTimes }> };
    const record = failovers.find((candidate) => candidate.status === 'completed');
    if (!record?.report) continue;
    const { report } = record;
    return {
      startMs: Date.parse(record.requestedAt) - firstFailureWallMs,
      confirmMs: report.confirm?.durationMs ?? 0,
      fenceMs: report.fence?.durationMs ?? 0,
      handOverMs: Math.max(0, ...(report.ranges ?? []).map((range) => range.durationMs ?? 0)),
      settleMs: report.transactions?.durationMs ?? 0,
      publishMs: report.publish?.durationMs ?? 0,
      reReplicateMs: report.reReplication?.durationMs ?? 0,
    };
  }
  throw new Error('the failover did not complete within 15 s');
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function call(cloud: LocalCloud, method: string, path: string, body?: string) {
  const response = await fetch(`${cloud.url}${path}`, {
    method,
    headers: { 'x-api-key': cloud.apiKey, ...(body === undefined ? {} : { 'content-type': 'text/plain' }) },
    ...(body === undefined ? {} : { body }),
    signal: AbortSignal.timeout(10_000),
  });
  const retryAfterMs = Number(response.headers.get('retry-after') ?? 1) * 1000;
  if (response.ok && method === 'PUT')
    return { status: response.status, version: ((await response.json()) as { version: number }).version, retryAfterMs };
  await response.arrayBuffer();
  return { status: response.status, version: Number(response.headers.get('x-ringstore-version') ?? 0), retryAfterMs };
}

async function ringOf(cloud: LocalCloud): Promise<Ring> {
  const response = await fetch(`${cloud.url}/v1/ring`, { headers: { 'x-api-key': cloud.apiKey } });
  const body = (await response.json()) as RingState;
  return new Ring({
    epoch: body.epoch,
    replicationFactor: body.replicationFactor,
    vnodesPerShard: body.vnodesPerShard,
    shards: body.shards,
  });
}

async function oneRun(run: number): Promise<RunResult> {
  const home = benchHome(settings.RINGSTORE_VENDOR_DIR);
  const cloud = await startLocalCloud({
    home,
    port: 0,
    dynamodbJournal: benchDynamoDbJournal,
    faultInjection: true,
    autoFailover: true,
    maintenanceIntervalMs: 0,
  });
  try {
    const ring = await ringOf(cloud);
    const victim = ring.shards[run % ring.shards.length]!;
    const keysByShard = new Map(ring.shards.map((shard) => [shard.table, [] as string[]]));
    for (let n = 0; [...keysByShard.values()].some((keys) => keys.length < keysPerShard); n += 1) {
      const key = `fo-${n}`;
      const keys = keysByShard.get(ring.ownerOf(tokenOf(localNamespace, key)).table)!;
      if (keys.length < keysPerShard) keys.push(key);
    }
    const allKeys = [...keysByShard.values()].flat();
    const victimKeys = new Set(keysByShard.get(victim.table));
    const acked = new Map<string, number>();
    for (const key of allKeys) acked.set(key, (await call(cloud, 'PUT', `/v1/kv/${key}?consistency=strong`, 'v0')).version);

    const outcomes: Outcome[] = [];
    const outage: { at?: number } = {};
    let firstFailureAt: number | undefined;
    let firstFailureWallMs = 0;
    let recoveredAt: number | undefined;
    let stopAt = Number.POSITIVE_INFINITY;
    const client = async (id: number) => {
      // Half the clients retry a 503 after 20 ms (a tight loop), half after its Retry-After, as the SDK does.
      const patient = id % 2 === 1;
      for (let n = 0; performance.now() < stopAt; n += 1) {
        const sentAt = performance.now();
        const key = allKeys[(id * 7 + n * 13) % allKeys.length]!;
        const strong = n % 2 === 0;
        const write = n % 3 !== 2;
        const op = `${write ? 'PUT' : 'GET'} ${strong ? 'strong' : 'eventual'}`;
        const consistency = `consistency=${strong ? 'strong' : 'eventual'}`;
        const reply = write
          ? await call(cloud, 'PUT', `/v1/kv/${key}?${consistency}`, `c${id}-${n}`)
          : await call(cloud, 'GET', `/v1/kv/${key}?${consistency}`);
        const atMs = performance.now();
        outcomes.push({ op, status: reply.status, atMs, patient });
        if (write && reply.status === 200) acked.set(key, Math.max(acked.get(key) ?? 0, reply.version));
        if (outage.at !== undefined && reply.status >= 500 && firstFailureAt === undefined) {
          firstFailureAt = atMs;
          firstFailureWallMs = Date.now();
        }
        // Sent after the first failure: a write in flight when the shard went down is not a recovery.
        const afterFailure = firstFailureAt !== undefined && sentAt > firstFailureAt;
        if (recoveredAt === undefined && afterFailure && write && strong && reply.status === 200 && victimKeys.has(key)) {
          recoveredAt = atMs;
          stopAt = atMs + afterMs;
        }
        if (reply.status >= 500) await sleep(patient ? Math.min(reply.retryAfterMs, Math.max(0, stopAt - performance.now())) : 20);
      }
    };
    const clients = Array.from({ length: settings.BENCH_FAILOVER_CLIENTS }, (_, id) => client(id));
    await sleep(warmMs);
    await fetch(`${cloud.url}${faultsPath}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ downShards: [victim.table] }),
    });
    outage.at = performance.now();
    const bound = setTimeout(() => (stopAt = 0), recoveryBoundMs);
    await Promise.all(clients);
    clearTimeout(bound);
    if (recoveredAt === undefined || firstFailureAt === undefined) throw new Error(`run ${run}: no recovery within ${recoveryBoundMs} ms`);

    // Every acknowledged write is readable at its version or a newer one, from the new owners.
    const lost: Array<{ key: string; acked: number; read: number; status: number; victimOwned: boolean }> = [];
    for (const [key, version] of acked) {
      const read = await call(cloud, 'GET', `/v1/kv/${key}?consistency=strong`);
      if (read.status !== 200 || read.version < version) {
        lost.push({ key, acked: version, read: read.version, status: read.status, victimOwned: victimKeys.has(key) });
      }
    }
    if (lost.length > 0) console.log(`run ${run}: not read back at their acknowledged version: ${JSON.stringify(lost)}`);
    const phases = await phasesOf(cloud, firstFailureWallMs);
    const lostWrites = lost.length;
    const outageAt = outage.at;
    const during = outcomes.filter((outcome) => outcome.atMs >= outageAt);
    const failed = during.filter((outcome) => outcome.status >= 500);
    const statuses: Record<string, number> = {};
    for (const outcome of during) statuses[`${outcome.op} ${outcome.status}`] = (statuses[`${outcome.op} ${outcome.status}`] ?? 0) + 1;
    return {
      run,
      victim: victim.table,
      failoverMs: Math.round(recoveredAt - firstFailureAt),
      requests: during.length,
      failed: failed.length,
      patientRequests: during.filter((outcome) => outcome.patient).length,
      patientFailed: failed.filter((outcome) => outcome.patient).length,
      failedOther: failed.filter((outcome) => outcome.status !== 503).length,
      acknowledgedWrites: acked.size,
      lostWrites,
      statuses,
      phases,
    };
  } finally {
    await cloud.stop();
    await rm(home, { recursive: true, force: true });
  }
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function main() {
  startWatchdog(settings.BENCH_TIMEOUT_SECONDS, 'bench:failover');
  const code = codeVersion();
  console.log(
    `Ringstore failover bench: ${settings.BENCH_FAILOVER_RUNS} runs, ${settings.BENCH_FAILOVER_CLIENTS} clients, code ${code.commit}`,
  );
  const runs: RunResult[] = [];
  for (let run = 0; run < settings.BENCH_FAILOVER_RUNS; run += 1) {
    const result = await oneRun(run);
    runs.push(result);
    console.log(
      `run ${run + 1}: ${result.victim} down; first failure to first acknowledged strong write ${result.failoverMs} ms; ` +
        `${result.failed} of ${result.requests} requests failed (${result.failedOther} not a 503); ${result.lostWrites} acknowledged writes lost`,
    );
    const { phases } = result;
    console.log(
      `  start ${phases.startMs}, confirm ${phases.confirmMs}, fence and lease wait ${phases.fenceMs}, hand-over ${phases.handOverMs}, ` +
        `settle ${phases.settleMs}, publish ${phases.publishMs} ms; then re-replication ${phases.reReplicateMs} ms`,
    );
  }
  const times = runs.map((run) => run.failoverMs);
  const requests = runs.reduce((sum, run) => sum + run.requests, 0);
  const failed = runs.reduce((sum, run) => sum + run.failed, 0);
  const summary = {
    failoverMsP50: percentile(times, 50),
    failoverMsMax: Math.max(...times),
    failedShare: failed / requests,
    failedShareTightRetry:
      (failed - runs.reduce((sum, run) => sum + run.patientFailed, 0)) /
      (requests - runs.reduce((sum, run) => sum + run.patientRequests, 0)),
    failedShareRetryAfter: runs.reduce((sum, run) => sum + run.patientFailed, 0) / runs.reduce((sum, run) => sum + run.patientRequests, 0),
    failedOther: runs.reduce((sum, run) => sum + run.failedOther, 0),
    lostWrites: runs.reduce((sum, run) => sum + run.lostWrites, 0),
    // The median of each phase over the runs: what the failover time is made of.
    phasesP50: Object.fromEntries(
      (Object.keys(runs[0]!.phases) as Array<keyof Phases>).map((phase) => [
        phase,
        percentile(
          runs.map((run) => run.phases[phase]),
          50,
        ),
      ]),
    ),
  };
  console.log(
    `\nfailover time p50 ${summary.failoverMsP50} ms, max ${summary.failoverMsMax} ms (target 2000); ` +
      `${(summary.failedShare * 100).toFixed(2)} % of requests failed during the runs (${summary.failedOther} not a retryable 503): ` +
      `${(summary.failedShareTightRetry * 100).toFixed(2)} % for clients retrying after 20 ms, ` +
      `${(summary.failedShareRetryAfter * 100).toFixed(2)} % for clients honouring Retry-After; ` +
      `${summary.lostWrites} acknowledged writes lost`,
  );
  console.log(`phases, p50 (ms): ${JSON.stringify(summary.phasesP50)}`);
  const resultsDir = benchResultsDir;
  await mkdir(resultsDir, { recursive: true });
  const file = join(resultsDir, `failover-${settings.BENCH_LABEL}.json`);
  await writeFile(file, JSON.stringify({ label: settings.BENCH_LABEL, code, machine: machineFacts(), settings, summary, runs }, null, 2));
  console.log(`[bench:failover] wrote ${file}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
