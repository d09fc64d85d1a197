// The strong GET taken apart: the same read at each layer between the raw request and the handler, so
// the difference between neighbours is what one layer costs (shard store, ring lookup, cache refresh).
import { performance } from 'node:perf_hooks';
import { DynamoShardStore } from '../lambdas/adapters/dynamodb-shard-store';
import { FaultyShardStore } from '../lambdas/adapters/fault-injection';
import { S3BlobStore } from '../lambdas/adapters/s3-blob-store';
import { KvService } from '../lambdas/core/kv';
import { cacheKeyOf, L1Cache } from '../lambdas/core/l1-cache';
import { tokenOf } from '../lambdas/core/ring';
import { validateKey } from '../lambdas/core/validation';
import { randomIds, systemClock } from '../lambdas/wiring/wiring';
import type { BenchRuntime as Runtime } from './runtime';
import type { ShardStore } from '../lambdas/ports';
import { limits } from '../schemas/topology';
import type { BenchCase } from './cases';
import type { Workload } from './workload';

/** The shard store the runtime builds (with the fault wrapper when the runtime has one), built again. */
function shardStoreOf(rt: Runtime): ShardStore {
  const store = new DynamoShardStore(rt.dynamodb);
  return rt.faults ? new FaultyShardStore(store, rt.faults) : store;
}

/**
 * @example
 * const cases = await strongGetLadderCases(runtime(), workload, 'local');
 */
export async function strongGetLadderCases(rt: Runtime, workload: Workload, namespace: string): Promise<BenchCase[]> {
  const shards = shardStoreOf(rt);
  const ring = await rt.ring.current();
  const ownerOf = new Map(workload.keys.map((key) => [key, ring.replicasOf(tokenOf(namespace, key))[0]!.table]));
  // The runtime's KvService without a cache: what the strong read costs before the refresh after it.
  const uncached = new KvService({
    shards,
    blobs: new S3BlobStore(rt.s3, rt.config.blobBucket),
    ring: rt.ring,
    clock: systemClock,
    ids: randomIds,
    limits,
    replication: rt.replication,
    health: rt.health,
    ...(rt.faults ? { faults: rt.faults } : {}),
  });
  const expectValue = (value: Uint8Array | undefined, what: string) => {
    if (value?.length !== workload.valueOf(0).length) throw new Error(`${what} found no value`);
  };
  const viaKv = (kv: KvService, what: string) => async (i: number) => {
    const result = await kv.get(namespace, workload.keyOf(i), 'strong');
    expectValue(result.kind === 'value' ? result.value : undefined, `${what} of ${workload.keyOf(i)}`);
  };
  return [
    {
      id: 'diag.storeGetStrong',
      label: 'shard store get strong (toolbox, document client)',
      layer: 'diagnostic',
      kind: 'getStrong',
      run: async (i) => {
        const key = workload.keyOf(i);
        const item = await shards.get(ownerOf.get(key)!, namespace, key, { consistent: true });
        expectValue(item?.value, `shard store get of ${key}`);
      },
    },
    {
      id: 'diag.kvGetStrongNoCache',
      label: 'KvService.get strong, no cache',
      layer: 'diagnostic',
      kind: 'getStrong',
      run: viaKv(uncached, 'KvService.get without cache'),
    },
    {
      id: 'diag.kvGetStrong',
      label: "KvService.get strong (the handler's call)",
      layer: 'diagnostic',
      kind: 'getStrong',
      run: viaKv(rt.kv, 'KvService.get'),
    },
  ];
}

/** Microseconds per call of the in-process steps of a strong read that do no I/O. */
export interface StrongGetStepCosts {
  validateKeyMicros: number;
  tokenOfMicros: number;
  ringCurrentMicros: number;
  replicasOfMicros: number;
  /** L1 peek and the version comparison: the whole refresh when this instance already knows the version. */
  l1PeekMicros: number;
  /** Redis round trip of the version-guarded put: what a refresh costs when the version is new here. */
  l2PutMicros: number;
}

async function microsPerCall(calls: number, step: (i: number) => unknown): Promise<number> {
  for (let i = 0; i < Math.min(1_000, calls); i += 1) await step(i);
  const started = performance.now();
  for (let i = 0; i < calls; i += 1) await step(i);
  return ((performance.now() - started) * 1000) / calls;
}

/** Times each step alone, many times over, to price what the ladder's differences are too small to show. */
export async function strongGetStepCosts(rt: Runtime, workload: Workload, namespace: string): Promise<StrongGetStepCosts> {
  const ring = await rt.ring.current();
  const calls = 20_000;
  const keyOf = (i: number) => workload.keyOf(i);
  const round = (micros: number) => Math.round(micros * 100) / 100;
  const l2 = rt.l2;
  const entry = { version: Number.MAX_SAFE_INTEGER, tombstone: false, contentType: 'application/octet-stream', size: 0, sha256: '' };
  // The runtime's L1 is private to its TwoLevelCache: an L1 of the same configuration holding the same keys.
  const { cache: c } = rt.config;
  const l1 = new L1Cache({ policy: c.l1Policy, entriesMax: c.l1EntriesMax, bytesMax: c.l1BytesMax, ttlMs: c.l1TtlMs, clock: systemClock });
  for (const [n, key] of workload.keys.entries()) {
    l1.put(cacheKeyOf(namespace, key), { ...entry, version: 1, size: workload.valueOf(n).length, value: workload.valueOf(n) });
  }
  return {
    validateKeyMicros: round(await microsPerCall(calls, (i) => validateKey(keyOf(i), limits))),
    tokenOfMicros: round(await microsPerCall(calls, (i) => tokenOf(namespace, keyOf(i)))),
    ringCurrentMicros: round(await microsPerCall(calls, () => rt.ring.current())),
    replicasOfMicros: round(await microsPerCall(calls, (i) => ring.replicasOf((i * 2_654_435_761) >>> 0))),
    l1PeekMicros: round(await microsPerCall(calls, (i) => (l1.peek(cacheKeyOf(namespace, keyOf(i)))?.version ?? 0) >= 1)),
    // A key of its own with a version no write reaches: every put after the first is refused by the guard,
    // which is still the full round trip and script.
    l2PutMicros: l2 ? round(await microsPerCall(2_000, () => l2.put(cacheKeyOf(namespace, 'bench/step-cost'), entry, 60_000))) : 0,
  };
}
