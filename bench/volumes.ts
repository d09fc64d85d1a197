// `npm run bench:volumes`: a block volume of the local cloud exported by the NBD server (`ringstore volume serve`'s),
// measured with fio's nbd engine: 4 KiB random and 256 KiB sequential reads and writes, queue depth 1 and 16. In the
// same run, on the same DynamoDB Local: the DynamoDB requests Ringstore sent for one such read or write, replayed raw
// with the same overlap (bench/request-replay.ts); the same bytes written and read raw (one TransactWriteItems of the
// blocks, one consistent BatchGetItem); a strong KV PUT of 4 KiB through the REST API; and the layers of a 4 KiB
// write (the volume service in process, the SDK over HTTP), with the replicator running and held, and the fio writes
// again with it held: what the replicator's second copy of every block costs on the one engine. Writes
// bench/results/volumes-<label>.json.
import { execFile } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { BatchGetItemCommand, type DynamoDBClient, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import * as z from 'zod';
import { startLocalCloud } from '../cdk/local/cloud';
import { documentClient } from '../lambdas/wiring/clients';
import { apiKeyService } from '../lambdas/wiring/control';
import { replicationService, volumeService } from '../lambdas/wiring/services';
import { RingstoreClient } from '../sdk/src';
import { NbdServer } from '../sdk/src/nbd/server';
import { VolumeDevice, volumeErrnoOf } from '../sdk/src/nbd/volume-device';
import { volumeLimits } from '../schemas/topology';
import { callTimeoutMs, createRawTable, rawClient, rawTableName } from './cases';
import {
  benchDynamoDbJournal,
  benchHome,
  benchLabelSetting,
  commonSettingsShape,
  runBench,
  startWatchdog,
  writeResults,
} from './environment';
import { median, percentile } from './measure';
import { holdReplication } from './replication';
import { type CapturedCall, captureCalls, commandCounts, replayOnce } from './request-replay';

const settings = z
  .object({
    ...commonSettingsShape,
    BENCH_LABEL: benchLabelSetting,
    /** Seconds each fio job runs. */
    BENCH_VOLUME_SECONDS: z.coerce.number().int().min(1).default(10),
    /** The region of the volume the jobs read and write (MiB). */
    BENCH_VOLUME_MIB: z.coerce.number().int().min(16).default(64),
    /** Calls of each baseline. */
    BENCH_VOLUME_BASELINE_OPS: z.coerce.number().int().min(20).default(200),
  })
  .parse(process.env);

const run = promisify(execFile);
const log = (line: string) => console.error(`[bench:volumes] ${line}`);
const KiB = 1024;
const MiB = 1024 * KiB;

/** The fio jobs, in order: the first fills the region, so every read reads written blocks. */
const jobs = [
  { name: 'seq write 256 KiB qd1', rw: 'write', bs: 256 * KiB, iodepth: 1 },
  { name: 'seq write 256 KiB qd16', rw: 'write', bs: 256 * KiB, iodepth: 16 },
  { name: 'seq read 256 KiB qd1', rw: 'read', bs: 256 * KiB, iodepth: 1 },
  { name: 'seq read 256 KiB qd16', rw: 'read', bs: 256 * KiB, iodepth: 16 },
  { name: 'rand write 4 KiB qd1', rw: 'randwrite', bs: 4 * KiB, iodepth: 1 },
  { name: 'rand write 4 KiB qd16', rw: 'randwrite', bs: 4 * KiB, iodepth: 16 },
  { name: 'rand read 4 KiB qd1', rw: 'randread', bs: 4 * KiB, iodepth: 1 },
  { name: 'rand read 4 KiB qd16', rw: 'randread', bs: 4 * KiB, iodepth: 16 },
] as const;

interface FioResult {
  name: string;
  mbPerSecond: number;
  iops: number;
  p50Ms: number;
  p99Ms: number;
}

interface FioSide {
  bw_bytes: number;
  iops: number;
  clat_ns: { percentile?: Record<string, number> };
}

async function fio(uri: string, job: (typeof jobs)[number]): Promise<FioResult> {
  const { stdout } = await run(
    'fio',
    [
      `--name=${job.rw}`,
      '--ioengine=nbd',
      `--uri=${uri}`,
      `--rw=${job.rw}`,
      `--bs=${job.bs}`,
      `--iodepth=${job.iodepth}`,
      `--size=${settings.BENCH_VOLUME_MIB}M`,
      '--time_based',
      `--runtime=${settings.BENCH_VOLUME_SECONDS}`,
      '--randrepeat=0',
      '--output-format=json',
    ],
    { maxBuffer: 64 * MiB, timeout: (settings.BENCH_VOLUME_SECONDS + 120) * 1000 },
  ).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new Error('fio is not installed: apt-get install fio (.ci/run installs it)', { cause: error });
    throw error;
  });
  // fio's nbd engine prints its connection lines before the JSON.
  const result = JSON.parse(stdout.slice(stdout.indexOf('\n{') + 1)) as { jobs: Array<{ read: FioSide; write: FioSide; error: number }> };
  const first = result.jobs[0]!;
  if (first.error !== 0) throw new Error(`fio ${job.name} failed with error ${first.error}`);
  const side = job.rw.includes('write') ? first.write : first.read;
  const percentiles = side.clat_ns.percentile ?? {};
  return {
    name: job.name,
    mbPerSecond: round(side.bw_bytes / 1e6),
    iops: round(side.iops),
    p50Ms: round((percentiles['50.000000'] ?? 0) / 1e6),
    p99Ms: round((percentiles['99.000000'] ?? 0) / 1e6),
  };
}

/** p50 and p99 (ms) of `ops` sequential calls. */
async function latencies(ops: number, call: (i: number) => Promise<void>): Promise<{ p50Ms: number; p99Ms: number; seconds: number }> {
  const samples = new Float64Array(ops);
  const started = performance.now();
  for (let i = 0; i < ops; i += 1) {
    const t0 = performance.now();
    await call(i);
    samples[i] = performance.now() - t0;
  }
  const seconds = (performance.now() - started) / 1000;
  samples.sort();
  return { p50Ms: round(median([...samples])), p99Ms: round(percentile(samples, 99)), seconds };
}

const round = (value: number) => Math.round(value * 100) / 100;

/** The raw baselines on a plain table of the same engine: blocks written by one TransactWriteItems, read by one BatchGetItem. */
async function rawBaselines(client: DynamoDBClient) {
  const ops = settings.BENCH_VOLUME_BASELINE_OPS;
  const block = new Uint8Array(volumeLimits.blockBytes).fill(7);
  const items = (i: number, count: number) =>
    Array.from({ length: count }, (_, n) => ({ pk: { S: `raw/${i % 64}/${n}` }, v: { N: String(i) }, val: { B: block } }));
  const write = (count: number) => async (i: number) => {
    await client.send(
      new TransactWriteItemsCommand({ TransactItems: items(i, count).map((Item) => ({ Put: { TableName: rawTableName, Item } })) }),
      {
        abortSignal: AbortSignal.timeout(callTimeoutMs),
      },
    );
  };
  const read = (count: number) => async (i: number) => {
    const keys = items(i, count).map(({ pk }) => ({ pk }));
    await client.send(new BatchGetItemCommand({ RequestItems: { [rawTableName]: { Keys: keys, ConsistentRead: true } } }), {
      abortSignal: AbortSignal.timeout(callTimeoutMs),
    });
  };
  const blocksPer256KiB = (256 * KiB) / volumeLimits.blockBytes;
  const write4k = await latencies(ops, write(1));
  const write256k = await latencies(Math.ceil(ops / 4), write(blocksPer256KiB));
  const read4k = await latencies(ops, read(1));
  const read256k = await latencies(Math.ceil(ops / 4), read(blocksPer256KiB));
  const mbPerSecond = (calls: number, seconds: number) => round((calls * 256 * KiB) / seconds / 1e6);
  return {
    transactWrite4KiB: { p50Ms: write4k.p50Ms, p99Ms: write4k.p99Ms },
    transactWrite256KiB: { ...write256k, mbPerSecond: mbPerSecond(Math.ceil(ops / 4), write256k.seconds) },
    batchGet4KiB: { p50Ms: read4k.p50Ms, p99Ms: read4k.p99Ms },
    batchGet256KiB: { ...read256k, mbPerSecond: mbPerSecond(Math.ceil(ops / 4), read256k.seconds) },
  };
}

/** The operations whose requests are captured and replayed (the ratios set each against its fio job). */
const replayedOperations = [
  { name: 'write 256 KiB', bytes: 256 * KiB, write: true },
  { name: 'write 4 KiB', bytes: 4 * KiB, write: true },
  { name: 'read 256 KiB', bytes: 256 * KiB, write: false },
  { name: 'read 4 KiB', bytes: 4 * KiB, write: false },
] as const;

/**
 * The requests one operation sent, as the engine saw them. Its copies to the replicas are sent twice, by the strong
 * write and by the replicator reading the stream (which refuses as current what the first landed): only the first of
 * each is the operation's. What was sent after the operation was answered is the replicator's too. A capture that a
 * renewal of the NBD device's lease fell into (a write of the volume's record, every 20 s) is taken again.
 */
async function capturedRequestsOf(cloud: Awaited<ReturnType<typeof startLocalCloud>>, operation: () => Promise<unknown>) {
  for (let attempt = 1; ; attempt += 1) {
    const calls = await captureOnce(cloud, operation);
    if (!calls.some(writesVolumeRecord) || attempt >= 3) return calls;
    log('a lease renewal fell into the capture: capturing again');
  }
}

async function captureOnce(cloud: Awaited<ReturnType<typeof startLocalCloud>>, operation: () => Promise<unknown>) {
  await operation(); // the same request once before, uncaptured: the ring, the lease and the caches are warm
  await cloud.replicationCaughtUp();
  const capture = captureCalls(documentClient(cloud.wiring));
  await operation();
  const answeredAt = performance.now();
  const calls = capture.stop();
  const seen = new Set<string>();
  return calls.filter((call) => {
    if (call.sentAt > answeredAt) return false;
    if (call.command !== 'PutItemCommand') return true;
    const { TableName, Item } = call.input as { TableName?: string; Item?: { pk?: { S?: string } } };
    const copy = `${TableName} ${Item?.pk?.S}`;
    if (seen.has(copy)) return false;
    seen.add(copy);
    return true;
  });
}

/** Whether a captured call writes a volume's record (an attach or its renewal: a write never does). */
function writesVolumeRecord(call: CapturedCall): boolean {
  if (call.command === 'GetItemCommand' || call.command === 'BatchGetItemCommand' || call.command === 'QueryCommand') return false;
  return /#@[^/]+\/record"/.test(JSON.stringify(call.input));
}

/** Each operation's captured requests replayed raw `ops` times (a quarter for 256 KiB): p50, p99 and MB/s. */
async function replayedBaselines(raw: DynamoDBClient, captured: ReadonlyMap<string, CapturedCall[]>) {
  const results: Record<string, { requests: Record<string, number>; p50Ms: number; p99Ms: number; mbPerSecond: number }> = {};
  for (const operation of replayedOperations) {
    const calls = captured.get(operation.name)!;
    const ops = operation.bytes > 4 * KiB ? Math.ceil(settings.BENCH_VOLUME_BASELINE_OPS / 4) : settings.BENCH_VOLUME_BASELINE_OPS;
    const timed = await latencies(ops, async () => {
      await replayOnce(raw, calls, callTimeoutMs);
    });
    results[operation.name] = {
      requests: commandCounts(calls),
      p50Ms: timed.p50Ms,
      p99Ms: timed.p99Ms,
      mbPerSecond: round((ops * operation.bytes) / timed.seconds / 1e6),
    };
  }
  return results;
}

/**
 * A 4 KiB write, layer by layer, back to back on the blocks fio wrote: the volume service in process (what the
 * handler calls), the SDK over HTTP (the NBD server's path without NBD); each with the replicator running and held.
 * With it held, fio's 4 KiB random and 256 KiB sequential writes at queue depth 1 again. The replicator's batches
 * wait while held (nothing is lost) and are applied once it is released.
 */
async function writeLayers(cloud: Awaited<ReturnType<typeof startLocalCloud>>, volume: ReturnType<RingstoreClient['volume']>, uri: string) {
  const ops = settings.BENCH_VOLUME_BASELINE_OPS;
  const principal = await apiKeyService(cloud.wiring).authenticate(cloud.apiKey);
  const service = volumeService(cloud.wiring.forHandler('volumes'));
  const epoch = volume.lease!.epoch;
  const bytes = new Uint8Array(4 * KiB).fill(3);
  const at = (i: number) => (200 + (i % 256)) * volumeLimits.blockBytes;
  // Running, each layer starts once the replicator has caught up; held, there is nothing to catch up with.
  const measure = async (settle: () => Promise<void>) => {
    await settle();
    const inProcess = await latencies(ops, async (i) => {
      await service.write(principal.namespace, 'bench', at(i), bytes, { epoch });
    });
    await settle();
    const http = await latencies(ops, async (i) => {
      await volume.write(at(i), bytes);
    });
    return { service: { p50Ms: inProcess.p50Ms, p99Ms: inProcess.p99Ms }, http: { p50Ms: http.p50Ms, p99Ms: http.p99Ms } };
  };
  const running = await measure(() => cloud.replicationCaughtUp());
  const release = holdReplication(replicationService(cloud.wiring.forHandler('replicator')));
  try {
    const held = await measure(async () => undefined);
    const fioRandWrite4KiB = await fio(
      uri,
      jobs.find((job) => job.name === 'rand write 4 KiB qd1')!,
    );
    const fioSeqWrite256KiB = await fio(
      uri,
      jobs.find((job) => job.name === 'seq write 256 KiB qd1')!,
    );
    log(
      `layers, 4 KiB write p50: service ${running.service.p50Ms} ms, HTTP ${running.http.p50Ms} ms; replicator held: ` +
        `service ${held.service.p50Ms} ms, HTTP ${held.http.p50Ms} ms, fio ${fioRandWrite4KiB.p50Ms} ms, 256 KiB ${fioSeqWrite256KiB.mbPerSecond} MB/s`,
    );
    return { running, held: { ...held, fioRandWrite4KiB, fioSeqWrite256KiB } };
  } finally {
    release();
    await cloud.replicationCaughtUp();
  }
}

async function main(): Promise<void> {
  startWatchdog(settings.BENCH_TIMEOUT_SECONDS, 'bench:volumes');
  const home = benchHome(settings.RINGSTORE_VENDOR_DIR);
  log(`starting the local cloud in ${home}`);
  // No maintenance and no transaction sweeper: their requests on their own schedules would land among the captured ones.
  const noSchedules = { maintenanceIntervalMs: 0, sweeperIntervalMs: 0 };
  const cloud = await startLocalCloud({ home, port: 0, dynamodbJournal: benchDynamoDbJournal, log, ...noSchedules });
  const client = new RingstoreClient({ endpoint: cloud.url, apiKey: cloud.apiKey });
  const raw = rawClient(cloud.engines.dynamodbEndpoint);
  let server: NbdServer | undefined;
  let device: VolumeDevice | undefined;
  try {
    const sizeBytes = Math.max(settings.BENCH_VOLUME_MIB * MiB, 64 * MiB);
    await client.createVolume('bench', sizeBytes);
    const volume = client.volume('bench');
    device = await VolumeDevice.open(volume, { readOnly: false, holder: 'bench', leaseSeconds: 60, log });
    server = new NbdServer({ exports: [{ name: 'bench', device }], errnoOf: volumeErrnoOf, log });
    await server.listen({ port: 0 });
    const uri = `nbd://127.0.0.1:${server.port}/bench`;
    log(`serving ${uri}; fio, ${settings.BENCH_VOLUME_SECONDS} s a job over ${settings.BENCH_VOLUME_MIB} MiB`);
    const fioResults: FioResult[] = [];
    for (const job of jobs) {
      const result = await fio(uri, job);
      log(`${job.name}: ${result.mbPerSecond} MB/s, ${result.iops} IOPS, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms`);
      fioResults.push(result);
    }
    // Before the replays: the replicator would meet their items on the shard tables.
    const layers = await writeLayers(cloud, volume, uri);
    // Ringstore's own requests for one operation of each kind, on blocks fio wrote (block 100 on: not the first blocks).
    const captured = new Map<string, CapturedCall[]>();
    const offset = 100 * volumeLimits.blockBytes;
    for (const operation of replayedOperations) {
      const bytes = new Uint8Array(operation.bytes).fill(5);
      const calls = await capturedRequestsOf(cloud, () =>
        operation.write ? volume.write(offset, bytes) : volume.read(offset, operation.bytes),
      );
      log(`${operation.name}: ${calls.length} requests (${JSON.stringify(commandCounts(calls))})`);
      captured.set(operation.name, calls);
    }
    const replayed = await replayedBaselines(raw, captured);
    await createRawTable(raw);
    const baselines = await rawBaselines(raw);
    const value = new Uint8Array(volumeLimits.blockBytes).fill(9);
    const kvPut = await latencies(settings.BENCH_VOLUME_BASELINE_OPS, async (i) => {
      await client.put(`bench/kv-${i % 64}`, value, { consistency: 'strong' });
    });
    const byName = (name: string) => fioResults.find((result) => result.name === name)!;
    const replay = (name: (typeof replayedOperations)[number]['name']) => replayed[name]!;
    const ratios = {
      seqWriteQd1OverReplay: round(byName('seq write 256 KiB qd1').mbPerSecond / replay('write 256 KiB').mbPerSecond),
      seqReadQd1OverReplay: round(byName('seq read 256 KiB qd1').mbPerSecond / replay('read 256 KiB').mbPerSecond),
      randWrite4KiBP50OverReplay: round(byName('rand write 4 KiB qd1').p50Ms / replay('write 4 KiB').p50Ms),
      randRead4KiBP50OverReplay: round(byName('rand read 4 KiB qd1').p50Ms / replay('read 4 KiB').p50Ms),
      replayedSeqWriteOverRawTransactWrite: round(replay('write 256 KiB').mbPerSecond / baselines.transactWrite256KiB.mbPerSecond),
      randWrite4KiBP50OverKvStrongPut: round(byName('rand write 4 KiB qd1').p50Ms / kvPut.p50Ms),
      serviceWrite4KiBP50OverReplay: round(layers.running.service.p50Ms / replay('write 4 KiB').p50Ms),
      httpWrite4KiBP50OverReplay: round(layers.running.http.p50Ms / replay('write 4 KiB').p50Ms),
      heldRandWrite4KiBP50OverReplay: round(layers.held.fioRandWrite4KiB.p50Ms / replay('write 4 KiB').p50Ms),
      heldSeqWriteQd1OverReplay: round(layers.held.fioSeqWrite256KiB.mbPerSecond / replay('write 256 KiB').mbPerSecond),
      randWrite4KiBP50OverRawTransactWrite: round(byName('rand write 4 KiB qd1').p50Ms / baselines.transactWrite4KiB.p50Ms),
      seqWriteQd1OverRawTransactWrite: round(byName('seq write 256 KiB qd1').mbPerSecond / baselines.transactWrite256KiB.mbPerSecond),
      seqReadQd1OverRawBatchGet: round(byName('seq read 256 KiB qd1').mbPerSecond / baselines.batchGet256KiB.mbPerSecond),
    };
    const file = await writeResults('volumes', settings, {
      fio: fioResults,
      baselines: { ...baselines, kvStrongPut4KiB: { p50Ms: kvPut.p50Ms, p99Ms: kvPut.p99Ms } },
      replayed,
      layers,
      ratios,
      reference002: { writeMBps: 2.4, readMBps: [10, 20], writeLatencyMs: [9, 14], note: 'dedicated 20-core servers' },
    });
    console.table(fioResults);
    console.table(ratios);
    log(`wrote ${file}`);
  } finally {
    await server?.close();
    await device?.close().catch(() => undefined);
    raw.destroy();
    await cloud.stop();
  }
}

runBench(main);
