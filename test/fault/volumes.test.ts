// Block volumes against the engines under crash points (docs/volumes.md, "Crashes"): one writer writes a unique
// pattern at unaligned offsets, across a placement-group boundary whose two groups live on two shards (two-phase
// commit) and inside one group (one atomic write), with a crash armed at each point of each path (the transaction's,
// and the replica fan-out's). After every write whose answer was not an acknowledgement, the range it covered holds
// all of it or none of it; at the end the volume reads back exactly what the acknowledged (and whole crashed) writes
// made of it, and every replica of every block holds its owner's copy. A writer whose lease was taken over while its
// write crashed lands nothing after; a volume whose shard fails over while it is written loses no acknowledged write;
// a snapshot whose creation crashes while the writer writes is finished by the same request, and holds the window as
// it was at one instant between the writes acknowledged before it was asked for and the one in flight at its answer.
import { type CrashPoint, volumeCrashPoints } from '../../lambdas/ports';
import { type Ring, tokenOf } from '../../lambdas/core/ring';
import { blockKey, volumeNamespaceOf, volumeRecordKey } from '../../lambdas/core/volume-layout';
import { volumeLimits } from '../../schemas/topology';
import {
  baseSeed,
  type ConvergenceResult,
  deriveSeed,
  describeFaults,
  driveUntil,
  eventually,
  type FaultCloud,
  localNamespace,
  readReplicas,
  Rng,
  sleep,
  startFaultCloud,
  waitForConvergence,
  waitForTxnRecovery,
  withSeed,
} from './support';

const blockBytes = volumeLimits.blockBytes;
const groupBytes = volumeLimits.groupBlocks * blockBytes;
/** Sixteen placement groups (1 GiB, sparse): two neighbours on two shards are found among them. */
const groupCount = 16;
/** The bytes judged: 64 KiB before the boundary, 192 KiB after it (the atomic writes' group from +64 KiB). */
const windowBefore = 64 * 1024;
const windowBytes = 256 * 1024;
const writeBytesMax = 48 * 1024;
/** Bounds on driving a path to its crash, and on a crashed write's locks being released (its 5 s deadline, the sweeper). */
const driveStepsMax = 12;
const driveBoundMs = 60_000;
const settleBoundMs = 45_000;

const seed = baseSeed();
let cloud: FaultCloud;

beforeAll(async () => {
  cloud = await startFaultCloud('volumes', { RINGSTORE_MAINTENANCE_INTERVAL_MS: '0' });
}, 240_000);

afterAll(async () => {
  await cloud?.close();
});

interface Answer {
  status: number;
  code?: string;
  message?: string;
  body?: Uint8Array;
}

/** One call of the volumes API as the SDK makes it; status 0: no answer. */
async function call(path: string, init: { method?: string; json?: unknown; bytes?: Uint8Array; range?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = { 'x-api-key': cloud.apiKey };
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  if (init.bytes !== undefined) headers['content-type'] = 'application/octet-stream';
  if (init.range !== undefined) headers.range = init.range;
  try {
    const response = await fetch(`${cloud.url}${path}`, {
      method: init.method ?? 'GET',
      headers,
      ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
      ...(init.bytes !== undefined ? { body: Buffer.from(init.bytes) } : {}),
      signal: AbortSignal.timeout(30_000),
    });
    const body = new Uint8Array(await response.arrayBuffer());
    if (response.status < 300) return { status: response.status, body };
    const parsed = JSON.parse(Buffer.from(body).toString('utf8') || '{}') as { error?: { code?: string; message?: string } };
    return { status: response.status, ...(parsed.error?.code ? { code: parsed.error.code } : {}), message: parsed.error?.message ?? '' };
  } catch (error) {
    return { status: 0, message: error instanceof Error ? error.message : String(error) };
  }
}

const jsonOf = <T>(answer: Answer): T => JSON.parse(Buffer.from(answer.body ?? new Uint8Array()).toString('utf8')) as T;

/** `length` bytes whose every 4-byte word is `id` (so a torn write shows as two ids in one range). */
function patternOf(id: number, length: number): Uint8Array {
  const words = new Uint8Array(Math.ceil(length / 4) * 4);
  const view = new DataView(words.buffer);
  for (let offset = 0; offset < words.byteLength; offset += 4) view.setUint32(offset, id);
  return words.subarray(0, length);
}

const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

/**
 * The volume under test, its model (what the acknowledged and the whole crashed writes made of the window) and its
 * writer. Reads that meet a crashed write's undecided intent are asked again until its outcome is settled.
 */
class JudgedVolume {
  readonly model = new Uint8Array(windowBytes);
  private nextId = 1;
  readonly unexpected: string[] = [];
  readonly outcomes: Record<string, number> = {};
  /** What the last write came to: acknowledged, or, not acknowledged, found whole or absent. */
  lastVerdict: 'acknowledged' | 'whole' | 'absent' | 'torn' = 'absent';

  constructor(
    readonly name: string,
    /** The volume's byte offset of the window's first byte (64 KiB before the boundary). */
    readonly windowStart: number,
    public epoch: number,
  ) {}

  /** The window's bytes, read at one instant once nothing in it is undecided. */
  async readWindow(offset = 0, length = windowBytes): Promise<Uint8Array> {
    const from = this.windowStart + offset;
    const answer = await eventually(
      `a read of bytes ${from} to ${from + length} of ${this.name}`,
      () => call(`/v1/volumes/${this.name}/data`, { range: `bytes=${from}-${from + length - 1}` }),
      // A crashed write's intent holds its blocks until it is rolled back or forward: retryable, never a partial read.
      (read) => read.status === 206 || (read.status !== 409 && read.status !== 503),
      { boundMs: settleBoundMs, pollMs: 250 },
    );
    if (answer.status !== 206)
      throw new Error(`a read of ${this.name} answered ${answer.status} ${answer.code ?? ''} ${answer.message ?? ''}`);
    return answer.body!;
  }

  /**
   * Writes a unique pattern of `length` bytes at window offset `offset`; `settle` retries conflicts until it is
   * acknowledged. Returns the status; a write that was not acknowledged is judged whole or absent.
   */
  async write(offset: number, length: number, options: { settle?: boolean; epoch?: number } = {}): Promise<Answer> {
    const id = this.nextId++;
    const bytes = patternOf(id, length);
    const path = `/v1/volumes/${this.name}/data?offset=${this.windowStart + offset}&epoch=${options.epoch ?? this.epoch}`;
    const send = () => call(path, { method: 'PUT', bytes });
    const answer = options.settle
      ? await eventually(`write ${id} acknowledged`, send, (sent) => sent.status !== 409, { boundMs: settleBoundMs, pollMs: 250 })
      : await send();
    const outcome = `${answer.status}${answer.code ? ` ${answer.code}` : ''}`;
    this.outcomes[outcome] = (this.outcomes[outcome] ?? 0) + 1;
    if (answer.status === 200) {
      this.model.set(bytes, offset);
      this.lastVerdict = 'acknowledged';
      return answer;
    }
    // A refusal that says nothing was written (a conflict, a fence) is judged as absent; any other answer may have
    // landed: the range must then hold all of the write or none of it.
    if (answer.status >= 400 && answer.status < 500 && answer.status !== 409 && answer.code !== 'volume.fenced') {
      this.unexpected.push(`write ${id}: ${outcome} ${answer.message ?? ''}`);
    }
    const seen = await this.readWindow(offset, length);
    const before = this.model.subarray(offset, offset + length);
    if (same(seen, bytes)) {
      if (answer.status === 409 || answer.code === 'volume.fenced') this.unexpected.push(`write ${id} refused (${outcome}) but landed`);
      this.model.set(bytes, offset);
      this.lastVerdict = 'whole';
    } else if (same(seen, before)) {
      this.lastVerdict = 'absent';
    } else {
      this.unexpected.push(`write ${id} (${outcome}) at window offset ${offset}, ${length} bytes: torn (neither all of it nor none)`);
      this.model.set(seen, offset);
      this.lastVerdict = 'torn';
    }
    return answer;
  }
}

/** The writes answered otherwise than acknowledged so far, counted as they are answered (before they are judged). */
const refusedCount = (volume: JudgedVolume) =>
  Object.entries(volume.outcomes).reduce((sum, [outcome, count]) => sum + (outcome === '200' ? 0 : count), 0);

/** Finds the first boundary between two neighbouring groups whose owners differ: a write across it runs 2PC. */
function boundaryOnTwoShards(volumeId: string): number {
  const keyspace = volumeNamespaceOf(localNamespace);
  const ownerOf = (group: number) => cloud.ring.ownerOf(tokenOf(keyspace, `${volumeId}.${group}/0`)).id;
  for (let group = 1; group < groupCount - 1; group += 1) {
    if (ownerOf(group - 1) !== ownerOf(group)) return group * groupBytes;
  }
  throw new Error(`no two neighbouring groups of volume ${volumeId} on two shards`);
}

/** A volume's internal id (the API does not show it): from its record, a key of the volume keyspace, on its owner. */
async function volumeIdOf(name: string): Promise<string> {
  const views = await readReplicas(cloud.ddb, cloud.ring, volumeNamespaceOf(localNamespace), [volumeRecordKey(name)]);
  const value = views.get(volumeRecordKey(name))?.[0]?.item?.val;
  if (!value) throw new Error(`volume ${name} has no record on its owner`);
  return (JSON.parse(Buffer.from(value).toString('utf8')) as { id: string }).id;
}

async function createVolume(name: string, holder: string, leaseSeconds: number): Promise<JudgedVolume & { id: string }> {
  const created = await call('/v1/volumes', { method: 'POST', json: { name, sizeBytes: groupCount * groupBytes } });
  expect({ name, created: created.status, message: created.message }).toMatchObject({ name, created: 201 });
  const id = await volumeIdOf(name);
  const attached = await call(`/v1/volumes/${name}/lease`, { method: 'POST', json: { holder, leaseSeconds } });
  expect({ name, attached: attached.status, message: attached.message }).toMatchObject({ name, attached: 200 });
  return Object.assign(new JudgedVolume(name, boundaryOnTwoShards(id) - windowBefore, jsonOf<{ epoch: number }>(attached).epoch), { id });
}

/** The block keys of the window, for comparing their replicas in DynamoDB. */
function windowBlockKeys(volumeId: string, volume: JudgedVolume): string[] {
  const first = Math.floor(volume.windowStart / blockBytes);
  return Array.from({ length: windowBytes / blockBytes }, (_, n) => blockKey(volumeId, first + n, volumeLimits));
}

/** Waits, with repair passes between, until every replica of every block of the window holds its owner's item. */
function replicasConverged(volume: JudgedVolume & { id: string }, ring: Ring): Promise<ConvergenceResult> {
  return waitForConvergence({
    ddb: cloud.ddb,
    ring,
    namespace: volumeNamespaceOf(localNamespace),
    keys: windowBlockKeys(volume.id, volume),
    boundMs: settleBoundMs,
    pollMs: 250,
    between: async () => {
      await cloud.api.repair();
    },
  });
}

/** Where each path's writes lie in the window: across the boundary (2PC on two shards), or inside the second group. */
const paths = {
  twoShards: (rng: Rng) => {
    const offset = windowBefore - rng.int(1, writeBytesMax - 1);
    return { offset, length: rng.int(windowBefore - offset + 1, Math.min(writeBytesMax, windowBytes - offset)) };
  },
  /** Whole blocks across the boundary: written blindly, no read first, so every crash point it reaches is its write's. */
  twoShardsWholeBlocks: (rng: Rng) => {
    const blocksBefore = rng.int(1, 4);
    return { offset: windowBefore - blocksBefore * blockBytes, length: (blocksBefore + rng.int(1, 4)) * blockBytes };
  },
  oneGroup: (rng: Rng) => {
    const offset = windowBefore + 64 * 1024 + rng.int(0, 64 * 1024);
    return { offset, length: rng.int(1, writeBytesMax) };
  },
} as const;

/**
 * Each crash point, the path that reaches it, and what the crashed write must come to: before the decision, none of
 * it (a write across the boundary at unaligned ends first reads its partial blocks, a read-only transaction on two
 * shards that reaches these points too: a crash there, between the read and the write, leaves none of it as well);
 * after the decision, all of it (whole blocks: no read, so the crash is the write's); after the atomic write of one
 * group, or after its first replica took a block, all of it (the read of one group's partial blocks reaches neither).
 */
const cases: Array<{ point: CrashPoint; path: keyof typeof paths; crashedWrite: 'whole' | 'absent' }> = [
  { point: 'txn.afterBegin', path: 'twoShards', crashedWrite: 'absent' },
  { point: 'txn.beforeIntent', path: 'twoShards', crashedWrite: 'absent' },
  { point: 'txn.afterIntent', path: 'twoShards', crashedWrite: 'absent' },
  { point: 'txn.afterPrepare', path: 'twoShards', crashedWrite: 'absent' },
  { point: 'txn.afterDecide', path: 'twoShardsWholeBlocks', crashedWrite: 'whole' },
  { point: 'txn.afterAtomicCommit', path: 'oneGroup', crashedWrite: 'whole' },
  // The owner holds the write and one replica of a block has it; the others catch up from the stream.
  { point: 'write.afterFirstReplica', path: 'oneGroup', crashedWrite: 'whole' },
];

describe('block volumes under crash points', () => {
  it('leaves every crashed write whole or absent, reads back every acknowledged one, and converges its replicas', async () => {
    await withSeed(seed, async () => {
      const rng = new Rng(deriveSeed(seed, 'volume-crashes'));
      const volume = await createVolume('crashes', 'fault-suite', 300);
      // Something to overwrite on both paths, acknowledged before any crash.
      await volume.write(0, windowBytes, { settle: true });
      const crashedAt: Partial<Record<CrashPoint, number>> = {};
      const crashedWrites: Partial<Record<CrashPoint, string>> = {};
      for (const { point, path } of cases) {
        // Act: armed for the point's first reach, and driven until it has crashed a write.
        await cloud.api.setFaults({ crashes: [{ point, after: 0, times: 1 }] });
        await driveUntil(
          `a volume write crashed at ${point}`,
          async () => ((await cloud.api.faults()).crashed[point] ?? 0) >= 1,
          async () => {
            const { offset, length } = paths[path](rng);
            await volume.write(offset, length);
          },
          {
            stepsMax: driveStepsMax,
            boundMs: driveBoundMs,
            explain: async () => `outcomes ${JSON.stringify(volume.outcomes)}, ${describeFaults(await cloud.api.faults())}`,
          },
        );
        crashedAt[point] = (await cloud.api.faults()).crashed[point];
        // The drive's last write is the one that crashed.
        crashedWrites[point] = volume.lastVerdict;
        await cloud.api.setFaults({});
        // Once the crashed write's locks are released, the path takes writes again.
        const { offset, length } = paths[path](rng);
        const after = await volume.write(offset, length, { settle: true });
        expect({ point, after: after.status, message: after.message }).toMatchObject({ point, after: 200 });
      }

      // Assess: the window as the model says, no transaction left undecided, every replica as its owner.
      const recovery = await waitForTxnRecovery({ ddb: cloud.ddb, ring: cloud.ring, txids: [], boundMs: settleBoundMs });
      const window = await volume.readWindow();
      const differing = window.findIndex((byte, index) => byte !== volume.model[index]);
      const convergence = await replicasConverged(volume, cloud.ring);
      const context = `outcomes ${JSON.stringify(volume.outcomes)}; crashed ${JSON.stringify(crashedAt)}`;
      expect({ context, unexpected: volume.unexpected }).toEqual({ context, unexpected: [] });
      expect({ context, firstDifferingByte: differing }).toEqual({ context, firstDifferingByte: -1 });
      expect({ context, recovered: recovery.recovered, intents: recovery.intents }).toEqual({ context, recovered: true, intents: [] });
      expect({ context, divergent: convergence.divergent }).toEqual({ context, divergent: [] });
      expect({ context, crashed: Object.keys(crashedAt).sort() }).toEqual({ context, crashed: cases.map((c) => c.point).sort() });
      expect({ context, crashedWrites }).toEqual({
        context,
        crashedWrites: Object.fromEntries(cases.map(({ point, crashedWrite }) => [point, crashedWrite])),
      });
    });
  }, 300_000);

  it('refuses the writes of a holder whose write crashed and whose lease was taken over: not a block of them lands', async () => {
    await withSeed(seed, async () => {
      const rng = new Rng(deriveSeed(seed, 'volume-takeover'));
      const volume = await createVolume('takeover', 'first-holder', 1);
      await volume.write(0, windowBytes, { settle: true });
      const firstEpoch = volume.epoch;
      // The holder's write crashes after its transaction began (its outcome unknown to it); its lease then runs out.
      await cloud.api.setFaults({ crashes: [{ point: 'txn.afterBegin', after: 0, times: 1 }] });
      await driveUntil(
        "the first holder's write crashed",
        async () => ((await cloud.api.faults()).crashed['txn.afterBegin'] ?? 0) >= 1,
        async () => {
          const { offset, length } = paths.twoShards(rng);
          await volume.write(offset, length);
        },
        { stepsMax: driveStepsMax, boundMs: driveBoundMs, explain: async () => `outcomes ${JSON.stringify(volume.outcomes)}` },
      );
      await cloud.api.setFaults({});
      await sleep(1_100);
      const takenOver = await call('/v1/volumes/takeover/lease', { method: 'POST', json: { holder: 'second-holder', leaseSeconds: 300 } });
      expect(takenOver.status).toBe(200);
      volume.epoch = jsonOf<{ epoch: number }>(takenOver).epoch;
      expect(volume.epoch).toBeGreaterThan(firstEpoch);

      // Act: the first holder, unaware, writes on with its epoch, across the boundary and inside a group; the new one writes.
      const stale: Answer[] = [];
      for (const path of ['twoShards', 'oneGroup', 'twoShards'] as const) {
        const { offset, length } = paths[path](rng);
        stale.push(await volume.write(offset, length, { epoch: firstEpoch }));
      }
      const { offset, length } = paths.oneGroup(rng);
      const fresh = await volume.write(offset, length, { settle: true });

      // Assess: each stale write refused as fenced and absent (write() judged the range), the window as the model says.
      const window = await volume.readWindow();
      const context = `outcomes ${JSON.stringify(volume.outcomes)}`;
      expect({ context, stale: stale.map((answer) => `${answer.status} ${answer.code ?? ''}`) }).toEqual({
        context,
        stale: ['409 volume.fenced', '409 volume.fenced', '409 volume.fenced'],
      });
      expect({ context, fresh: fresh.status }).toEqual({ context, fresh: 200 });
      expect({ context, unexpected: volume.unexpected }).toEqual({ context, unexpected: [] });
      expect({ context, firstDifferingByte: window.findIndex((byte, index) => byte !== volume.model[index]) }).toEqual({
        context,
        firstDifferingByte: -1,
      });
    });
  }, 180_000);

  it('keeps every acknowledged write while the shard of the group being written fails over, and converges after it rejoins', async () => {
    await withSeed(seed, async () => {
      const rng = new Rng(deriveSeed(seed, 'volume-failover'));
      const volume = await createVolume('failover', 'fault-suite', 300);
      await volume.write(0, windowBytes, { settle: true });
      const keyspace = volumeNamespaceOf(localNamespace);
      const before = await cloud.api.ring();
      // The owner of the group after the boundary: both paths write it.
      const boundaryGroup = (volume.windowStart + windowBefore) / groupBytes;
      const victim = before.ownerOf(tokenOf(keyspace, `${volume.id}.${boundaryGroup}/0`));

      // Act: one writer on both paths throughout; the victim goes down, fails over, and comes back.
      let writing = true;
      let acknowledgedAfterFailover = 0;
      let failedOver = false;
      const writer = (async () => {
        for (let n = 0; writing; n += 1) {
          const { offset, length } = paths[n % 2 === 0 ? 'twoShards' : 'oneGroup'](rng);
          const answer = await volume.write(offset, length);
          if (answer.status === 200 && failedOver) acknowledgedAfterFailover += 1;
          if (answer.status !== 200) await sleep(100);
        }
      })();
      await sleep(500);
      await cloud.api.setFaults({ downShards: [victim.table] });
      const refusedBefore = refusedCount(volume);
      // Not vacuous by construction: the failover starts once a write met the outage (the writer writes the victim's
      // group on both paths, and no failover starts by itself here). Its answer is counted as it comes, before the
      // read that judges it, which waits for the failover.
      await eventually(
        'a write that met the outage',
        async () => refusedCount(volume) - refusedBefore,
        (count) => count >= 1,
        {
          boundMs: settleBoundMs,
          pollMs: 100,
        },
      );
      const started = await fetch(`${cloud.url}/v1/admin/failovers`, {
        method: 'POST',
        headers: { 'x-api-key': cloud.adminKey, 'content-type': 'application/json' },
        body: JSON.stringify({ shard: victim.id, reason: 'volume fault suite' }),
      });
      expect(started.status).toBe(202);
      const { id: failoverId } = (await started.json()) as { id: string };
      const failover = await eventually(
        `failover ${failoverId} of ${victim.table} ended`,
        async () => {
          const listed = await fetch(`${cloud.url}/v1/admin/failovers`, { headers: { 'x-api-key': cloud.adminKey } });
          const { failovers } = (await listed.json()) as { failovers: Array<{ id: string; status: string }> };
          return failovers.find((record) => record.id === failoverId)?.status ?? 'unrecorded';
        },
        (status) => status !== 'running' && status !== 'unrecorded',
        { boundMs: settleBoundMs, pollMs: 100 },
      );
      failedOver = true;
      // Not vacuous by construction: the writer goes on until writes were acknowledged on the new owners.
      await eventually(
        'two writes acknowledged after the failover',
        async () => acknowledgedAfterFailover,
        (count) => count >= 2,
        {
          boundMs: settleBoundMs,
          pollMs: 100,
        },
      );
      writing = false;
      await writer;
      await cloud.api.setFaults({});
      const rejoined = await eventually(
        `${victim.table} serving again`,
        async () => {
          await cloud.api.repair();
          return (await cloud.api.shards()).shards.find((shard) => shard.table === victim.table)?.health;
        },
        (health) => health === 'available',
        { boundMs: settleBoundMs, pollMs: 250 },
      );

      // Assess: the window as the model says, and every replica (on the ring after the failover) as its owner.
      const window = await volume.readWindow();
      const after = await cloud.api.ring();
      const convergence = await replicasConverged(volume, after);
      const context = `victim ${victim.table}; outcomes ${JSON.stringify(volume.outcomes)}`;
      expect({ context, failover, rejoined }).toEqual({ context, failover: 'completed', rejoined: 'available' });
      expect({ context, unexpected: volume.unexpected }).toEqual({ context, unexpected: [] });
      expect({ context, firstDifferingByte: window.findIndex((byte, index) => byte !== volume.model[index]) }).toEqual({
        context,
        firstDifferingByte: -1,
      });
      expect({ context, divergent: convergence.divergent }).toEqual({ context, divergent: [] });
      expect({ context, victimOwns: after.ranges().filter((range) => range.owner === victim.id).length }).toEqual({
        context,
        victimOwns: 0,
      });
    });
  }, 240_000);

  it('finishes a snapshot whose creation crashed, at each of its points, while a writer writes: it holds one instant', async () => {
    await withSeed(seed, async () => {
      const rng = new Rng(deriveSeed(seed, 'volume-snapshot-crashes'));
      const volume = await createVolume('snapshots', 'fault-suite', 300);
      await volume.write(0, windowBytes, { settle: true });
      const results: Array<Record<string, unknown>> = [];
      for (const point of volumeCrashPoints) {
        const name = `at-${point.replace(/[^A-Za-z0-9]/g, '-')}`;
        // The window after each write, in order (a write not acknowledged counts as it was judged: whole or absent).
        const states: Uint8Array[] = [Uint8Array.from(volume.model)];
        let writing = true;
        const writer = (async () => {
          for (let n = 0; writing; n += 1) {
            const { offset, length } = paths[n % 2 === 0 ? 'twoShards' : 'oneGroup'](rng);
            await volume.write(offset, length);
            states.push(Uint8Array.from(volume.model));
          }
        })();
        const writesBy = (count: number) =>
          eventually(
            `${count} writes`,
            async () => states.length - 1,
            (written) => written >= count,
            { boundMs: settleBoundMs, pollMs: 50 },
          );
        await writesBy(states.length + 1);
        await cloud.api.setFaults({ crashes: [{ point, after: 0, times: 1 }] });
        // Every write acknowledged before the request is in the snapshot; none started after its answer is.
        const first = states.length - 1;
        const crashed = await call('/v1/volumes/snapshots/snapshots', { method: 'POST', json: { name } });
        const last = states.length;
        const faults = await cloud.api.faults();
        await cloud.api.setFaults({});
        const unfinished = await call(`/v1/volumes/snapshots/snapshots/${name}/data`, { range: 'bytes=0-0' });
        // The writer goes on past the crash, into the generation the cut-short snapshot began, before it is finished.
        await writesBy(states.length + 2);
        const finished = await call('/v1/volumes/snapshots/snapshots', { method: 'POST', json: { name } });
        writing = false;
        await writer;
        const range = `bytes=${volume.windowStart}-${volume.windowStart + windowBytes - 1}`;
        const seen = await call(`/v1/volumes/snapshots/snapshots/${name}/data`, { range });
        const instant = states.findIndex(
          (state, index) => index >= first && index <= last && seen.body !== undefined && same(state, seen.body),
        );
        // Immutable: later writes (here across the boundary) leave it as it was.
        await volume.write(windowBefore - 2 * blockBytes, 4 * blockBytes, { settle: true });
        const again = await call(`/v1/volumes/snapshots/snapshots/${name}/data`, { range });
        results.push({
          point,
          crashed: faults.crashed[point] ?? 0,
          answered: crashed.status === 201 ? 'created' : 'not created',
          unfinished: unfinished.code,
          finished: finished.status,
          read: seen.status,
          atOneInstant: instant >= 0,
          unchangedAfter: again.body !== undefined && seen.body !== undefined && same(again.body, seen.body),
        });
      }
      const context = `outcomes ${JSON.stringify(volume.outcomes)}`;
      expect({ context, unexpected: volume.unexpected }).toEqual({ context, unexpected: [] });
      expect({ context, results }).toEqual({
        context,
        results: volumeCrashPoints.map((point) => ({
          point,
          crashed: 1,
          answered: 'not created',
          unfinished: 'volume.snapshotUnfinished',
          finished: 201,
          read: 206,
          atOneInstant: true,
          unchangedAfter: true,
        })),
      });
    });
  }, 240_000);
});
