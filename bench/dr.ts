// `npm run bench:dr`: the reference's disaster experiment (004, Fig. 8) on two local regions. The
// regions are linked through Toxiproxy (5 ms each way, a bandwidth limit). Writers load the primary at
// full speed with values of 10 KB, 100 KB, 1 MB and 10 MB; each key is written twice, so a stale value
// can exist. At the Nth acknowledged write the link is cut and the primary is stopped (the disaster).
// The backup is then promoted and every key ever acknowledged is read there. Each read is classified as
// consistent (the latest acknowledged version), detected (503 replication.pending or 410 dr.lost), or an
// undetected inconsistency (older, or absent).
//
// Pipelines, each on fresh regions:
// - keyFirst: Ringstore, key-sync (the default): the key message is in the backup's queue before the ack.
// - keyFirstAsync: Ringstore with the namespace's drMode `async`: key messages leave from the stream.
// - together: the baseline. Each value, then its key message, after the acknowledgement, as a store that
//   ships key and value as one does (the reference's "traditional approach").
//
// Also measured, on its own regions: the write latency of key-sync against async (1 KiB values,
// interleaved), as a ratio. Writes bench/results/dr-<BENCH_LABEL>.json and docs/benchmarks-dr.svg.
import { createHash } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import * as z from 'zod';
import { startLocalRegions, type LocalRegions } from '../cdk/local/regions';
import { drStats } from '../lambdas/wiring/dr';
import { benchHome, codeVersion, commonSettingsShape, machineFacts, startWatchdog, benchResultsDir } from './environment';
import { renderDrSvg, drSvgPath } from './plot';

const pipelines = ['keyFirst', 'keyFirstAsync', 'together'] as const;
type Pipeline = (typeof pipelines)[number];

const settings = z
  .object({
    ...commonSettingsShape,
    BENCH_LABEL: z
      .string()
      .regex(/^[a-z0-9-]+$/)
      .default('latest'),
    /** Concurrent writers (the reference loads the store at its maximum throughput). */
    BENCH_DR_WRITERS: z.coerce.number().int().min(1).max(64).default(8),
    /** Bandwidth of the link each way, KB/s: 12,500 = 100 Mbit/s. */
    BENCH_DR_BANDWIDTH_KBPS: z.coerce.number().int().min(1).default(12_500),
    BENCH_DR_LATENCY_MS: z.coerce.number().int().min(0).default(5),
    /** Acknowledged writes before the disaster, per value size (10 KB,100 KB,1 MB,10 MB). */
    BENCH_DR_WRITES: z
      .string()
      .default('1000,1000,300,60')
      .transform((text) => text.split(',').map(Number)),
    BENCH_DR_PIPELINES: z
      .string()
      .default(pipelines.join(','))
      .transform((text) => text.split(',') as Pipeline[]),
    /** Writes per mode in the key-sync latency comparison. */
    BENCH_DR_LATENCY_WRITES: z.coerce.number().int().min(10).default(200),
  })
  .parse(process.env);

const sizes = [10_000, 100_000, 1_000_000, 10_000_000] as const;
/** The reference's reduction of inconsistencies by key-first shipping at each size (004, §4.2). */
const referenceReductionPercent = [10, 39, 64, 90] as const;
/** Bodies up to this go in one PUT; larger ones through the upload flow (docs/api.md). */
const directBodyBytesMax = 4 * 1024 * 1024;

interface Written {
  key: string;
  version: number;
  sha256: string;
}

interface DisasterResult {
  pipeline: Pipeline;
  valueBytes: number;
  acknowledged: number;
  keys: number;
  consistent: number;
  detected: number;
  pending: number;
  lost: number;
  undetected: number;
  undetectedPercent: number;
  /** Key-sync writes: the key message's round trip to the backup's queue (when the backup knows of the write). */
  keySyncMs: { p50: number; p99: number; count: number };
  /** From the primary's write to the key message recorded as pending in the backup. */
  keyLagMs: { p50: number; p99: number; count: number };
  valueLagMs: { p50: number; p99: number; count: number };
  writesPerSecond: number;
  promotion: unknown;
}

const log = (line: string) => console.error(`[bench:dr] ${line}`);

async function startRegions(home: string, pipeline: Pipeline | 'latency'): Promise<LocalRegions> {
  return startLocalRegions({
    home,
    vendorDir: settings.RINGSTORE_VENDOR_DIR,
    port: 0,
    maintenanceIntervalMs: 0,
    sweeperIntervalMs: 0,
    autoFailover: false,
    // The link is cut at the disaster: nothing more can arrive.
    valueWaitMs: 1_000,
    link: { latencyMs: settings.BENCH_DR_LATENCY_MS, bandwidthKBps: settings.BENCH_DR_BANDWIDTH_KBPS },
    ...(pipeline === 'together' ? { shipOrder: 'together' as const } : {}),
  });
}

async function call(
  url: string,
  key: string,
  init: { method?: string; body?: Uint8Array | string; headers?: Record<string, string> } = {},
) {
  return fetch(url, {
    method: init.method ?? 'GET',
    headers: { 'x-api-key': key, ...init.headers },
    ...(init.body === undefined ? {} : { body: init.body }),
    redirect: 'manual',
  });
}

/** Sets the namespace's DR mode in the primary (the authorizer caches it; a fresh key sees it at once). */
async function namespaceKey(regions: LocalRegions, namespace: string, drMode: 'key-sync' | 'async'): Promise<string> {
  const { url, adminKey } = regions.primary;
  const json = { 'content-type': 'application/json' };
  await call(`${url}/v1/admin/namespaces/${namespace}`, adminKey, { method: 'PUT', headers: json, body: JSON.stringify({ drMode }) });
  const created = await call(`${url}/v1/admin/keys`, adminKey, { method: 'POST', headers: json, body: JSON.stringify({ namespace }) });
  const { apiKey } = (await created.json()) as { apiKey: string };
  // The backup needs the key too: it reads every key back after the promotion.
  await regions.syncApiKeys();
  return apiKey;
}

/** One write; the version it was acknowledged at, or undefined when it was not acknowledged. */
async function write(baseUrl: string, apiKey: string, key: string, value: Uint8Array): Promise<number | undefined> {
  const path = `${baseUrl}/v1/kv/${encodeURIComponent(key)}`;
  const octets = { 'content-type': 'application/octet-stream' };
  try {
    if (value.byteLength <= directBodyBytesMax) {
      const response = await call(path, apiKey, { method: 'PUT', body: value, headers: octets });
      return response.status === 200 ? ((await response.json()) as { version: number }).version : undefined;
    }
    const json = { 'content-type': 'application/json' };
    const started = await call(`${path}/uploads`, apiKey, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ size: value.byteLength, contentType: 'application/octet-stream' }),
    });
    if (started.status !== 201) return undefined;
    const ticket = (await started.json()) as { uploadId: string; url: string; headers: Record<string, string> };
    const uploaded = await fetch(ticket.url, { method: 'PUT', headers: ticket.headers, body: value });
    if (!uploaded.ok) return undefined;
    const sha256 = createHash('sha256').update(value).digest('hex');
    const committed = await call(`${path}/uploads/${ticket.uploadId}/commit`, apiKey, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ sha256, contentType: 'application/octet-stream' }),
    });
    return committed.status === 200 ? ((await committed.json()) as { version: number }).version : undefined;
  } catch {
    return undefined;
  }
}

/** A value of `size` bytes, different for every write (its sha256 identifies it). */
function valueOf(size: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(size);
  let state = (seed * 2654435761) >>> 0;
  for (let index = 0; index < size; index += 4) {
    state = (state * 1664525 + 1013904223) >>> 0;
    bytes[index] = state & 0xff;
  }
  return bytes;
}

async function disasterRun(pipeline: Pipeline, sizeIndex: number): Promise<DisasterResult> {
  const valueBytes = sizes[sizeIndex]!;
  const target = settings.BENCH_DR_WRITES[sizeIndex] ?? 100;
  const home = benchHome(settings.RINGSTORE_VENDOR_DIR);
  const regions = await startRegions(home, pipeline);
  try {
    const apiKey = await namespaceKey(regions, 'bench', pipeline === 'keyFirst' ? 'key-sync' : 'async');
    // Each key is written twice (keys = half the writes), so an older version can be served.
    const keyCount = Math.max(1, Math.floor(target / 2));
    const latest = new Map<string, Written>();
    let acknowledged = 0;
    let next = 0;
    let disaster = false;
    const started = performance.now();
    const writer = async () => {
      while (!disaster) {
        const sequence = next++;
        const key = `dr-bench/${String(sequence % keyCount).padStart(5, '0')}`;
        const value = valueOf(valueBytes, sequence);
        const version = await write(regions.primary.url, apiKey, key, value);
        if (version === undefined) continue;
        acknowledged += 1;
        const sha256 = createHash('sha256').update(value).digest('hex');
        if ((latest.get(key)?.version ?? 0) < version) latest.set(key, { key, version, sha256 });
        if (acknowledged >= target && !disaster) {
          // The disaster, at the Nth acknowledgement: the link goes first, then the primary.
          disaster = true;
          await regions.link?.cut();
        }
      }
    };
    await Promise.all(Array.from({ length: settings.BENCH_DR_WRITERS }, writer));
    const elapsedS = (performance.now() - started) / 1000;
    await regions.primary.stop();
    log(`${pipeline} ${valueBytes} B: ${acknowledged} acknowledged in ${elapsedS.toFixed(1)} s; promoting the backup`);
    const promotion = await promote(regions);
    const counts = await readBack(regions, apiKey, [...latest.values()]);
    const stats = drStats(regions.backup.wiring).summary();
    const primaryStats = drStats(regions.primary.wiring).summary();
    return {
      pipeline,
      valueBytes,
      acknowledged,
      keys: latest.size,
      ...counts,
      undetectedPercent: (100 * counts.undetected) / Math.max(1, latest.size),
      keySyncMs: { p50: primaryStats.keySyncMs.p50, p99: primaryStats.keySyncMs.p99, count: primaryStats.keySyncMs.count },
      keyLagMs: { p50: stats.keyLagMs.p50, p99: stats.keyLagMs.p99, count: stats.keyLagMs.count },
      valueLagMs: { p50: stats.valueLagMs.p50, p99: stats.valueLagMs.p99, count: stats.valueLagMs.count },
      writesPerSecond: acknowledged / elapsedS,
      promotion,
    };
  } finally {
    await stopQuietly(regions);
    await rm(home, { recursive: true, force: true });
  }
}

async function stopQuietly(regions: LocalRegions): Promise<void> {
  // The primary was stopped at the disaster; the backup and the link remain.
  await regions.backup.stop().catch(() => undefined);
  await regions.link?.stop().catch(() => undefined);
}

async function promote(regions: LocalRegions): Promise<unknown> {
  const { url, adminKey } = regions.backup;
  await call(`${url}/v1/admin/dr/promote`, adminKey, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ reason: 'bench:dr disaster' }),
  });
  for (let attempt = 0; attempt < 600; attempt += 1) {
    const response = await call(`${url}/v1/admin/dr/report`, adminKey);
    if (response.status === 200) {
      const report = (await response.json()) as { status: string; lost?: { count: number; keys: unknown[] } };
      if (report.status !== 'running') return { ...report, lost: { count: report.lost?.count ?? 0 } };
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('the promotion did not finish within 2 minutes');
}

/** Reads every acknowledged key in the promoted backup and classifies the answer. */
async function readBack(regions: LocalRegions, apiKey: string, written: Written[]) {
  const counts = { consistent: 0, detected: 0, pending: 0, lost: 0, undetected: 0 };
  let index = 0;
  const reader = async () => {
    while (index < written.length) {
      const { key, version } = written[index++]!;
      const response = await call(`${regions.backup.url}/v1/kv/${encodeURIComponent(key)}`, apiKey);
      const etag = response.headers.get('etag');
      await response.arrayBuffer();
      if ((response.status === 200 || response.status === 303) && etag === `"${version}"`) counts.consistent += 1;
      else if (response.status === 503) {
        counts.detected += 1;
        counts.pending += 1;
      } else if (response.status === 410) {
        counts.detected += 1;
        counts.lost += 1;
      } else counts.undetected += 1;
    }
  };
  await Promise.all(Array.from({ length: 8 }, reader));
  return counts;
}

/** Mean and p50 write latency of key-sync against async, interleaved on one pair of regions. */
async function keySyncCost() {
  const home = benchHome(settings.RINGSTORE_VENDOR_DIR);
  const regions = await startRegions(home, 'latency');
  try {
    const keys = { 'key-sync': await namespaceKey(regions, 'sync', 'key-sync'), async: await namespaceKey(regions, 'lazy', 'async') };
    const times: Record<'key-sync' | 'async', number[]> = { 'key-sync': [], async: [] };
    const value = valueOf(1024, 1);
    for (let round = 0; round < settings.BENCH_DR_LATENCY_WRITES; round += 1) {
      for (const mode of round % 2 === 0 ? (['key-sync', 'async'] as const) : (['async', 'key-sync'] as const)) {
        const started = performance.now();
        const version = await write(regions.primary.url, keys[mode], `latency/${round % 50}`, value);
        if (version !== undefined) times[mode].push(performance.now() - started);
      }
    }
    const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
    const sync = p50(times['key-sync']);
    const asyncMs = p50(times.async);
    return { keySyncP50Ms: sync, asyncP50Ms: asyncMs, ratio: sync / asyncMs, samples: times['key-sync'].length };
  } finally {
    await regions.stop().catch(() => undefined);
    await rm(home, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  startWatchdog(settings.BENCH_TIMEOUT_SECONDS * 4, 'bench:dr');
  const latency = await keySyncCost();
  log(
    `key-sync p50 ${latency.keySyncP50Ms.toFixed(1)} ms, async p50 ${latency.asyncP50Ms.toFixed(1)} ms: ratio ${latency.ratio.toFixed(2)}`,
  );
  const runs: DisasterResult[] = [];
  for (const pipeline of settings.BENCH_DR_PIPELINES) {
    for (const [sizeIndex] of sizes.entries()) {
      const result = await disasterRun(pipeline, sizeIndex);
      log(
        `${pipeline} ${result.valueBytes} B: ${result.keys} keys, ${result.consistent} consistent, ${result.detected} detected, ` +
          `${result.undetected} undetected (${result.undetectedPercent.toFixed(1)} %); key lag p50 ${result.keyLagMs.p50} ms, value lag p50 ${result.valueLagMs.p50} ms`,
      );
      runs.push(result);
    }
  }
  const saved = {
    label: settings.BENCH_LABEL,
    at: new Date().toISOString(),
    code: codeVersion(),
    machine: machineFacts(),
    settings: {
      writers: settings.BENCH_DR_WRITERS,
      latencyMs: settings.BENCH_DR_LATENCY_MS,
      bandwidthKBps: settings.BENCH_DR_BANDWIDTH_KBPS,
      writes: settings.BENCH_DR_WRITES,
    },
    referenceReductionPercent,
    latency,
    runs,
  };
  const dir = benchResultsDir;
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, `dr-${settings.BENCH_LABEL}.json`), `${JSON.stringify(saved, null, 2)}\n`);
  const subtitle = `${settings.BENCH_DR_LATENCY_MS} ms each way, ${settings.BENCH_DR_BANDWIDTH_KBPS} KB/s, ${settings.BENCH_DR_WRITERS} writers; code ${saved.code.commit}`;
  await writeFile(
    drSvgPath,
    await renderDrSvg(
      runs.map((run) => ({
        pipeline: run.pipeline,
        valueBytes: run.valueBytes,
        undetectedPercent: run.undetectedPercent,
        detectedPercent: (100 * run.detected) / Math.max(1, run.keys),
      })),
      sizes.map((valueBytes, index) => ({ valueBytes, reductionPercent: referenceReductionPercent[index]! })),
      subtitle,
    ),
  );
  console.log(drTable(runs));
  console.log(
    `\nkey-sync write p50 / async write p50: ${latency.ratio.toFixed(2)} (${latency.keySyncP50Ms.toFixed(1)} ms / ${latency.asyncP50Ms.toFixed(1)} ms)`,
  );
}

function drTable(runs: DisasterResult[]): string {
  const lines = [
    '| pipeline | value | acknowledged writes | keys | consistent | detected (pending / lost) | undetected | key-sync p50 / p99 (ms) | key lag p50 / p99 (ms) | value lag p50 / p99 (ms) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const run of runs) {
    lines.push(
      `| ${run.pipeline} | ${sizeText(run.valueBytes)} | ${run.acknowledged} | ${run.keys} | ${run.consistent} | ${run.detected} (${run.pending} / ${run.lost}) | ` +
        `${run.undetected} (${run.undetectedPercent.toFixed(1)} %) | ${run.keySyncMs.count ? `${Math.round(run.keySyncMs.p50)} / ${Math.round(run.keySyncMs.p99)}` : '-'} | ${run.keyLagMs.p50} / ${run.keyLagMs.p99} | ${run.valueLagMs.p50} / ${run.valueLagMs.p99} |`,
    );
  }
  return lines.join('\n');
}

function sizeText(bytes: number): string {
  return bytes >= 1_000_000 ? `${bytes / 1_000_000} MB` : `${bytes / 1_000} KB`;
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
