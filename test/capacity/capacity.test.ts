// What every operation costs DynamoDB: requests and capacity units on each table and index, counted by
// DynamoDB Local itself (ReturnConsumedCapacity INDEXES) for operations sent through the REST API of an
// in-process local cloud, replication included. The counts must equal the model in
// bench/capacity/operation-costs.ts, which docs/capacity.md and the capacity calculator are built on:
// a change that raises a cost fails here, and one that lowers it updates the model.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LocalCloud, startLocalCloud } from '../../cdk/local/cloud';
import { tokenOf } from '../../lambdas/core/ring';
import { documentClient } from '../../lambdas/wiring/clients';
import { sharedEngines, sharingEngines } from '../support/shared-engines';
import { ringSource } from '../../lambdas/wiring/control';
import { type CapacityMeter, type CapacityTotals, meterCapacity } from '../../bench/capacity/meter';
import {
  type OperationCost,
  type OperationName,
  costsAsSource,
  measuredReplicationFactor,
  operationCosts,
} from '../../bench/capacity/operation-costs';

/** Each operation runs on this many keys; the costs are per operation (the mean over them). */
const repetitions = 6;
/** Keys a listing page finds. */
const listedKeys = 40;
/**
 * After the stream pollers have caught up (`replicationCaughtUp`), no request for this long: nothing else is left
 * in the background (two polls of a 250 ms stream poller).
 */
const settledMs = 500;

let cloud: LocalCloud;
let home: string;
let meter: CapacityMeter;
let ownerOf: (key: string) => string;
const namespace = 'local';

/** The cloud's stage: its tables on the worker's shared engines are apart from the fault suites' (their own stages). */
const stage = `capacity-${randomBytes(3).toString('hex')}`;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'ringstore-capacity-'));
  // On the DynamoDB Local the worker's fault suites share (test/support/shared-engines.ts): the units
  // DynamoDB Local reports are per request, whatever else its other tables hold.
  const engines = sharingEngines() ? await sharedEngines() : undefined;
  cloud = await startLocalCloud({
    ...(engines ? { stage, runningEngines: engines } : {}),
    home,
    vendorDir: process.env.RINGSTORE_VENDOR_DIR ?? join(__dirname, '..', '..', '.ringstore', 'vendor'),
    port: 0,
    valueCache: false,
    replicationFactor: measuredReplicationFactor,
    shardCount: 4,
    maintenanceIntervalMs: 0,
    sweeperIntervalMs: 0,
    // The model counts the change feed's one entry per write. An append slower than the settle time is appended again
    // (docs/watch.md, "No gap"): a matter of the machine's load, not of the operation, so the settle time here is the
    // longest, and no append outlasts it.
    watch: { settleMs: 10_000 },
  });
  meter = meterCapacity(documentClient(cloud.wiring), engines ? stage : 'local');
  const ring = await ringSource(cloud.wiring).current();
  ownerOf = (key) => ring.ownerOf(tokenOf(namespace, key)).table;
}, 120_000);

afterAll(async () => {
  await cloud?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

let sequence = 0;
const freshKey = (label: string) => `capacity/${label}/${String(sequence++).padStart(5, '0')}`;

async function send(
  path: string,
  init: { method?: string; body?: string | Uint8Array; headers?: Record<string, string> } = {},
): Promise<Response> {
  const response = await fetch(`${cloud.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { 'x-api-key': cloud.apiKey, ...init.headers },
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  if (response.status >= 300) throw new Error(`${init.method ?? 'GET'} ${path} answered ${response.status}: ${await response.text()}`);
  return response;
}

const kvPath = (key: string) => `/v1/kv/${encodeURIComponent(key)}`;
const value = 'v'.repeat(100);
const put = (key: string, consistency = 'eventual', headers: Record<string, string> = {}) =>
  send(`${kvPath(key)}?consistency=${consistency}`, { method: 'PUT', body: value, headers: { 'content-type': 'text/plain', ...headers } });

/** `size` keys, each owned by a different shard when `spread`, else all by one shard. */
function keysOn(label: string, size: number, spread: boolean): string[] {
  const keys: string[] = [];
  const owners = new Set<string>();
  while (keys.length < size) {
    const key = freshKey(label);
    const owner = ownerOf(key);
    if (spread ? owners.has(owner) : owners.size > 0 && !owners.has(owner)) continue;
    owners.add(owner);
    keys.push(key);
  }
  return keys;
}

const txn = (ops: unknown[], consistency = 'eventual') =>
  send(`/v1/txn?consistency=${consistency}`, {
    method: 'POST',
    body: JSON.stringify({ ops }),
    headers: { 'content-type': 'application/json' },
  });
const txnPuts = (keys: string[]) => txn(keys.map((key) => ({ op: 'put', key, value })));

const increment = (key: string, consistency = 'eventual') =>
  send(`${kvPath(key)}/increment?consistency=${consistency}`, {
    method: 'POST',
    body: JSON.stringify({ by: 1 }),
    headers: { 'content-type': 'application/json' },
  });

/**
 * The volumes of the scenarios, each created and attached once: their writer epochs. `capacity` for the plain volume
 * scenarios; `snapped` for the snapshot ones (so the others run on a volume with no snapshot kept, as they are counted).
 */
const volumeEpochs = new Map<string, number>();
const volumeBlock = 4096;
const jsonHeaders = { 'content-type': 'application/json' };
async function attachedVolume(name: 'capacity' | 'snapped'): Promise<number> {
  if (!volumeEpochs.has(name)) {
    await send('/v1/volumes', { method: 'POST', body: JSON.stringify({ name, sizeBytes: 64 * 1024 * 1024 }), headers: jsonHeaders });
    const lease = await send(`/v1/volumes/${name}/lease`, {
      method: 'POST',
      body: JSON.stringify({ holder: 'capacity' }),
      headers: jsonHeaders,
    });
    volumeEpochs.set(name, ((await lease.json()) as { epoch: number }).epoch);
  }
  return volumeEpochs.get(name)!;
}
/** Each scenario key's own blocks of the volume (four), so no repetition reads or writes another's. */
const blocksOf = new Map<string, number>();
const offsetOf = (key: string) => {
  if (!blocksOf.has(key)) blocksOf.set(key, blocksOf.size * 4);
  return blocksOf.get(key)! * volumeBlock;
};
const volumeWrite = async (offset: number, length: number) =>
  send(`/v1/volumes/capacity/data?offset=${offset}&epoch=${await attachedVolume('capacity')}`, {
    method: 'PUT',
    body: new Uint8Array(length).fill(7),
    headers: { 'content-type': 'application/octet-stream' },
  });
const volumeRead = async (offset: number, length: number) =>
  send('/v1/volumes/capacity/data', { headers: { range: `bytes=${offset}-${offset + length - 1}` } });

// Each snapshot repetition writes its block of `snapped`, then takes a snapshot named by its key.
const snappedWrite = async (key: string) =>
  send(`/v1/volumes/snapped/data?offset=${offsetOf(key)}&epoch=${await attachedVolume('snapped')}`, {
    method: 'PUT',
    body: new Uint8Array(volumeBlock).fill(7),
    headers: { 'content-type': 'application/octet-stream' },
  });
const snapshotNameOf = (key: string) => key.replace(/[^A-Za-z0-9]/g, '-').slice(-60);
const takeSnapshot = (key: string) =>
  send('/v1/volumes/snapped/snapshots', { method: 'POST', body: JSON.stringify({ name: snapshotNameOf(key) }), headers: jsonHeaders });

// Each clone repetition writes its block of `snapped`, takes a snapshot named by its key and makes a clone of it.
const cloneOf = async (key: string) => {
  await snappedWrite(key);
  await takeSnapshot(key);
  const clone = `clone-${snapshotNameOf(key)}`.slice(0, 64);
  await send('/v1/volumes', {
    method: 'POST',
    body: JSON.stringify({ name: clone, from: { volume: 'snapped', snapshot: snapshotNameOf(key) } }),
    headers: jsonHeaders,
  });
  return clone;
};
const clones = new Map<string, string>();

/** The entity tag each key was written with, for the conditional write. */
const etags = new Map<string, string>();

interface Scenario {
  name: OperationName;
  /** Runs before the count (the keys the operation needs), once per repetition. */
  prepare?: (key: string) => Promise<unknown>;
  run: (key: string) => Promise<unknown>;
}

const scenarios: Scenario[] = [
  { name: 'put eventual, new key', run: (key) => put(key) },
  { name: 'put eventual, overwrite', prepare: (key) => put(key), run: (key) => put(key) },
  { name: 'put strong, new key', run: (key) => put(key, 'strong') },
  { name: 'put strong, overwrite', prepare: (key) => put(key), run: (key) => put(key, 'strong') },
  {
    name: 'put eventual, If-Match',
    prepare: async (key) => etags.set(key, (await put(key)).headers.get('etag') ?? ''),
    run: (key) => put(key, 'eventual', { 'if-match': etags.get(key)! }),
  },
  { name: 'get eventual', prepare: (key) => put(key), run: (key) => send(kvPath(key)) },
  { name: 'get strong', prepare: (key) => put(key), run: (key) => send(`${kvPath(key)}?consistency=strong`) },
  { name: 'delete eventual', prepare: (key) => put(key), run: (key) => send(kvPath(key), { method: 'DELETE' }) },
  { name: 'delete strong', prepare: (key) => put(key), run: (key) => send(`${kvPath(key)}?consistency=strong`, { method: 'DELETE' }) },
  {
    name: 'list a page of 40 keys',
    prepare: async (key) => {
      for (let n = 0; n < listedKeys; n += 1) await put(`${key}/${String(n).padStart(3, '0')}`);
    },
    run: (key) => send(`/v1/kv?prefix=${encodeURIComponent(`${key}/`)}&limit=100`),
  },
  { name: 'txn 3 puts on 1 shard', run: (key) => txnPuts(keysOn(key, 3, false)) },
  { name: 'txn 3 puts on 3 shards', run: (key) => txnPuts(keysOn(key, 3, true)) },
  // Block volumes, in steady state (the blocks written before): a 4 KiB write or read at a block boundary, and one
  // straddling two blocks (a read-modify-write of both).
  {
    name: 'volume write 4 KiB, aligned',
    prepare: (key) => volumeWrite(offsetOf(key), volumeBlock),
    run: (key) => volumeWrite(offsetOf(key), volumeBlock),
  },
  {
    name: 'volume write 4 KiB, unaligned',
    prepare: (key) => volumeWrite(offsetOf(key), 2 * volumeBlock),
    run: (key) => volumeWrite(offsetOf(key) + volumeBlock / 2, volumeBlock),
  },
  {
    name: 'volume read 4 KiB, aligned',
    prepare: (key) => volumeWrite(offsetOf(key), volumeBlock),
    run: (key) => volumeRead(offsetOf(key), volumeBlock),
  },
  {
    name: 'volume read 4 KiB, unaligned',
    prepare: (key) => volumeWrite(offsetOf(key), 2 * volumeBlock),
    run: (key) => volumeRead(offsetOf(key) + volumeBlock / 2, volumeBlock),
  },
  // After a snapshot: a block's first change copies it (its copy and its index, the copy in a transaction of its own);
  // a read of the snapshot reads the block with its index at one instant, then the copy.
  {
    name: 'volume write 4 KiB, first after a snapshot',
    prepare: async (key) => {
      await snappedWrite(key);
      await takeSnapshot(key);
    },
    run: (key) => snappedWrite(key),
  },
  {
    name: 'volume snapshot read 4 KiB, changed since',
    prepare: async (key) => {
      await snappedWrite(key);
      await takeSnapshot(key);
      await snappedWrite(key);
    },
    run: (key) =>
      send(`/v1/volumes/snapped/snapshots/${snapshotNameOf(key)}/data`, {
        headers: { range: `bytes=${offsetOf(key)}-${offsetOf(key) + volumeBlock - 1}` },
      }),
  },
  // A clone's block it never wrote: read as its origin's snapshot holds it.
  {
    name: 'volume clone read 4 KiB, inherited',
    prepare: async (key) => clones.set(key, await cloneOf(key)),
    run: (key) =>
      send(`/v1/volumes/${clones.get(key)!}/data`, {
        headers: { range: `bytes=${offsetOf(key)}-${offsetOf(key) + volumeBlock - 1}` },
      }),
  },
  // Last, so that the keys the scenarios above make (and the listing buckets they fall in) stay as they were.
  // A counter that exists: the owner's strong read, then a write of the key as a PUT's, guarded by the version read.
  { name: 'increment eventual', prepare: (key) => increment(key), run: (key) => increment(key) },
  { name: 'increment strong', prepare: (key) => increment(key), run: (key) => increment(key, 'strong') },
];

/** The mean per operation of what the meter counted, control table aside (it is read on timers, not per request). */
function perOperation(totals: CapacityTotals, count: number): OperationCost {
  const scale = (from: Record<string, number>) =>
    Object.fromEntries(
      Object.entries(from)
        .filter(([name]) => !name.includes('control'))
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, amount]) => [name, Math.round((amount / count) * 100) / 100]),
    );
  return {
    requests: scale(totals.requests),
    writeUnits: scale(totals.writeUnits),
    readUnits: scale(totals.readUnits),
    refusedWrites: scale(totals.refusedWrites),
  };
}

describe('capacity per operation (DynamoDB Local, RF 3, 4 shards, 100-byte values, no value cache)', () => {
  const measured = new Map<OperationName, OperationCost>();

  afterAll(() => {
    // On a change, the model to paste into bench/capacity/operation-costs.ts.
    if (measured.size === scenarios.length) process.stdout.write(`${costsAsSource(measured)}\n`);
  });

  it.each(scenarios.map((scenario) => [scenario.name, scenario] as const))('%s', async (_name, scenario) => {
    const keys = Array.from({ length: repetitions }, () => freshKey(scenario.name.replace(/\W+/g, '-')));
    for (const key of keys) await scenario.prepare?.(key);
    await cloud.replicationCaughtUp();
    await meter.quiet(settledMs);
    meter.reset();
    // Each operation's background work (replication, the applier) is done before the next starts, so
    // stream batches hold one operation's records and the request counts do not depend on timing.
    for (const key of keys) {
      await scenario.run(key);
      await cloud.replicationCaughtUp();
    }
    await cloud.replicationCaughtUp();
    await meter.quiet(settledMs);
    const cost = perOperation(meter.totals(), repetitions);
    measured.set(scenario.name, cost);
    expect(cost).toEqual(operationCosts[scenario.name]);
  });
});
