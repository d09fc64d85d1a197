// Rebalancing in the core (docs/rebalancing.md): the rings of a rebalance, and the workflow's steps on
// in-memory ports with writes landing between them, crashes at every crash point, pause, resume and
// cancel, and the broken mode that the checks must catch.
import fc from 'fast-check';
import { isRingstoreError } from '../../../lambdas/core/errors';
import { fencedRangesRing, unfencedRing } from '../../../lambdas/core/failover';
import { FailoverService } from '../../../lambdas/core/failover-service';
import {
  finishedRing,
  plannedRanges,
  reversedRing,
  startRefusal,
  startedRing,
  versionDigest,
  withMovePhase,
} from '../../../lambdas/core/rebalance';
import { RebalanceService, cutoverWave, describe as describeJob, type RebalanceLimits } from '../../../lambdas/core/rebalance-service';
import { Ring, initialRingState, tokenOf } from '../../../lambdas/core/ring';
import {
  CachedRingSource,
  cutoverLeaseMs,
  fencePollMs,
  ringLeaseMarginMs,
  ringLeaseMs,
  ringRefreshMs,
} from '../../../lambdas/core/ring-source';
import { rebalanceCrashPoints, type CrashPoint, type RangeProgress, type RebalanceChange, type RingState } from '../../../lambdas/ports';
import { limits, volumeLimits } from '../../../schemas/topology';
import {
  ManualClock,
  MemoryFailoverLog,
  MemoryRebalanceJobs,
  MemoryShardStore,
  MemoryTxnRecords,
  PauseAt,
  ScriptedFaults,
  memoryReplication,
  memoryKv,
  CountingIds,
  testTxnLimits,
} from '../../support/memory-ports';
import { text } from '../../support/bytes';
import { TransactionService } from '../../../lambdas/core/transactions';
import { InProcessTxnRunner } from '../../../lambdas/core/txn-runner';
import { volumeNamespaceOf } from '../../../lambdas/core/volume-layout';
import { type VolumeLimits, VolumeService, volumeTxnLimits } from '../../../lambdas/core/volumes';

const tableOf = (id: number) => `shard-${id}`;
const ringOf = (shardCount: number, replicationFactor = 3, vnodesPerShard = 8) =>
  initialRingState({ shardCount, replicationFactor, vnodesPerShard, tableName: tableOf });
const replicaIds = (ring: Ring, token: number) => ring.replicasOf(token).map((shard) => shard.id);

/** The plain ring of these shard ids (what a fresh ring of them would be). */
function plainRing(ids: number[], replicationFactor: number, vnodesPerShard: number): Ring {
  return new Ring({
    epoch: 1,
    replicationFactor,
    vnodesPerShard,
    shards: ids.map((id) => ({ id, table: tableOf(id), status: 'active' as const })),
  });
}

/** Every range moved in turn, then the ring finished. */
function movedAll(state: RingState): RingState {
  let next = state;
  for (const range of new Ring(state).movingRanges()) {
    next = withMovePhase(withMovePhase(next, range.end, 'copying'), range.end, 'moved');
  }
  return finishedRing(next);
}

const change = fc
  .record({ shardCount: fc.integer({ min: 1, max: 6 }), rf: fc.integer({ min: 1, max: 3 }), vnodes: fc.integer({ min: 1, max: 8 }) })
  .chain(({ shardCount, rf, vnodes }) =>
    fc.record({
      shardCount: fc.constant(shardCount),
      rf: fc.constant(rf),
      vnodes: fc.constant(vnodes),
      join: fc.integer({ min: 0, max: 2 }),
      leave: fc.subarray([...Array(shardCount).keys()], { maxLength: Math.max(0, shardCount - rf) }),
    }),
  )
  .filter(({ join, leave }) => join + leave.length > 0);

describe('the rings of a rebalance', () => {
  it('serve every token from the replicas before until its range moves, and end as a fresh ring of the new shards', () => {
    fc.assert(
      fc.property(change, fc.integer({ min: 0, max: 2 ** 32 - 1 }), ({ shardCount, rf, vnodes, join, leave }, token) => {
        const initial = ringOf(shardCount, rf, vnodes);
        const joinIds = Array.from({ length: join }, (_, index) => shardCount + index);
        const started = startedRing(initial, { join: joinIds, leave }, 'r1', tableOf);
        const beforeIds = [...Array(shardCount).keys()];
        const afterIds = [...beforeIds.filter((id) => !leave.includes(id)), ...joinIds];
        const before = plainRing(beforeIds, rf, vnodes);
        const after = plainRing(afterIds, rf, vnodes);
        const ring = new Ring(started);
        // Nothing moves at the start: every token keeps its replicas.
        expect(replicaIds(ring, token)).toEqual(replicaIds(before, token));
        const range = ring.rangeOf(token);
        if (range.move) {
          expect(range.move).toEqual({ phase: 'planned', from: replicaIds(before, token), to: replicaIds(after, token) });
          // Copying: the previous replicas serve, the new ones take writes as replicas being backfilled.
          const copying = new Ring(withMovePhase(started, range.end, 'copying'));
          const incoming = range.move.to.filter((shard) => !range.move!.from.includes(shard));
          expect(copying.servingReplicasOf(token).map((shard) => shard.id)).toEqual(range.move.from);
          expect(replicaIds(copying, token)).toEqual([...range.move.from, ...incoming]);
        } else {
          expect(replicaIds(before, token)).toEqual(replicaIds(after, token));
        }
        const finished = new Ring(movedAll(started));
        expect(finished.rebalancing).toBe(false);
        expect(replicaIds(finished, token)).toEqual(replicaIds(after, token));
        expect(finished.shards.map((shard) => shard.id).sort((a, b) => a - b)).toEqual([...afterIds].sort((a, b) => a - b));
      }),
      { numRuns: 300 },
    );
  });

  it('a reversed rebalance ends as the ring it started from, whatever had moved', () => {
    fc.assert(
      fc.property(change, fc.integer({ min: 0, max: 100 }), ({ shardCount, rf, vnodes, join, leave }, movedShare) => {
        const initial = ringOf(shardCount, rf, vnodes);
        const joinIds = Array.from({ length: join }, (_, index) => shardCount + index);
        let state = startedRing(initial, { join: joinIds, leave }, 'r1', tableOf);
        const moving = new Ring(state).movingRanges();
        const moved = moving.slice(0, Math.floor((moving.length * movedShare) / 100));
        for (const range of moved) state = withMovePhase(withMovePhase(state, range.end, 'copying'), range.end, 'moved');
        if (moving.length > moved.length) state = withMovePhase(state, moving[moved.length]!.end, 'copying');
        const reversed = reversedRing(state);
        // Reversing changes no range's replicas at once: the ranges that had moved are planned to move back.
        expect(new Ring(reversed).ranges().map((range) => range.replicas)).toEqual(
          new Ring(state).ranges().map((range) => range.replicas.filter((shard) => !range.backfilling?.includes(shard))),
        );
        expect(plannedRanges(reversed).filter((range) => range.stage === 'planned')).toHaveLength(moved.length);
        const back = new Ring(movedAll(reversed));
        const original = new Ring(initial);
        for (const range of original.ranges()) expect(replicaIds(back, range.end)).toEqual(range.replicas);
      }),
      { numRuns: 200 },
    );
  });

  it('refuses what cannot start: a failover in the way, a shard named wrongly, too few shards left', () => {
    const initial = ringOf(3);
    expect(startRefusal(initial, { join: [3], leave: [] })).toBeUndefined();
    expect(startRefusal(initial, { join: [], leave: [] })).toMatch(/nothing to do/);
    expect(startRefusal(initial, { join: [1], leave: [] })).toMatch(/already on the ring/);
    expect(startRefusal(initial, { join: [], leave: [7] })).toMatch(/not on the ring/);
    expect(startRefusal(initial, { join: [], leave: [0] })).toMatch(/2 shards would be left for replication factor 3/);
    expect(startRefusal({ ...initial, fenced: [new Ring(initial).ranges()[0]!.end] }, { join: [3], leave: [] })).toMatch(/failover/);
    const started = startedRing(initial, { join: [3], leave: [] }, 'r1', tableOf);
    expect(startRefusal(started, { join: [4], leave: [] })).toMatch(/rebalance r1 is in progress/);
    expect(() => finishedRing(started)).toThrow(/have not moved yet/);
  });
});

describe('the digest of keys at their versions', () => {
  const entry = fc.record({
    namespace: fc.constantFrom('a', 'b'),
    key: fc.string({ maxLength: 6 }),
    version: fc.integer({ min: 1, max: 5 }),
  });
  const entries = fc.uniqueArray(entry, { selector: (item) => `${item.namespace}/${item.key}`, maxLength: 40 });

  it('does not depend on the order or on how the keys were split into pages, and changes with any version', () => {
    fc.assert(
      fc.property(entries, fc.nat(), fc.nat(), (items, split, changed) => {
        const whole = versionDigest(items);
        const at = items.length === 0 ? 0 : split % (items.length + 1);
        expect(versionDigest(items.slice(at), versionDigest(items.slice(0, at)))).toEqual(whole);
        expect(versionDigest([...items].reverse())).toEqual(whole);
        if (items.length === 0) return;
        const index = changed % items.length;
        const bumped = items.map((item, position) => (position === index ? { ...item, version: item.version + 1 } : item));
        expect(versionDigest(bumped).digest).not.toBe(whole.digest);
        expect(versionDigest(items.filter((_, position) => position !== index)).keys).toBe(whole.keys - 1);
      }),
      { numRuns: 200 },
    );
  });
});

const rebalanceLimits: RebalanceLimits = {
  leaseWaitMs: ringLeaseMs + ringLeaseMarginMs,
  cutoverLeaseWaitMs: cutoverLeaseMs + ringLeaseMarginMs,
  ringRefreshWaitMs: ringRefreshMs + ringLeaseMarginMs,
  pageSize: 7,
  catchUpConcurrency: 4,
  stepBudgetMs: 60_000,
  verifyPassesMax: 3,
  // Small waves, so the tests cut over several of them, of more than one range each.
  cutoverRangesMax: 3,
  cutoverKeysMax: 40,
  cutoverConcurrency: 2,
  defaultRateKeysPerSecond: 0,
  backoffMs: { first: 50, max: 1_000 },
};

const keys = Array.from({ length: 150 }, (_, index) => `key-${index}`);

/**
 * KV and rebalance services on in-memory ports, over one ring record. `onSleep` runs whenever the
 * workflow waits (the lease, the pacing): writes land there, between its steps, as they do in AWS.
 */
function rebalanceWorld(options: { faults?: ScriptedFaults; shardCount?: number } = {}) {
  const faults = options.faults ?? new ScriptedFaults();
  const shards = new MemoryShardStore();
  const clock = new ManualClock();
  const rings = {
    state: ringOf(options.shardCount ?? 4),
    readRing: async () => structuredClone(rings.state),
    publishRing: async (next: RingState) => {
      if (rings.state.epoch !== next.epoch - 1) return false;
      rings.state = structuredClone(next);
      return true;
    },
  };
  const { replication, health, hints } = memoryReplication(shards, clock, faults);
  /** A handler instance: its own cached ring; with `sleep`, its requests wait on fences. */
  const handler = (options: { sleep?: (ms: number) => Promise<void> } = {}) =>
    memoryKv({ shards, ring: new CachedRingSource(rings, clock), clock, replication, health, faults, ...options });
  const kv = handler();
  const latest = new Map<string, { version: number; value: string | undefined }>();
  let writes = 0;
  /** A strong write (or a delete, every fifth) of a key, remembered as the latest acknowledged. */
  const write = async (key: string) => {
    try {
      await writeOnce(key);
    } catch (error) {
      // A range being cut over is fenced: the client tries again later (nothing was acknowledged).
      if (!isRingstoreError(error, 'shard.failingOver')) throw error;
    }
  };
  const writeOnce = async (key: string) => {
    writes += 1;
    if (writes % 5 === 0 && latest.get(key)?.value !== undefined) {
      const ack = await kv.delete('ns', key, { consistency: 'strong' });
      latest.set(key, { version: ack.version, value: undefined });
      return;
    }
    const value = `${key}@${writes}`;
    const ack = await kv.put('ns', key, { value: text(value), contentType: 'text/plain', consistency: 'strong' });
    latest.set(key, { version: ack.version, value });
  };
  const onSleep = { writes: 3 };
  /** More work that lands between the workflow's steps (a volume's writes). */
  const alsoOnSleep: Array<() => Promise<void>> = [];
  const sleep = async (ms: number) => {
    clock.now += ms;
    for (let index = 0; index < onSleep.writes; index += 1) await write(keys[(writes * 7 + index) % keys.length]!);
    for (const work of alsoOnSleep) await work();
  };
  const records = new MemoryTxnRecords();
  const failover = new FailoverService({
    rings,
    shards,
    hints,
    records,
    health,
    clock,
    log: new MemoryFailoverLog(),
    sleep,
    limits: {
      catchUpConcurrency: 4,
      hintPageSize: 10,
      confirmProbes: 1,
      confirmIntervalMs: 0,
      leaseWaitMs: rebalanceLimits.leaseWaitMs,
      txnLookbackMs: 60_000,
      txnLookaheadMs: 60_000,
      txnPageSize: 10,
    },
  });
  const jobs = new MemoryRebalanceJobs();
  const deps = { rings, shards, ranges: shards, jobs, transactions: failover, clock, sleep, faults, tableOf, limits: rebalanceLimits };
  const service = new RebalanceService(deps);
  return {
    shards,
    clock,
    rings,
    kv,
    handler,
    latest,
    write,
    service,
    deps,
    jobs,
    onSleep,
    alsoOnSleep,
    records,
    failover,
    replication,
    health,
  };
}

type World = ReturnType<typeof rebalanceWorld>;

/** Runs the workflow to its end: `advance` again after each step, and after each injected crash. */
async function runToEnd(world: World, id: string, service = world.service): Promise<number> {
  let crashes = 0;
  for (let steps = 0; steps < 10_000; steps += 1) {
    try {
      const job = await service.advance(id);
      if (job.status !== 'running' && job.status !== 'cancelling') return crashes;
    } catch (error) {
      if (!(error instanceof Error) || !/crash injected/i.test(error.message)) throw error;
      crashes += 1;
    }
  }
  throw new Error('the rebalance did not end');
}

/** Every acknowledged write is on every replica of the final ring, nothing is left on a shard that lost its range, listings are whole. */
async function expectConsistent(world: World): Promise<void> {
  const ring = new Ring(world.rings.state);
  expect(ring.rebalancing).toBe(false);
  for (const [key, expected] of world.latest) {
    const token = tokenOf('ns', key);
    const holders = new Set(ring.replicasOf(token).map((shard) => shard.table));
    for (const [table, items] of world.shards.tables) {
      const item = items.get(`ns#${key}`);
      if (holders.has(table)) expect({ key, table, version: item?.version }).toEqual({ key, table, version: expected.version });
      else expect({ key, table, item }).toEqual({ key, table, item: undefined });
    }
    const read = await world.kv.get('ns', key, 'strong').catch((error: unknown) => error);
    if (expected.value === undefined) expect(isRingstoreError(read, 'kv.notFound')).toBe(true);
    else expect({ key, read }).toMatchObject({ key, read: { kind: 'value', item: { version: expected.version } } });
  }
  const live = [...world.latest].filter(([, entry]) => entry.value !== undefined).map(([key]) => key);
  const listed: string[] = [];
  for (let cursor: string | undefined, pages = 0; pages === 0 || cursor !== undefined; pages += 1) {
    const page = await world.kv.list('ns', { prefix: '', limit: limits.listLimitMax, ...(cursor ? { cursor } : {}) });
    listed.push(...page.items.map((item) => item.key));
    cursor = page.cursor;
  }
  expect(listed.sort()).toEqual(live.sort());
}

async function seeded(options: Parameters<typeof rebalanceWorld>[0] = {}): Promise<World> {
  const world = rebalanceWorld(options);
  for (const key of keys) await world.write(key);
  return world;
}

describe('RebalanceService on in-memory ports', () => {
  it('adds a shard while writes land between its steps: every acknowledged write is where the new ring says, and only there', async () => {
    const world = await seeded();
    const job = await world.service.start({ join: [4], leave: [] }, { id: 'add-4' });
    expect(job.ranges.length).toBeGreaterThan(0);
    await runToEnd(world, 'add-4');
    const status = await world.service.status();
    expect(status).toMatchObject({ job: { status: 'done' }, progress: 1, ranges: { cleaned: job.ranges.length } });
    expect(status!.keysCopied).toBeGreaterThan(0);
    expect(world.rings.state.shards.map((shard) => shard.id)).toEqual([0, 1, 2, 3, 4]);
    await expectConsistent(world);
    expect(world.shards.tables.get('shard-4')?.size).toBeGreaterThan(0);
  });

  it('removes a shard: its ranges go to their successors and its table is left empty', async () => {
    const world = await seeded({ shardCount: 5 });
    await world.service.start({ join: [], leave: [2] }, { id: 'remove-2' });
    await runToEnd(world, 'remove-2');
    expect(world.rings.state.shards.map((shard) => shard.id)).toEqual([0, 1, 3, 4]);
    await expectConsistent(world);
    expect(world.shards.tables.get('shard-2')?.size ?? 0).toBe(0);
  });

  it.each(rebalanceCrashPoints.map((point) => [point]))('resumes from its checkpoint after a crash at %s', async (point: CrashPoint) => {
    const faults = new ScriptedFaults();
    const world = await seeded({ faults });
    await world.service.start({ join: [4], leave: [] }, { id: 'add-4' });
    // A crash on the third reach of each point (the finish and the marking of the ranges copying are reached once).
    faults.crashAt(point, { after: point === 'rebalance.afterFinish' || point === 'rebalance.afterCopying' ? 0 : 2 });
    const crashes = await runToEnd(world, 'add-4');
    expect(crashes).toBeGreaterThan(0);
    await expectConsistent(world);
  });

  it.each([['rebalance.afterFinish'], ['rebalance.afterCleanupPage']] as const)(
    'waits out the ring refresh once before the cleanup, also when a crash at %s makes it take two steps',
    async (point) => {
      const faults = new ScriptedFaults();
      const world = await seeded({ faults });
      const refreshWaits: number[] = [];
      const sleep = async (ms: number) => {
        if (ms === rebalanceLimits.ringRefreshWaitMs) refreshWaits.push(world.clock.now);
        await world.deps.sleep(ms);
      };
      const service = new RebalanceService({ ...world.deps, sleep });
      await service.start({ join: [4], leave: [] }, { id: 'add-4' });
      faults.crashAt(point);
      expect(await runToEnd(world, 'add-4', service)).toBe(1);
      const job = (await service.status())!.job;
      expect({ status: job.status, ringFinished: job.ringFinishedAtMs !== undefined }).toEqual({ status: 'done', ringFinished: true });
      expect(refreshWaits).toHaveLength(1);
      await expectConsistent(world);
    },
  );

  it('pauses between steps, resumes where it stopped, and moves at most the configured rate', async () => {
    const world = await seeded();
    world.onSleep.writes = 0;
    await world.service.start({ join: [4], leave: [] }, { id: 'add-4', rateKeysPerSecond: 20 });
    const short = new RebalanceService({ ...world.deps, limits: { ...rebalanceLimits, stepBudgetMs: 2_000 } });
    const first = await short.advance('add-4');
    expect(first.status).toBe('running');
    await world.service.request('add-4', 'pause');
    const paused = await world.service.advance('add-4');
    expect(paused.status).toBe('paused');
    expect(await world.service.advance('add-4')).toMatchObject({ status: 'paused', revision: paused.revision });
    const resumed = await world.service.request('add-4', 'resume');
    expect(resumed).toMatchObject({ startWorkflow: true, job: { status: 'running' } });
    const startedAt = world.clock.now;
    await runToEnd(world, 'add-4');
    const { keysCopied } = (await world.service.status())!;
    const copiedAfterResume = keysCopied - first.ranges.reduce((sum, range) => sum + range.keysCopied, 0);
    // 20 keys a second: the copy after the resume took at least that long (the lease waits count too).
    expect(world.clock.now - startedAt).toBeGreaterThanOrEqual(((copiedAfterResume - rebalanceLimits.pageSize * 2) / 20) * 1000);
    await expectConsistent(world);
  });

  it('a cancel moves what had moved back: the ring and every key end as they began', async () => {
    const world = await seeded();
    await world.service.start({ join: [4], leave: [] }, { id: 'add-4' });
    // Run until a few ranges have moved, but not all, then cancel (steps of about one stage each).
    const limited = new RebalanceService({ ...world.deps, limits: { ...rebalanceLimits, stepBudgetMs: 1 } });
    let moved = 0;
    for (let step = 0; step < 500 && moved < 3; step += 1) {
      moved = (await limited.advance('add-4')).ranges.filter((range) => range.stage === 'moved').length;
    }
    const before = (await world.service.status())!.ranges;
    expect(moved).toBeGreaterThanOrEqual(3);
    expect(before.planned + before.moving).toBeGreaterThan(0);
    const { job } = await world.service.request('add-4', 'cancel');
    expect(job.requested).toBe('cancel');
    await runToEnd(world, 'add-4');
    const status = (await world.service.status())!;
    expect(status.job).toMatchObject({ status: 'cancelled', cancelledFrom: { moved: expect.any(Number) } });
    expect(status.job.cancelledFrom!.moved).toBeGreaterThanOrEqual(3);
    expect(world.rings.state.shards.map((shard) => shard.id)).toEqual([0, 1, 2, 3]);
    await expectConsistent(world);
    expect(world.shards.tables.get('shard-4')?.size ?? 0).toBe(0);
  });

  it.each([
    ['adding a shard', 4, { join: [4], leave: [] }],
    ['removing one (new owners that were replicas)', 5, { join: [], leave: [2] }],
  ] as const)(
    '%s: backfills only where no live write of a range reaches, and catches up what was written meanwhile',
    async (_name, shardCount, change) => {
      const world = await seeded({ shardCount });
      // A rate ceiling: the backfill waits between pages, and writes land during those waits.
      await world.service.start({ join: [...change.join], leave: [...change.leave] }, { id: 'add-4', rateKeysPerSecond: 30 });
      const backfilled = new Map<string, number>();
      const backfill = world.shards.backfillItems.bind(world.shards);
      world.shards.backfillItems = async (table, items, options) => {
        const ring = new Ring(world.rings.state);
        for (const item of items) {
          const range = ring.rangeOf(item.token);
          // The ring still routes every write of the range to its old replicas alone.
          expect({ key: item.key, phase: range.move?.phase }).toEqual({ key: item.key, phase: 'planned' });
          expect(ring.replicasOf(item.token).map((shard) => shard.table)).not.toContain(table);
          backfilled.set(item.key, item.version);
        }
        return backfill(table, items, options);
      };
      await runToEnd(world, 'add-4');
      // Keys written after their backfill: only the catch-up brought their last versions to the new replicas.
      const overtaken = [...backfilled].filter(([key, version]) => world.latest.get(key)!.version > version);
      expect(overtaken.length).toBeGreaterThan(0);
      await expectConsistent(world);
    },
  );

  it('a cancel during the backfill leaves the ring as it was and removes what was backfilled', async () => {
    const world = await seeded();
    await world.service.start({ join: [4], leave: [] }, { id: 'add-4', rateKeysPerSecond: 30 });
    const limited = new RebalanceService({ ...world.deps, limits: { ...rebalanceLimits, stepBudgetMs: 1_000 } });
    let job = await limited.advance('add-4');
    for (let step = 0; step < 50 && !job.ranges.some((range) => range.stage === 'backfilled'); step += 1)
      job = await limited.advance('add-4');
    expect(job.ranges.some((range) => range.stage === 'planned')).toBe(true);
    expect(world.shards.tables.get('shard-4')?.size).toBeGreaterThan(0);
    await world.service.request('add-4', 'cancel');
    await runToEnd(world, 'add-4');
    expect((await world.service.status())!.job.status).toBe('cancelled');
    expect(world.rings.state.shards.map((shard) => shard.id)).toEqual([0, 1, 2, 3]);
    await expectConsistent(world);
    expect(world.shards.tables.get('shard-4')?.size ?? 0).toBe(0);
  });

  it('cuts over in waves: one fence and one lease wait for several ranges', async () => {
    const world = await seeded();
    const job = await world.service.start({ join: [4], leave: [] }, { id: 'add-4' });
    const fences: number[] = [];
    const publish = world.rings.publishRing;
    world.rings.publishRing = async (next) => {
      const added = (next.fenced ?? []).filter((end) => !(world.rings.state.fenced ?? []).includes(end));
      if (added.length > 0) fences.push(added.length);
      return publish(next);
    };
    await runToEnd(world, 'add-4');
    const owned = job.ranges.filter((range) => range.from[0] !== range.to[0]).length;
    expect(fences.reduce((sum, count) => sum + count, 0)).toBe(owned);
    expect(fences.length).toBeLessThan(owned);
    expect(Math.max(...fences)).toBeLessThanOrEqual(rebalanceLimits.cutoverRangesMax);
    await expectConsistent(world);
  });

  it('catches up the copying ranges several at a time, with one job save for each batch', async () => {
    // Arrange
    const world = await seeded();
    await world.service.start({ join: [4], leave: [] }, { id: 'add-4' });
    const caughtUpPerSave: number[] = [];
    const save = world.jobs.save.bind(world.jobs);
    let ready = 0;
    world.jobs.save = async (job) => {
      const now = job.ranges.filter((range) => range.stage === 'cutover').length;
      if (now > ready) caughtUpPerSave.push(now - ready);
      ready = now;
      return save(job);
    };

    // Act
    await runToEnd(world, 'add-4');

    // Assess
    expect(Math.max(...caughtUpPerSave)).toBeGreaterThan(1);
    expect(Math.max(...caughtUpPerSave)).toBeLessThanOrEqual(rebalanceLimits.cutoverConcurrency * 4);
    await expectConsistent(world);
  });

  it('cuts over the first ranges, fenced ones too, while later ones are still backfilled', async () => {
    // Arrange
    const world = await seeded();
    await world.service.start({ join: [4], leave: [] }, { id: 'add-4' });
    const events: Array<'backfill' | 'moved' | 'fenced'> = [];
    const ranges = world.deps.ranges;
    const backfillItems = ranges.backfillItems.bind(ranges);
    ranges.backfillItems = async (table, items, options) => {
      events.push('backfill');
      // A write takes a round trip, as on a table: the tail goes on meanwhile.
      await new Promise((resolve) => setImmediate(resolve));
      return backfillItems(table, items, options);
    };
    const publish = world.rings.publishRing;
    world.rings.publishRing = async (next) => {
      const moved = (state: RingState) => (state.moves ?? []).filter((move) => move.phase === 'moved').length;
      const before = moved(world.rings.state);
      const published = await publish(next);
      if (published && next.rebalance !== undefined && moved(next) > before) events.push('moved');
      if (published && (next.fenced ?? []).length > 0) events.push('fenced');
      return published;
    };

    // Act
    await runToEnd(world, 'add-4');

    // Assess: most cut-overs (ring writes that move ranges), and most fences, came before the last backfill page
    const lastPage = events.lastIndexOf('backfill');
    const count = (from: number, to: number, kind: 'moved' | 'fenced') => events.slice(from, to).filter((event) => event === kind).length;
    expect(count(0, lastPage, 'moved')).toBeGreaterThan(count(lastPage, events.length, 'moved'));
    expect(count(0, lastPage, 'fenced')).toBeGreaterThan(count(lastPage, events.length, 'fenced'));
    await expectConsistent(world);
  });

  it("reads a range's first page before the range before it is written to the end, and each range's first page once", async () => {
    // Arrange
    const world = await seeded();
    const job = await world.service.start({ join: [4], leave: [] }, { id: 'add-4' });
    const backfilled = job.ranges.filter((range) => range.to.some((target) => !range.from.includes(target)));
    const rangeOf = (token: number) =>
      backfilled.findIndex((range) =>
        range.start < range.end ? token > range.start && token <= range.end : token > range.start || token <= range.end,
      );
    const ranges = world.deps.ranges;
    const itemsInRange = ranges.itemsInRange.bind(ranges);
    const backfillItems = ranges.backfillItems.bind(ranges);
    /** In order: a first page asked for (the range's position among the backfilled), a write of a range's items done. */
    const events: Array<{ firstPageOf: number } | { writtenOf: number }> = [];
    ranges.itemsInRange = async (table, range, page) => {
      if (!page.after) events.push({ firstPageOf: backfilled.findIndex((candidate) => candidate.end === range.end) });
      return itemsInRange(table, range, page);
    };
    ranges.backfillItems = async (table, items, options) => {
      await new Promise((resolve) => setImmediate(resolve));
      const written = await backfillItems(table, items, options);
      for (const index of new Set(items.map((item) => rangeOf(item.token)))) events.push({ writtenOf: index });
      return written;
    };

    // Act
    await runToEnd(world, 'add-4');

    // Assess
    const firstPages = events.flatMap((event) => ('firstPageOf' in event ? [event.firstPageOf] : []));
    expect(firstPages).toEqual(backfilled.map((_, index) => index));
    for (let index = 1; index < backfilled.length; index += 1) {
      const asked = events.findIndex((event) => 'firstPageOf' in event && event.firstPageOf === index);
      const lastWriteBefore = events.findLastIndex((event) => 'writtenOf' in event && event.writtenOf === index - 1);
      if (lastWriteBefore < 0) continue; // the range before held no key: nothing to write
      expect({ range: index, askedBeforeThePreviousWasWritten: asked < lastWriteBefore }).toEqual({
        range: index,
        askedBeforeThePreviousWasWritten: true,
      });
    }
    await expectConsistent(world);
  });

  it("reads only a fenced range's old and new owner under its fence; its other new replicas are caught up after", async () => {
    // Arrange: a removal, where a range the leaving shard owned goes to one of its replicas and gains another.
    const world = await seeded({ shardCount: 5 });
    const job = await world.service.start({ join: [], leave: [2] }, { id: 'remove-2' });
    const fencedRanges = job.ranges.filter((range) => range.from[0] !== range.to[0]);
    expect(fencedRanges.some((range) => range.to.some((shard) => !range.from.includes(shard)))).toBe(true);
    const shards = world.deps.shards;
    const versionsInRange = shards.versionsInRange.bind(shards);
    const reads: Array<{ table: string; end: number; phase: 'fenced' | 'moved' | 'before' }> = [];
    shards.versionsInRange = async (table, range) => {
      const ring = new Ring(world.rings.state);
      const end = (range as { end: number }).end;
      const phase = ring.isFenced(end) ? 'fenced' : ring.rangeOf(end).move?.phase === 'moved' ? 'moved' : 'before';
      reads.push({ table, end, phase });
      return versionsInRange(table, range);
    };

    // Act
    await runToEnd(world, 'remove-2');

    // Assess
    for (const range of fencedRanges) {
      const underFence = new Set(reads.filter((read) => read.end === range.end && read.phase === 'fenced').map((read) => read.table));
      expect({ end: range.end, underFence: [...underFence].sort() }).toEqual({
        end: range.end,
        underFence: [tableOf(range.from[0]!), tableOf(range.to[0]!)].sort(),
      });
      for (const replica of range.to.filter((shard) => !range.from.includes(shard))) {
        expect(reads).toContainEqual({ table: tableOf(replica), end: range.end, phase: 'moved' });
      }
    }
    await expectConsistent(world);
  });

  it('hands over the ranges whose owner stays and whose catch-up found nothing behind several to a ring write, comparing them no more', async () => {
    // Arrange: one such range's indexes lag in its catch-up (the owner's first read and the new replica's
    // first two miss a key each), so that the catch-up ends with a key behind.
    const world = await seeded();
    const job = await world.service.start({ join: [4], leave: [] }, { id: 'add-4' });
    const keysIn = (range: RangeProgress) =>
      keys.filter((key) => new Ring(world.rings.state).rangeOf(tokenOf('ns', key)).end === range.end);
    const kept = job.ranges.filter((range) => range.from[0] === range.to[0] && range.to.some((shard) => !range.from.includes(shard)));
    expect(kept.length).toBeGreaterThan(2);
    const lagging = kept.find((range) => keysIn(range).length >= 2)!;
    const shards = world.deps.shards;
    const versionsInRange = shards.versionsInRange.bind(shards);
    const atCutOver = new Map<number, number>();
    const reads = { owner: 0, replica: 0 };
    shards.versionsInRange = async (table, range) => {
      const end = (range as { end: number }).end;
      const entries = await versionsInRange(table, range);
      if (end !== lagging.end) {
        const stage = (await world.jobs.current())!.ranges.find((candidate) => candidate.end === end)!.stage;
        if (table === tableOf(4) && stage === 'cutover') atCutOver.set(end, (atCutOver.get(end) ?? 0) + 1);
        return entries;
      }
      if (table === tableOf(lagging.from[0]!)) return ++reads.owner === 1 ? entries.slice(0, -1) : entries;
      if (table !== tableOf(4)) return entries;
      return ++reads.replica <= 2 ? entries.slice(1) : entries;
    };
    const movedPerPublish: number[] = [];
    const publish = world.rings.publishRing;
    world.rings.publishRing = async (next) => {
      const movedIn = (state: RingState) => new Ring(state).ranges().filter((range) => range.move?.phase === 'moved').length;
      const before = movedIn(world.rings.state);
      const published = await publish(next);
      if (published && next.rebalance !== undefined && movedIn(world.rings.state) > before) {
        movedPerPublish.push(movedIn(world.rings.state) - before);
      }
      return published;
    };

    // Act
    await runToEnd(world, 'add-4');

    // Assess: the ranges the catch-up found whole were handed over several at a time (each group as the
    // tail beside the backfill caught it up), their replicas read no more; the lagging one was looked at
    // again before its own ring write (a third read of its owner: the catch-up read it twice; what the new
    // replica holds is then read or, the owner unchanged since its backfill, known).
    expect(Math.max(...movedPerPublish)).toBeGreaterThan(1);
    expect(movedPerPublish.reduce((sum, count) => sum + count, 0)).toBe(job.ranges.length);
    for (const range of kept.filter((candidate) => candidate !== lagging)) {
      expect({ end: range.end, readAtCutOver: atCutOver.get(range.end) ?? 0 }).toEqual({ end: range.end, readAtCutOver: 0 });
    }
    expect(reads.owner).toBe(3);
    await expectConsistent(world);
  });

  it('reads only the owner, in the catch-up and under the fence, of a range no write reached since its backfill', async () => {
    // Arrange: no writes land during the move; a range written during it is compared with its new replicas.
    const world = await seeded();
    world.onSleep.writes = 0;
    const job = await world.service.start({ join: [4], leave: [] }, { id: 'add-4' });
    const backfilled = job.ranges.filter((range) => range.to.some((shard) => !range.from.includes(shard)));
    const written = backfilled[2]!;
    const writtenKey = keys.find((key) => new Ring(world.rings.state).rangeOf(tokenOf('ns', key)).end === written.end)!;
    const shards = world.deps.shards;
    const versionsInRange = shards.versionsInRange.bind(shards);
    const replicaReads = new Set<number>();
    let writing: Promise<void> | undefined;
    shards.versionsInRange = async (table, range) => {
      const end = (range as { end: number }).end;
      const stage = (await world.jobs.current())!.ranges.find((candidate) => candidate.end === end)!.stage;
      // The catch-up's first read: a write lands on one range, after its backfill, before any read of it.
      if (stage === 'copying') await (writing ??= world.write(writtenKey));
      if (table === tableOf(4)) replicaReads.add(end);
      return versionsInRange(table, range);
    };

    // Act
    await runToEnd(world, 'add-4');

    // Assess
    expect(writing).toBeDefined();
    expect([...replicaReads]).toEqual([written.end]);
    await expectConsistent(world);
  });

  it('pauses for a failover that begins during its backfill, will not resume while it lasts, then finishes', async () => {
    const world = await seeded();
    await world.service.start({ join: [4], leave: [] }, { id: 'add-4', rateKeysPerSecond: 20 });
    const short = new RebalanceService({ ...world.deps, limits: { ...rebalanceLimits, stepBudgetMs: 2_000 } });
    const first = await short.advance('add-4');
    expect(first.ranges.some((range) => range.stage === 'planned')).toBe(true);
    // Shard 1 is confirmed down: the failover fences every range it owns, some of which the rebalance moves.
    const fence = await world.failover.fence(1);
    expect(fence.ranges.length).toBeGreaterThan(0);
    const paused = await world.service.advance('add-4');
    expect(paused).toMatchObject({
      status: 'paused',
      message: expect.stringMatching(/^the ring has fenced ranges: a failover is in progress/),
    });
    // Its copy stopped where it was: nothing was backfilled while the failover held the ring.
    expect(paused.ranges.map((range) => range.stage)).toEqual(first.ranges.map((range) => range.stage));
    await expect(world.service.request('add-4', 'resume')).rejects.toMatchObject({
      code: 'rebalance.conflict',
      message: expect.stringMatching(/a failover is in progress/),
    });
    // A cancel asked for now waits for the failover too.
    await world.service.request('add-4', 'cancel');
    expect(await world.service.advance('add-4')).toMatchObject({ status: 'paused', requested: 'cancel' });
    // The shard answered after all: the failover is abandoned and lifts its fence; the cancel goes on.
    await world.failover.abandon(1);
    expect((await world.service.request('add-4', 'resume')).job).toMatchObject({ status: 'running', requested: 'cancel' });
    await runToEnd(world, 'add-4');
    expect((await world.service.status())!.job.status).toBe('cancelled');
    await expectConsistent(world);
    // Once more, to the end: it pauses for the failover, and finishes once the failover is over.
    await world.service.start({ join: [4], leave: [] }, { id: 'add-4-again', rateKeysPerSecond: 20 });
    await short.advance('add-4-again');
    await world.failover.fence(1);
    expect(await world.service.advance('add-4-again')).toMatchObject({ status: 'paused' });
    await world.failover.abandon(1);
    await world.service.request('add-4-again', 'resume');
    await runToEnd(world, 'add-4-again');
    expect((await world.service.status())!.job.status).toBe('done');
    await expectConsistent(world);
  });

  it('begins no work over a failover that fences its ranges in the same instant, and the failover hands them over', async () => {
    const world = await seeded();
    await world.service.start({ join: [4], leave: [] }, { id: 'add-4' });
    // The failover of shard 1 wins the race for the ring write that would mark the first group copying.
    const publishRing = world.rings.publishRing;
    let fence: { epoch: number; ranges: number[] } | undefined;
    world.rings.publishRing = async (next: RingState) => {
      if (!fence && (next.moves ?? []).some((move) => move.phase === 'copying')) {
        const owned = new Ring(world.rings.state)
          .ranges()
          .filter((range) => range.owner === 1)
          .map((range) => range.end);
        world.rings.state = fencedRangesRing(world.rings.state, owned);
        fence = { epoch: world.rings.state.epoch, ranges: world.rings.state.fenced! };
      }
      return publishRing(next);
    };
    const paused = await world.service.advance('add-4');
    expect(fence).toBeDefined();
    expect(paused).toMatchObject({ status: 'paused', message: expect.stringMatching(/a failover is in progress/) });
    // Nothing was marked copying over the failover: the ranges it elects on keep the replicas it saw.
    expect(world.rings.state.moves ?? []).toEqual([]);
    const choices = [];
    for (const end of fence!.ranges) choices.push(await world.failover.handOverRange(1, end));
    expect((await world.failover.publish(1, choices, fence!.epoch, 'failover-1')).published).toBe(true);
  });

  it('refuses a second rebalance while one runs, and actions its state does not allow', async () => {
    const world = await seeded();
    await world.service.start({ join: [4], leave: [] }, { id: 'add-4' });
    await expect(world.service.start({ join: [5], leave: [] }, { id: 'add-5' })).rejects.toMatchObject({ code: 'rebalance.conflict' });
    await expect(world.service.request('add-4', 'resume')).rejects.toMatchObject({ code: 'rebalance.conflict' });
    await expect(world.service.request('other', 'pause')).rejects.toMatchObject({ code: 'rebalance.notFound' });
    await runToEnd(world, 'add-4');
    await expect(world.service.request('add-4', 'cancel')).rejects.toMatchObject({ code: 'rebalance.conflict' });
    await expect(world.service.start({ join: [], leave: [] }, { id: 'noop' })).rejects.toMatchObject({ code: 'rebalance.refused' });
    world.shards.down.add('shard-5');
    await expect(world.service.start({ join: [5], leave: [] }, { id: 'add-5' })).rejects.toMatchObject({
      code: 'rebalance.refused',
      message: expect.stringMatching(/shard-5\) does not answer: deploy it first/),
    });
  });

  it('the broken mode (cut-over before any copy) loses keys, and the check catches it', async () => {
    const faults = new ScriptedFaults();
    faults.broken.add('rebalanceCutoverBeforeCopy');
    const world = await seeded({ faults });
    await world.service.start({ join: [4], leave: [] }, { id: 'add-4' });
    await runToEnd(world, 'add-4');
    await expect(expectConsistent(world)).rejects.toThrow();
  });
});

/** Small placement groups (4 blocks), so that one volume's groups lie on every shard. */
const smallVolumes: VolumeLimits = { ...volumeLimits, groupBlocks: 4 };

/**
 * A volume on the world's shards and ring, written between the workflow's steps at unaligned offsets with a pattern
 * each; `expected` holds what every acknowledged write left. A write refused with a retryable error (a fenced range, an
 * owner moving under its transaction) is sent again first at the next step: all or nothing, so the bytes end as if it
 * landed once, in its turn.
 */
async function volumeUnderLoad(world: World) {
  const ring = new CachedRingSource(world.rings, world.clock);
  const txns = new TransactionService({
    shards: world.shards,
    records: world.records,
    ring,
    clock: world.clock,
    ids: new CountingIds(),
    replication: world.replication,
    limits: volumeTxnLimits(testTxnLimits, smallVolumes),
  });
  const kv = memoryKv({
    shards: world.shards,
    ring,
    clock: world.clock,
    replication: world.replication,
    health: world.health,
    intents: txns.intents,
  });
  const volumes = new VolumeService({
    kv,
    txns: new InProcessTxnRunner(txns),
    ids: new CountingIds(),
    clock: world.clock,
    limits: smallVolumes,
  });
  const blockBytes = smallVolumes.blockBytes;
  const sizeBytes = 64 * blockBytes;
  await volumes.create('ns', { name: 'disk', sizeBytes });
  const { epoch } = await volumes.attach('ns', 'disk', { holder: 'test', leaseSeconds: 300 });
  const expected = new Uint8Array(sizeBytes);
  let written = 0;
  let pending: { offset: number; bytes: Uint8Array } | undefined;
  const attempt = async (write: { offset: number; bytes: Uint8Array }): Promise<boolean> => {
    try {
      await volumes.write('ns', 'disk', write.offset, write.bytes, { epoch });
    } catch (error) {
      // A fenced range, or a transaction that met a moving owner: retryable, sent again (as the SDK and the NBD server do).
      if (!isRingstoreError(error) || !error.retryable) throw error;
      return false;
    }
    expected.set(write.bytes, write.offset);
    written += 1;
    return true;
  };
  const writeNext = async () => {
    if (pending && !(await attempt(pending))) return;
    pending = undefined;
    const n = written + 1;
    const offset = (n * 7_919) % (sizeBytes - 3 * blockBytes);
    const bytes = Uint8Array.from({ length: blockBytes + (n % 3) * 1_000 }, (_, index) => ((index + n * 13) % 251) + 1);
    if (!(await attempt({ offset, bytes }))) pending = { offset, bytes };
  };
  // The whole volume written first, so that every placement group has blocks to move.
  await attempt({ offset: 0, bytes: Uint8Array.from({ length: sizeBytes }, (_, index) => (index % 199) + 1) });
  // Three writes at each of the workflow's waits, as the world's key writes.
  world.alsoOnSleep.push(async () => {
    for (let n = 0; n < 3; n += 1) await writeNext();
  });
  return {
    volumes,
    expected,
    written: () => written,
    /** After the rebalance: the write left refused lands. */
    settle: async () => {
      world.alsoOnSleep.length = 0;
      if (pending && !(await attempt(pending))) throw new Error('a volume write is still refused after the rebalance');
    },
  };
}

describe('block volumes across a rebalance', () => {
  it.each([
    { label: 'a shard added', shardCount: 4, change: { join: [4], leave: [] } },
    { label: 'a shard removed', shardCount: 5, change: { join: [], leave: [2] } },
  ])(
    '$label: blocks move with their ranges, every acknowledged write reads back whole, each block only on its replicas',
    async ({ shardCount, change }) => {
      const world = await seeded({ shardCount });
      const volume = await volumeUnderLoad(world);
      await world.service.start(change, { id: 'with-a-volume' });
      await runToEnd(world, 'with-a-volume');
      await volume.settle();

      // Not vacuous: writes landed between the workflow's steps, on a volume whose groups lie on every shard.
      expect(volume.written()).toBeGreaterThan(10);
      const read = await volume.volumes.read('ns', 'disk', 0, volume.expected.byteLength);
      const firstDifference = read.findIndex((byte, index) => byte !== volume.expected[index]);
      expect(firstDifference).toBe(-1);
      const ring = new Ring(world.rings.state);
      expect(ring.rebalancing).toBe(false);
      const keyspace = volumeNamespaceOf('ns');
      const misplaced: string[] = [];
      const owners = new Map<string, number>();
      for (const [table, items] of world.shards.tables) {
        for (const item of items.values()) {
          if (item.namespace !== keyspace) continue;
          const holders = ring.replicasOf(tokenOf(keyspace, item.key)).map((shard) => shard.table);
          if (!holders.includes(table)) misplaced.push(`${item.key} on ${table} (replicas ${holders.join(', ')})`);
          if (table === holders[0]) owners.set(item.key, item.version);
        }
      }
      expect(misplaced).toEqual([]);
      expect(new Set([...owners.keys()].map((key) => ring.ownerOf(tokenOf(keyspace, key)).table)).size).toBe(ring.shards.length);
      // Every replica holds its owner's version of each block.
      const behind: string[] = [];
      for (const [key, version] of owners) {
        for (const shard of ring.replicasOf(tokenOf(keyspace, key))) {
          const copy = world.shards.tables.get(shard.table)?.get(`${keyspace}#${key}`);
          if (copy?.version !== version) behind.push(`${key} on ${shard.table}: v${copy?.version} of v${version}`);
        }
      }
      expect(behind).toEqual([]);
    },
  );
});

describe('requests on a range fenced for its cut-over', () => {
  /** A seeded world mid-rebalance: one range whose owner changes marked copying and fenced, and a key of it. */
  async function fencedForCutOver(options: { faults?: ScriptedFaults; fenced?: boolean } = {}) {
    const world = await seeded(options.faults ? { faults: options.faults } : {});
    // A removal: the leaving shard's ranges go to shards that were not its replicas, so after the cut-over
    // the old owner takes none of the range's writes.
    const job = await world.service.start({ join: [], leave: [0] }, { id: 'remove-0' });
    const range = job.ranges.find((candidate) => candidate.from[0] === 0 && !candidate.to.includes(0))!;
    const ring = new Ring(world.rings.state);
    const key = keys.find((candidate) => ring.rangeOf(tokenOf('ns', candidate)).end === range.end)!;
    // The new owner holds the range (as after the backfill and catch-up), then the range is fenced.
    for (const target of range.to)
      await world.shards.copyItems(tableOf(target), [(await world.shards.get(tableOf(range.from[0]!), 'ns', key))!], {
        nowSeconds: 0,
        listed: true,
      });
    world.rings.state = withMovePhase(world.rings.state, range.end, 'copying');
    if (options.fenced ?? true) world.rings.state = fencedRangesRing(world.rings.state, [range.end]);
    // The lease wait: every handler's ring from before has run out.
    world.clock.now += rebalanceLimits.leaseWaitMs;
    return { world, range, key };
  }

  it('a strong read is answered by the owner at once, at the latest version; a write waits for the cut-over', async () => {
    const { world, key } = await fencedForCutOver();

    const read = await world.kv.get('ns', key, 'strong');
    const write = await world.kv
      .put('ns', key, { value: text('during the fence'), contentType: 'text/plain' })
      .catch((error: unknown) => error);

    expect(read).toMatchObject({ kind: 'value', item: { version: world.latest.get(key)!.version } });
    expect(write).toMatchObject({ code: 'shard.failingOver' });
  });

  it('a strong read routed by a fenced ring the cut-over has since replaced is routed again, to the new owner', async () => {
    // Arrange: this handler holds the fenced ring (leased, still good by its clock)
    const { world, range, key } = await fencedForCutOver();
    await world.kv.get('ns', key, 'strong');
    // The cut-over publishes the new owner, and another handler's write is acknowledged there
    world.rings.state = unfencedRing(withMovePhase(world.rings.state, range.end, 'moved'), [range.end]);
    const other = world.handler();
    const ack = await other.put('ns', key, { value: text('after the cut-over'), contentType: 'text/plain', consistency: 'strong' });

    // Act: the first handler's lease has not run out; its read of the old owner must not be answered
    const read = await world.kv.get('ns', key, 'strong');

    // Assess
    expect(read).toMatchObject({ kind: 'value', item: { version: ack.version } });
    expect(new TextDecoder().decode((read as { value: Uint8Array }).value)).toBe('after the cut-over');
  });

  it('a write routed by a ring of the copying stage and paused across the cut-over is not acknowledged on the old owner', async () => {
    // Arrange: the range is copying (its mark's full lease waited out); a handler holds that ring
    const faults = new PauseAt('write.beforeOwner');
    const { world, range, key } = await fencedForCutOver({ faults, fenced: false });
    const writer = world.handler();
    await writer.get('ns', key, 'strong');
    // Paused between routing and sending: the cut-over fences, waits its (shorter) lease, and moves the range
    faults.arm(() => {
      world.rings.state = fencedRangesRing(world.rings.state, [range.end]);
      world.clock.now += rebalanceLimits.cutoverLeaseWaitMs;
      world.rings.state = unfencedRing(withMovePhase(world.rings.state, range.end, 'moved'), [range.end]);
    });

    // Act: an eventual write, acknowledged by the owner alone (the new owner would hear of it only later)
    const ack = await writer.put('ns', key, { value: text('across the cut-over'), contentType: 'text/plain', consistency: 'eventual' });

    // Assess: acknowledged on the new owner, where it reads; the old owner's copy was never acknowledged
    expect(world.shards.tables.get(tableOf(range.to[0]!))?.get(`ns#${key}`)?.version).toBe(ack.version);
    const read = await world.handler().get('ns', key, 'strong');
    expect(read).toMatchObject({ kind: 'value', item: { version: ack.version } });
  });

  /**
   * A range copying to a new owner and a handler holding that ring; its first write to the old owner lands,
   * and before it returns its lease runs out and the cut-over fences the range, waits, copies the old
   * owner's versions (this write's among them) to the new owner and moves the range; then `afterMove`.
   */
  async function writeCarriedByCutOver(
    afterMove: (world: Awaited<ReturnType<typeof fencedForCutOver>>['world'], key: string) => Promise<unknown>,
  ) {
    const { world, range, key } = await fencedForCutOver({ fenced: false });
    const writer = world.handler();
    await writer.get('ns', key, 'strong');
    const oldOwner = tableOf(range.from[0]!);
    const newOwner = tableOf(range.to[0]!);
    const write = world.shards.write.bind(world.shards);
    let cutOver = false;
    world.shards.write = async (table, item) => {
      const result = await write(table, item);
      if (table === oldOwner && !cutOver && result.outcome === 'written') {
        cutOver = true;
        world.rings.state = fencedRangesRing(world.rings.state, [range.end]);
        world.clock.now += rebalanceLimits.cutoverLeaseWaitMs;
        await world.shards.copyItems(newOwner, [(await world.shards.get(oldOwner, 'ns', key))!], { nowSeconds: 0, listed: true });
        world.rings.state = unfencedRing(withMovePhase(world.rings.state, range.end, 'moved'), [range.end]);
        await afterMove(world, key);
      }
      return result;
    };
    return { world, key, writer, newOwner, before: world.latest.get(key)!.version, cutOver: () => cutOver };
  }

  it('a write that landed on the old owner and was carried by the fenced catch-up is acknowledged there, not applied twice', async () => {
    // Arrange
    const { world, key, writer, newOwner, before, cutOver } = await writeCarriedByCutOver(async () => undefined);

    // Act
    const ack = await writer.put('ns', key, { value: text('carried'), contentType: 'text/plain', consistency: 'strong' });

    // Assess: one version, the one the old owner gave it and the new owner holds; not a second application
    expect(cutOver()).toBe(true);
    expect(ack.version).toBe(before + 1);
    expect(world.shards.tables.get(newOwner)?.get(`ns#${key}`)?.version).toBe(before + 1);
    const read = await world.handler().get('ns', key, 'strong');
    expect(read).toMatchObject({ kind: 'value', item: { version: before + 1 } });
  });

  it('a write carried by the fenced catch-up and overwritten on the new owner since is answered outcome unknown, not applied again', async () => {
    // Arrange: as above, and once the range has moved another handler writes the key on the new owner
    const { world, key, writer, newOwner, before } = await writeCarriedByCutOver((moved, movedKey) =>
      moved.handler().put('ns', movedKey, { value: text('later'), contentType: 'text/plain', consistency: 'strong' }),
    );

    // Act
    const outcome = await writer
      .put('ns', key, { value: text('carried, then overwritten'), contentType: 'text/plain', consistency: 'strong' })
      .catch((error: unknown) => error);

    // Assess: not acknowledged, not sent again: the new owner holds the carried version and the later one only
    expect(outcome).toMatchObject({ code: 'shard.failingOver', retryable: false, details: { version: before + 1 } });
    expect(world.shards.tables.get(newOwner)?.get(`ns#${key}`)?.version).toBe(before + 2);
    const read = await world.handler().get('ns', key, 'strong');
    expect(new TextDecoder().decode((read as { value: Uint8Array }).value)).toBe('later');
  });

  it('a strong read under the fence does not answer a version the old owner holds and the new owner does not; it waits for the cut-over', async () => {
    // Arrange: a write routed before the fence landed on the old owner after the fenced catch-up read the
    // range: unacknowledged, and not on the new owner (its handler will send it there again)
    const { world, range, key } = await fencedForCutOver();
    const oldOwner = tableOf(range.from[0]!);
    const caughtUp = (await world.shards.get(oldOwner, 'ns', key))!;
    await world.shards.copyItems(oldOwner, [{ ...caughtUp, version: caughtUp.version + 1, modifiedAtMs: world.clock.now }], {
      nowSeconds: 0,
      listed: true,
    });
    let waitedMs = 0;
    const sleep = async (ms: number) => {
      world.clock.now += ms;
      waitedMs += ms;
      if (waitedMs >= 300) world.rings.state = unfencedRing(withMovePhase(world.rings.state, range.end, 'moved'), [range.end]);
    };

    // Act
    const read = await world.handler({ sleep }).get('ns', key, 'strong');

    // Assess: the new owner's version, after the cut-over; never the one a later read could not see again
    expect(waitedMs).toBeGreaterThanOrEqual(300);
    expect(read).toMatchObject({ kind: 'value', item: { version: caughtUp.version } });
  });

  it('a write waiting on the fence goes on as soon as it is lifted, not when its lease runs out', async () => {
    // Arrange: the cut-over lifts the fence 200 ms into the write's wait
    const { world, range, key } = await fencedForCutOver();
    let waitedMs = 0;
    const sleep = async (ms: number) => {
      world.clock.now += ms;
      waitedMs += ms;
      if (waitedMs >= 200) world.rings.state = unfencedRing(withMovePhase(world.rings.state, range.end, 'moved'), [range.end]);
    };
    const waiting = world.handler({ sleep });
    await waiting.get('ns', 'any-key', 'eventual').catch(() => undefined);

    // Act
    const ack = await waiting.put('ns', key, { value: text('after the wait'), contentType: 'text/plain', consistency: 'strong' });

    // Assess
    expect(ack.version).toBe(world.latest.get(key)!.version + 1);
    expect(waitedMs).toBeLessThan(200 + fencePollMs);
    expect(world.shards.tables.get(tableOf(range.to[0]!))?.get(`ns#${key}`)?.version).toBe(ack.version);
  });
});

describe('a wave of cut-overs', () => {
  const range = (stage: RangeProgress['stage'], keysVerified: number): RangeProgress => ({
    start: 0,
    end: 1,
    from: [0],
    to: [1],
    stage,
    keysCopied: 0,
    keysVerified,
  });

  it('takes the ranges ready for it from the first on, within the range and key bounds, and always at least one', () => {
    const ranges = [
      range('moved', 5),
      range('cutover', 10),
      range('copying', 99),
      range('cutover', 10),
      range('cutover', 15),
      range('cutover', 1),
    ];
    expect(cutoverWave(ranges, 1, { cutoverRangesMax: 8, cutoverKeysMax: 100 })).toEqual([1, 3, 4, 5]);
    expect(cutoverWave(ranges, 1, { cutoverRangesMax: 2, cutoverKeysMax: 100 })).toEqual([1, 3]);
    expect(cutoverWave(ranges, 1, { cutoverRangesMax: 8, cutoverKeysMax: 30 })).toEqual([1, 3]);
    expect(cutoverWave(ranges, 4, { cutoverRangesMax: 8, cutoverKeysMax: 5 })).toEqual([4]);
  });
});

describe('the status of a rebalance', () => {
  it('counts ranges by stage and estimates the time left from the share of the token space moved', () => {
    const started = startedRing(ringOf(4), { join: [4], leave: [] } satisfies RebalanceChange, 'r', tableOf);
    const ranges = plannedRanges(started);
    const half = Math.floor(ranges.length / 2);
    const job = {
      id: 'r',
      change: { join: [4], leave: [] },
      status: 'running' as const,
      rateKeysPerSecond: 0,
      ranges: ranges.map((range, index) => ({ ...range, stage: index < half ? ('moved' as const) : range.stage, keysCopied: 10 })),
      startedAtMs: 0,
      updatedAtMs: 0,
      revision: 3,
    };
    const view = describeJob(job, 10_000);
    expect(view.ranges).toEqual({ total: ranges.length, planned: ranges.length - half, moving: 0, moved: half, cleaned: 0 });
    expect(view.keysCopied).toBe(10 * ranges.length);
    expect(view.keysPerSecond).toBe(ranges.length);
    expect(view.progress).toBeGreaterThan(0);
    expect(view.progress).toBeLessThan(1);
    expect(view.etaSeconds).toBe(Math.ceil((10_000 / view.progress - 10_000) / 1000));
  });
});
