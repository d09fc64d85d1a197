// Failover in the core: the fenced and handed-over rings, the election, and the ring lease that keeps a
// handler holding an old ring from acknowledging anything on a shard that lost the range.
import fc from 'fast-check';
import { RingstoreError, isRingstoreError } from '../../../lambdas/core/errors';
import {
  electOwner,
  fencedRangesRing,
  fencedRing,
  handedOverRing,
  rangesToHandOver,
  rangesToMoveBack,
  reReplicationPlan,
  unfencedRing,
  withAddedReplicas,
} from '../../../lambdas/core/failover';
import { Ring, initialRingState, tokenOf } from '../../../lambdas/core/ring';
import { FailoverService, NoCandidateError, failOverInProcess, runningRecordStaleMs } from '../../../lambdas/core/failover-service';
import { automaticFailoverId, startAutomaticFailover } from '../../../lambdas/core/failover-trigger';
import { MaintenanceService } from '../../../lambdas/core/maintenance';
import { RejoinService } from '../../../lambdas/core/rejoin';
import { FailoverStats } from '../../../lambdas/adapters/failover-metrics';
import { CachedRingSource, cutoverLeaseMs, leaseMsOf, ringLeaseMarginMs, ringLeaseMs } from '../../../lambdas/core/ring-source';
import { startedRing, withMovePhase } from '../../../lambdas/core/rebalance';
import type { FailoverRequest, RingState, VersionEntry } from '../../../lambdas/ports';
import { limits, txnLimits } from '../../../schemas/topology';
import { TransactionService } from '../../../lambdas/core/transactions';
import {
  CountingIds,
  ManualClock,
  MemoryFailoverLog,
  MemoryShardStore,
  MemoryTxnRecords,
  PauseAt,
  ScriptedFaults,
  memoryReplication,
  memoryKv,
} from '../../support/memory-ports';
import { handoffOnlyLimits } from '../../support/maintenance';
import { text } from '../../support/bytes';

const initial = initialRingState({ shardCount: 4, replicationFactor: 3, vnodesPerShard: 8, tableName: (id) => `shard-${id}` });

/** The ring a failover of `failed` publishes when every range goes to its first other replica. */
function failedOver(state: RingState, failed: number): RingState {
  const fenced = fencedRing(state, failed);
  return handedOverRing(
    fenced,
    rangesToHandOver(fenced, failed).map(({ range, candidates }) => ({ end: range.end, owner: candidates[0]! })),
  );
}

describe('failover rings', () => {
  it('fences exactly the ranges the failed shard owns, at the next epoch', () => {
    const fenced = new Ring(fencedRing(initial, 2));
    expect(fenced.epoch).toBe(initial.epoch + 1);
    for (const range of fenced.ranges()) {
      expect(range.fenced === true).toBe(range.owner === 2);
      expect(fenced.isFenced(range.end)).toBe(range.owner === 2);
    }
  });

  it('hands every fenced range to another of its replicas, keeping the replica set, and lifts the fence', () => {
    const before = new Ring(initial);
    const after = new Ring(failedOver(initial, 2));
    expect(after.epoch).toBe(initial.epoch + 2);
    before.ranges().forEach((range, index) => {
      const moved = after.ranges()[index]!;
      expect(moved.fenced).toBeUndefined();
      expect(new Set(moved.replicas)).toEqual(new Set(range.replicas));
      expect(moved.owner).toBe(range.owner === 2 ? range.replicas[1] : range.owner);
      expect(after.ownerOf(range.end).id).toBe(moved.owner);
      expect(after.replicasOf(range.end).map((shard) => shard.id)).toEqual(moved.replicas);
    });
  });

  it('moving a range back to its walk owner removes the override', () => {
    const moved = failedOver(initial, 2);
    const back = handedOverRing(
      moved,
      new Ring(initial)
        .ranges()
        .filter((range) => range.owner === 2)
        .map((range) => ({ end: range.end, owner: 2 })),
    );
    expect(back.owners).toEqual([]);
    expect(new Ring(back).ranges().map((range) => range.replicas)).toEqual(new Ring(initial).ranges().map((range) => range.replicas));
  });

  it('refuses an owner that is not one of the range replicas, and a shard that owns nothing', () => {
    const range = new Ring(initial).ranges().find((candidate) => candidate.replicas.length < 4)!;
    const outsider = [0, 1, 2, 3].find((shard) => !range.replicas.includes(shard))!;
    expect(() => handedOverRing(initial, [{ end: range.end, owner: outsider }])).toThrow(/not one of its replicas/);
    expect(() => fencedRing(failedOver(initial, 2), 2)).toThrow(/owns no token range/);
  });

  it('a failover that cannot finish lifts its fence and changes nothing else', () => {
    const fenced = fencedRing(initial, 1);
    const lifted = unfencedRing(fenced, fenced.fenced!);
    expect(lifted.epoch).toBe(fenced.epoch + 1);
    expect(new Ring(lifted).ranges()).toEqual(new Ring(initial).ranges());
  });
});

describe('electOwner', () => {
  const keys = ['a', 'b', 'c', 'd', 'e'];
  const view = fc.record({
    shard: fc.constant(0),
    versions: fc.array(fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }), { minLength: keys.length, maxLength: keys.length }),
  });
  const entriesOf = (versions: Array<number | undefined>): VersionEntry[] =>
    versions.flatMap((version, index) =>
      version === undefined ? [] : [{ namespace: 'ns', key: keys[index]!, token: index, version, tombstone: false }],
    );

  it('picks the candidate missing the fewest newest versions, and its catch-up makes it hold every newest version', () => {
    fc.assert(
      fc.property(fc.array(view, { minLength: 1, maxLength: 3 }), (raw) => {
        const views = raw.map((candidate, index) => ({ shard: index + 1, entries: entriesOf(candidate.versions) }));
        const election = electOwner(views);
        const newest = new Map<string, number>();
        for (const candidate of views) {
          for (const entry of candidate.entries) newest.set(entry.key, Math.max(newest.get(entry.key) ?? 0, entry.version));
        }
        const chosen = views.find((candidate) => candidate.shard === election.owner)!;
        const holds = new Map(chosen.entries.map((entry) => [entry.key, entry.version]));
        for (const step of election.catchUp) {
          const source = views.find((candidate) => candidate.shard === step.from)!;
          expect(source.entries.find((entry) => entry.key === step.key)?.version).toBe(step.version);
          holds.set(step.key, step.version);
        }
        expect(holds).toEqual(newest);
        const fewest = Math.min(...Object.values(election.missing));
        expect(election.missing[election.owner]).toBe(fewest);
        // Ties go to the earlier replica.
        expect(views.findIndex((candidate) => election.missing[candidate.shard] === fewest)).toBe(views.indexOf(chosen));
      }),
      { numRuns: 500 },
    );
  });

  it('needs a live candidate', () => {
    expect(() => electOwner([])).toThrow(/at least one live candidate/);
  });
});

describe('the ring lease', () => {
  function ringStore(state: RingState) {
    const store = { state, reads: 0, readRing: async () => (store.reads++, store.state) };
    return store;
  }

  it('re-reads a ring older than the lease for writes, and renews it in the background past half of it', async () => {
    const clock = new ManualClock();
    const store = ringStore(initial);
    const source = new CachedRingSource(store, clock);
    await source.lease();
    clock.now += ringLeaseMs / 4;
    await source.lease();
    expect(store.reads).toBe(1);
    clock.now += ringLeaseMs / 2;
    const renewing = await source.lease();
    expect(renewing.readAtMs).toBe(clock.now - (ringLeaseMs * 3) / 4);
    await Promise.resolve();
    expect(store.reads).toBe(2);
    clock.now += ringLeaseMs;
    expect((await source.lease()).readAtMs).toBe(clock.now);
  });

  it('a fresh read starts after the call, even while an older read is in flight', async () => {
    const clock = new ManualClock();
    const store = ringStore(initial);
    const source = new CachedRingSource(store, clock);
    // A read in flight, started before the ring changes and the fresh read is asked for
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const readRing = store.readRing;
    store.readRing = async () => {
      const state = store.state;
      await held;
      return state;
    };
    const older = source.lease();
    store.state = fencedRing(initial, 2);
    store.readRing = readRing;
    clock.now += 10;
    const fresh = source.fresh();
    release();

    expect((await older).ring.epoch).toBe(initial.epoch);
    expect((await fresh).ring.epoch).toBe(store.state.epoch);
    expect((await fresh).readAtMs).toBe(clock.now);
  });

  it('is shorter while the ring shows ranges copying to new owners: a cut-over waits less', async () => {
    const clock = new ManualClock();
    const started = startedRing(initial, { join: [initial.shards.length], leave: [] }, 'add', (id) => `shard-${id}`);
    const range = new Ring(started).movingRanges().find((candidate) => candidate.move?.to[0] !== candidate.move?.from[0])!;
    const store = ringStore(withMovePhase(started, range.end, 'copying'));
    const source = new CachedRingSource(store, clock);
    const lease = await source.lease();
    store.state = fencedRangesRing(store.state, [range.end]);

    clock.now += cutoverLeaseMs;

    expect(await source.stillOwner(lease, range.end)).toBe(false);
    expect((await source.lease()).ring.isFenced(range.end)).toBe(true);
    expect(leaseMsOf(new Ring(initial))).toBe(ringLeaseMs);
  });

  it('holds within the lease; after it, only if the owner is unchanged and not fenced', async () => {
    const clock = new ManualClock();
    const store = ringStore(initial);
    const source = new CachedRingSource(store, clock);
    const lease = await source.lease();
    const range = lease.ring.ranges().find((candidate) => candidate.owner === 2)!;
    const other = lease.ring.ranges().find((candidate) => candidate.owner !== 2 && !candidate.replicas.includes(2))!;
    store.state = fencedRing(initial, 2);
    expect(await source.stillOwner(lease, range.end)).toBe(true);
    clock.now += ringLeaseMs;
    expect(await source.stillOwner(lease, range.end)).toBe(false);
    expect(await source.stillOwner(lease, other.end)).toBe(true);
    store.state = failedOver(initial, 2);
    expect(await source.stillOwner(lease, range.end)).toBe(false);
  });
});

/** KV and failover services on in-memory ports, routed by a CachedRingSource over a ring record in memory. */
function failoverWorld(faults = new ScriptedFaults()) {
  const metrics = new FailoverStats();
  const shards = new MemoryShardStore();
  const clock = new ManualClock();
  const rings = {
    state: initial,
    readRing: async () => rings.state,
    publishRing: async (next: RingState) => {
      if (rings.state.epoch !== next.epoch - 1) return false;
      rings.state = next;
      return true;
    },
  };
  const { replication, health, hints } = memoryReplication(shards, clock, faults);
  const kv = memoryKv({ shards, ring: new CachedRingSource(rings, clock), clock, replication, health, faults, failoverMetrics: metrics });
  const log = new MemoryFailoverLog();
  const sleep = async (ms: number) => void (clock.now += ms);
  const records = new MemoryTxnRecords();
  const deps = {
    rings,
    shards,
    hints,
    records,
    health,
    clock,
    faults,
    log,
    sleep,
    limits: {
      catchUpConcurrency: 4,
      hintPageSize: 7,
      confirmProbes: 3,
      confirmIntervalMs: 200,
      leaseWaitMs: ringLeaseMs + ringLeaseMarginMs,
      txnLookbackMs: 60_000,
      txnLookaheadMs: 60_000,
      txnPageSize: 3,
    },
  };
  const failover = new FailoverService(deps);
  return { shards, clock, rings, kv, hints, health, log, records, deps, failover, metrics };
}

describe('a writer holding the old ring across a failover', () => {
  const key = Array.from({ length: 200 }, (_, index) => `k${index}`).find(
    (candidate) => new Ring(initial).ownerOf(tokenOf('ns', candidate)).id === 2,
  )!;

  it('is not acknowledged on the old owner: the write is routed again and lands on the new owner', async () => {
    const faults = new PauseAt('write.beforeOwner', () => {
      // Paused between routing and sending: meanwhile the failover fences, waits, and hands over.
      world.rings.state = failedOver(initial, 2);
      world.clock.now += 10 * ringLeaseMs;
    });
    const world = failoverWorld(faults);
    const ack = await world.kv.put('ns', key, { value: text('v1'), contentType: 'text/plain' });
    const newOwner = new Ring(world.rings.state).ownerOf(tokenOf('ns', key)).table;
    expect(ack.version).toBe(1);
    expect(world.shards.tables.get(newOwner)?.get(`ns#${key}`)?.version).toBe(1);
    // The paused attempt landed on the old owner (a stray copy reconciled when it rejoins), unacknowledged.
    expect(world.shards.tables.get('shard-2')?.get(`ns#${key}`)?.version).toBe(1);
    const read = await world.kv.get('ns', key, 'strong');
    expect(read.kind === 'value' && new TextDecoder().decode(read.value)).toBe('v1');
    expect(world.metrics.counts).toMatchObject({ staleRoutes: 1, fencedRequests: 0 });
  });

  it('answers a retryable 503 while the range is fenced, and writes nothing', async () => {
    const world = failoverWorld();
    world.rings.state = fencedRing(initial, 2);
    const error = await world.kv.put('ns', key, { value: text('v1'), contentType: 'text/plain' }).catch((caught: unknown) => caught);
    expect(isRingstoreError(error) && error.code === 'shard.failingOver' && error.retryable).toBe(true);
    for (const table of world.shards.tables.values()) expect(table.has(`ns#${key}`)).toBe(false);
    const read = await world.kv.get('ns', key, 'strong').catch((caught: unknown) => caught);
    expect(isRingstoreError(read) && read.code).toBe('shard.failingOver');
    expect(world.metrics.counts).toMatchObject({ fencedRequests: 2, staleRoutes: 0 });
  });
});

describe('FailoverService on in-memory ports', () => {
  const ownedBy2 = Array.from({ length: 400 }, (_, index) => `k${index}`).filter(
    (key) => new Ring(initial).ownerOf(tokenOf('ns', key)).id === 2,
  );

  it('keeps every acknowledged strong write readable at its version after the owner fails', async () => {
    const w = failoverWorld();
    const acked = new Map<string, number>();
    const write = async (key: string, round: number) => {
      const ack = await w.kv.put('ns', key, { value: text(`${key}@${round}`), contentType: 'text/plain', consistency: 'strong' });
      acked.set(key, ack.version);
    };
    for (const key of ownedBy2) await write(key, 1);
    // One replica of every range is away for a while: its copies go to the failure log as hints.
    w.shards.down.add('shard-3');
    for (const key of ownedBy2.slice(0, 20)) await write(key, 2);
    w.shards.down.delete('shard-3');
    // And the other replica misses some versions the owner replicated to shard-3 only... as a lost stream would.
    for (const key of ownedBy2.slice(20, 30)) await write(key, 3);
    for (const key of ownedBy2.slice(20, 25)) {
      const replicas = new Ring(initial).replicasOf(tokenOf('ns', key)).map((shard) => shard.table);
      const other = replicas.find((table) => table !== 'shard-2' && table !== 'shard-3');
      if (other) w.shards.tables.get(other)!.get(`ns#${key}`)!.version -= 1;
    }
    w.shards.down.add('shard-2');
    const result = await failOverInProcess(w.failover, 2);
    expect(result.publish.published).toBe(true);
    const after = new Ring(w.rings.state);
    expect(after.ranges().every((range) => range.owner !== 2 && !range.fenced)).toBe(true);
    w.clock.now += 10 * ringLeaseMs;
    for (const [key, version] of acked) {
      const read = await w.kv.get('ns', key, 'strong');
      expect(read.item.version).toBe(version);
    }
    // Writes to the moved ranges work again, on the new owners, with the next version.
    const ack = await w.kv.put('ns', ownedBy2[0]!, { value: text('after'), contentType: 'text/plain', consistency: 'strong' });
    expect(ack.version).toBe(acked.get(ownedBy2[0]!)! + 1);
  });

  it('lists every live key once after the failover, from the new owners, also once the old owner returns with stale entries', async () => {
    const w = failoverWorld();
    const keys = Array.from({ length: 60 }, (_, index) => `k${index}`);
    for (const key of keys) await w.kv.put('ns', key, { value: text('v'), contentType: 'text/plain', consistency: 'strong' });
    const listAll = async () => {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await w.kv.list('ns', { prefix: '', limit: 7, ...(cursor ? { cursor } : {}) });
        seen.push(...page.items.map((item) => item.key));
        cursor = page.cursor;
      } while (cursor);
      return seen;
    };
    w.shards.down.add('shard-2');
    await w.health.markUnavailable('shard-2', 'test', w.clock.now);
    await failOverInProcess(w.failover, 2);
    w.clock.now += 10 * ringLeaseMs;
    const sorted = [...keys].sort();
    expect(await listAll()).toEqual(sorted);
    // A key of a moved range deleted on its new owner; the old owner returns, still listing it.
    const gone = ownedBy2.find((key) => keys.includes(key))!;
    await w.kv.delete('ns', gone, { consistency: 'strong' });
    w.shards.down.delete('shard-2');
    expect(await listAll()).toEqual(sorted.filter((key) => key !== gone));
  });

  it('does not list a copy left on a shard that still owns other ranges but lost this one', async () => {
    const w = failoverWorld();
    for (const key of ownedBy2) await w.kv.put('ns', key, { value: text('v'), contentType: 'text/plain', consistency: 'strong' });
    // One range handed over, the others' fence lifted: shard-2 keeps owning them, and still lists the moved keys.
    const fence = await w.failover.fence(2);
    const moved = await w.failover.handOverRange(2, fence.ranges[0]!);
    await w.failover.publish(2, [moved], fence.epoch, 'partial');
    await w.failover.abort(fence.ranges);
    const ring = new Ring(w.rings.state);
    expect(ring.ownsAnyRange(2)).toBe(true);
    w.clock.now += 10 * ringLeaseMs;
    const gone = ownedBy2.find((key) => ring.rangeOf(tokenOf('ns', key)).end === moved.end)!;
    // Deleted while shard-2 is away: its listed copy stays (the tombstone waits as a hint) when it returns.
    w.shards.down.add('shard-2');
    await w.kv.delete('ns', gone, { consistency: 'strong' });
    w.shards.down.delete('shard-2');
    await w.health.beginRecovery('shard-2', w.clock.now);
    await w.health.completeRecovery('shard-2', w.clock.now);
    const page = await w.kv.list('ns', { prefix: '', limit: 1000 });
    expect(page.items.map((item) => item.key)).toEqual(ownedBy2.filter((key) => key !== gone).sort());
  });

  /** Shard 2 down and fenced, each of its ranges elected on: the hand-over ready to publish. */
  async function electedWhileDown() {
    const w = failoverWorld();
    for (const key of ownedBy2.slice(0, 10))
      await w.kv.put('ns', key, { value: text('v'), contentType: 'text/plain', consistency: 'strong' });
    w.shards.down.add('shard-2');
    const fence = await w.failover.fence(2);
    const choices = [];
    for (const end of fence.ranges) choices.push(await w.failover.handOverRange(2, end));
    return { w, fence, choices };
  }

  it('publishes its hand-over on a ring that moved on elsewhere since the fence (another shard fenced, a range lifted)', async () => {
    const { w, fence, choices } = await electedWhileDown();
    // Meanwhile a rebalance's wave (or another shard's failover) fences a range of shard 0, and lifts it.
    const other = new Ring(w.rings.state).ranges().find((range) => range.owner === 0)!.end;
    w.rings.state = fencedRangesRing(w.rings.state, [other]);
    w.rings.state = unfencedRing(w.rings.state, [other]);
    expect(await w.failover.publish(2, choices, fence.epoch, 'beside')).toEqual({ published: true, epoch: fence.epoch + 3 });
    const ring = new Ring(w.rings.state);
    for (const choice of choices) expect(ring.rangeOf(choice.end)).toMatchObject({ owner: choice.owner });
    expect(w.rings.state.fenced).toEqual([]);
    expect(w.rings.state.fencedAt).toBeUndefined();
    // Run again (a retried task), the ring one more epoch on: its own publication, not a lost race.
    w.rings.state = { ...w.rings.state, epoch: w.rings.state.epoch + 1 };
    expect(await w.failover.publish(2, choices, fence.epoch, 'beside')).toEqual({ published: true, epoch: fence.epoch + 4 });
  });

  it('does not publish a hand-over whose fence was lifted and placed again, or whose replicas changed, since its election', async () => {
    const { w, fence, choices } = await electedWhileDown();
    const [first] = fence.ranges;
    // Lifted (another run aborted) and placed again (a third run): writes between the two were not elected on.
    w.rings.state = fencedRangesRing(unfencedRing(w.rings.state, [first!]), [first!]);
    const refenced = await w.failover.publish(2, choices, fence.epoch, 'stale');
    expect(refenced).toMatchObject({ published: false, reason: expect.stringMatching(/fence, owner or replicas of the range ending at/) });
    expect(
      new Ring(w.rings.state)
        .ranges()
        .filter((range) => range.fenced)
        .map((range) => range.end),
    ).toEqual(fence.ranges);

    // A replica added to one of the ranges meanwhile (another failover's re-replication): not the set its election saw.
    const { w: added, fence: addedFence, choices: addedChoices } = await electedWhileDown();
    const range = new Ring(added.rings.state).rangeOf(addedFence.ranges[0]!);
    const outsider = [0, 1, 2, 3].find((shard) => !range.replicas.includes(shard))!;
    added.rings.state = withAddedReplicas(added.rings.state, [{ end: range.end, shard: outsider, failover: 'other', ready: false }]);
    expect(await added.failover.publish(2, addedChoices, addedFence.epoch, 'stale')).toMatchObject({
      published: false,
      reason: expect.stringMatching(/changed since its election/),
    });
    // The same ring change elsewhere: the hand-over still applies.
    added.rings.state = { ...added.rings.state, addedReplicas: [], epoch: added.rings.state.epoch + 1 };
    expect((await added.failover.publish(2, addedChoices, addedFence.epoch, 'fresh')).published).toBe(true);
  });

  it('two failovers of the same shard racing: exactly one publishes', async () => {
    const w = failoverWorld();
    for (const key of ownedBy2.slice(0, 10))
      await w.kv.put('ns', key, { value: text('v'), contentType: 'text/plain', consistency: 'strong' });
    w.shards.down.add('shard-2');
    const outcomes = await Promise.all([failOverInProcess(w.failover, 2, 'first'), failOverInProcess(w.failover, 2, 'second')]);
    expect(outcomes.filter((outcome) => outcome.publish.published)).toHaveLength(1);
    // Fence, hand-over, and re-replication's two ring writes (added, then ready): the loser wrote nothing.
    expect(w.rings.state.epoch).toBe(initial.epoch + 4);
  });

  it('a range with no live candidate cannot fail over: the fence is lifted and the ring keeps its owners', async () => {
    const w = failoverWorld();
    for (const table of ['shard-0', 'shard-1', 'shard-2', 'shard-3']) w.shards.down.add(table);
    await expect(failOverInProcess(w.failover, 2)).rejects.toThrow(NoCandidateError);
    expect(new Ring(w.rings.state).ranges()).toEqual(new Ring(initial).ranges());
  });

  it('a crash after an election leaves the range fenced; running the step again finishes it', async () => {
    const w = failoverWorld();
    for (const key of ownedBy2.slice(0, 10))
      await w.kv.put('ns', key, { value: text('v'), contentType: 'text/plain', consistency: 'strong' });
    w.shards.down.add('shard-2');
    const fence = await w.failover.fence(2);
    const faults = new ScriptedFaults();
    faults.crashAt('failover.afterElection');
    const crashing = new FailoverService({ ...w.deps, faults });
    await expect(crashing.handOverRange(2, fence.ranges[0]!)).rejects.toThrow(/failover.afterElection/);
    expect(new Ring(w.rings.state).isFenced(fence.ranges[0]!)).toBe(true);
    expect((await w.failover.fence(2)).epoch).toBe(fence.epoch);
    const choices = [];
    for (const end of fence.ranges) choices.push(await w.failover.handOverRange(2, end));
    expect((await w.failover.publish(2, choices, fence.epoch, 'retried')).published).toBe(true);
    // The publish step retried after it published: its own ring, not a lost race.
    expect(await w.failover.publish(2, choices, fence.epoch, 'retried')).toEqual({ published: true, epoch: fence.epoch + 1 });
    expect((await w.failover.publish(2, choices, fence.epoch, 'another')).published).toBe(false);
  });
});

describe('confirming a failure', () => {
  const request = { id: 'shard-2-epoch-1', shard: 2, reason: 'test', requestedAtMs: 1 };

  it('calls the failover off when the shard answers any probe, however late in the window', async () => {
    const w = failoverWorld();
    w.shards.down.add('shard-2');
    let pauses = 0;
    const flapping = new FailoverService({
      ...w.deps,
      sleep: async (ms) => {
        w.clock.now += ms;
        // Back before the last probe: a slow, flapping shard, not a failed one.
        if (++pauses === 2) w.shards.down.delete('shard-2');
      },
    });
    expect(await flapping.confirm(request)).toMatchObject({ down: false, probes: 3 });
    expect(w.log.records.get(request.id)?.status).toBe('running');
  });

  it('does not fail over a throttled shard: a busy table is alive', async () => {
    const w = failoverWorld();
    const throttled = Object.create(w.shards) as MemoryShardStore;
    throttled.get = async (table: string, namespace: string, key: string) => {
      if (table === 'shard-2') throw new RingstoreError('throttled', 'shard-2 is throttled', { retryable: true });
      return w.shards.get(table, namespace, key);
    };
    const busy = new FailoverService({ ...w.deps, shards: throttled });
    expect(await busy.confirm(request)).toMatchObject({ down: false, proceed: false, probes: 1 });
  });

  it('confirms a shard that answers none of its probes, spaced over the window', async () => {
    const w = failoverWorld();
    w.shards.down.add('shard-2');
    const before = w.clock.now;
    expect(await w.failover.confirm(request)).toMatchObject({ down: true, probes: 3 });
    expect(w.clock.now - before).toBe(2 * 200);
  });

  it('a second failover of a shard stands down while the first runs, and one after it finds nothing to do: never an internal error', async () => {
    const w = failoverWorld();
    for (let n = 0; n < 10; n += 1) await w.kv.put('ns', `c${n}`, { value: text('v'), contentType: 'text/plain', consistency: 'strong' });
    w.shards.down.add('shard-2');
    const first = { id: 'shard-2-epoch-1-auto-0', shard: 2, reason: 'automatic', requestedAtMs: w.clock.now };
    expect(await w.failover.confirm(first)).toMatchObject({ proceed: true });
    const fence = await w.failover.fenceAndWaitFor(first);
    // The maintenance probe finds the shard still down, at the fenced ring's epoch: a failover of another id.
    const second = { id: 'shard-2-epoch-2-auto-0', shard: 2, reason: 'automatic: probe', requestedAtMs: w.clock.now };
    expect(await w.failover.confirm(second)).toMatchObject({
      proceed: false,
      reason: 'failover shard-2-epoch-1-auto-0 of shard 2 is in progress: this one stands down',
    });
    // The workflow ends it as it ends any failover not confirmed.
    await w.failover.record(second, 'notDown');
    const ranges = [];
    for (const end of fence.ranges) ranges.push(await w.failover.handOverRange(2, end));
    const choices = ranges.map(({ end, owner }) => ({ end, owner }));
    expect((await w.failover.publish(2, choices, fence.epoch, first.id)).published).toBe(true);
    await w.failover.record(first, 'completed');
    // Once it is over, another finds the shard owning nothing.
    const third = { id: 'shard-2-epoch-3-auto-0', shard: 2, reason: 'automatic: probe', requestedAtMs: w.clock.now };
    expect(await w.failover.confirm(third)).toMatchObject({ proceed: false, reason: 'shard 2 owns no token range' });
  });

  it('a running record of a failover that died holds no later one back', async () => {
    const w = failoverWorld();
    w.shards.down.add('shard-2');
    await w.failover.record({ ...request, id: 'died' }, 'running');
    w.clock.now += runningRecordStaleMs;
    expect(await w.failover.confirm({ ...request, requestedAtMs: w.clock.now })).toMatchObject({ proceed: true });
  });

  it('does not fail over a shard that owns nothing', async () => {
    const w = failoverWorld();
    await failOverInProcess(w.failover, 2);
    expect(await w.failover.confirm(request)).toMatchObject({ down: false, probes: 0 });
  });
});

describe('automatic start', () => {
  /** A starter that runs nothing: it records each id once, as Step Functions names executions. */
  function recordingStarter() {
    const started = new Map<string, FailoverRequest>();
    return {
      started,
      start: async (request: FailoverRequest) => (started.has(request.id) ? false : (started.set(request.id, request), true)),
    };
  }

  it('the maintenance probe starts the failover of a shard that stays down, once per shard, epoch and minute', async () => {
    const w = failoverWorld();
    const starter = recordingStarter();
    const ring = new CachedRingSource(w.rings, w.clock);
    const maintenance = new MaintenanceService({
      shards: w.shards,
      hints: w.hints,
      health: w.health,
      clock: w.clock,
      state: { readMaintenanceState: async () => undefined, saveMaintenanceState: async () => undefined },
      stillDown: async (table, nowMs) => {
        await startAutomaticFailover(ring, starter, table, 'probe', nowMs);
      },
      limits: handoffOnlyLimits,
    });
    w.shards.down.add('shard-2');
    await w.health.markUnavailable('shard-2', 'test', w.clock.now);
    await maintenance.handoff(new Ring(initial));
    await maintenance.handoff(new Ring(initial));
    expect([...starter.started.values()]).toEqual([
      { id: automaticFailoverId(2, initial.epoch, w.clock.now), shard: 2, reason: 'automatic: probe', requestedAtMs: w.clock.now },
    ]);
    // A shard that answers again is recovered by hint replay, not failed over.
    w.shards.down.delete('shard-2');
    w.clock.now += 60_000;
    await maintenance.handoff(new Ring(initial));
    expect(starter.started.size).toBe(1);
  });

  it('does not start a failover of a shard whose ranges were handed over since its ring was cached', async () => {
    const w = failoverWorld();
    const starter = recordingStarter();
    const ring = new CachedRingSource(w.rings, w.clock);
    await ring.current();
    await failOverInProcess(w.failover, 2);
    expect(await startAutomaticFailover(ring, starter, 'shard-2', 'probe', w.clock.now)).toBe(false);
    expect(starter.started.size).toBe(0);
  });

  it('does not start a failover of a shard that owns no range', async () => {
    const w = failoverWorld();
    const starter = recordingStarter();
    await failOverInProcess(w.failover, 2);
    expect(await startAutomaticFailover(new CachedRingSource(w.rings, w.clock), starter, 'shard-2', 'probe', w.clock.now)).toBe(false);
    expect(starter.started.size).toBe(0);
  });
});

describe('transactions whose intents sit on the failed owner', () => {
  const [onShard2, elsewhere] = (() => {
    const ring = new Ring(initial);
    const keys = Array.from({ length: 400 }, (_, index) => `t${index}`);
    return [keys.find((key) => ring.ownerOf(tokenOf('ns', key)).id === 2)!, keys.find((key) => ring.ownerOf(tokenOf('ns', key)).id === 0)!];
  })();
  const put = (key: string, value: string) => ({ op: 'put' as const, key, value: text(value), contentType: 'text/plain' });

  function withTransactions() {
    const w = failoverWorld();
    const txns = new TransactionService({
      shards: w.shards,
      records: w.records,
      ring: new CachedRingSource(w.rings, w.clock),
      clock: w.clock,
      ids: new CountingIds(),
      replication: memoryReplication(w.shards, w.clock).replication,
      limits: { ...limits, ...txnLimits, intentConcurrencyMax: 4 },
    });
    const strongValue = async (key: string) => {
      const read = await w.kv.get('ns', key, 'strong');
      return read.kind === 'value' ? { value: new TextDecoder().decode(read.value), version: read.item.version } : undefined;
    };
    return { ...w, txns, strongValue };
  }

  it('a committed one is applied on the new owner from its record; its other writes stand', async () => {
    const w = withTransactions();
    await w.kv.put('ns', onShard2, { value: text('before'), contentType: 'text/plain', consistency: 'strong' });
    const execution = await w.txns.plan('ns', [put(onShard2, 'moved'), put(elsewhere, 'kept')], { consistency: 'eventual' });
    await w.txns.begin(execution);
    const prepared = await Promise.all(execution.participants.map((participant) => w.txns.prepare(execution, participant.table)));
    expect(await w.txns.decide(execution, prepared)).toEqual({ status: 'committed' });
    // The owner of onShard2 fails between the decision and applying the intent; the other shard applies its own.
    await w.txns.commit(execution, new Ring(initial).ownerOf(tokenOf('ns', elsewhere)).table);
    w.shards.down.add('shard-2');
    await w.health.markUnavailable('shard-2', 'test', w.clock.now);
    const result = await failOverInProcess(w.failover, 2);
    expect(result.transactions).toMatchObject({ aborted: 0, rolledForward: 1, withoutWrites: [] });
    expect(result.transactions.versionsApplied).toBeGreaterThanOrEqual(1);
    w.clock.now += 10 * ringLeaseMs;
    expect(await w.strongValue(onShard2)).toEqual({ value: 'moved', version: 2 });
    expect(await w.strongValue(elsewhere)).toEqual({ value: 'kept', version: 1 });
    // On the new owner the write is the key's change, never made by an owner: stored as one, so the change feed sees it
    // (docs/watch.md); the other replicas' are copies.
    const ownerTable = new Ring(await w.rings.readRing()).ownerOf(tokenOf('ns', onShard2)).table;
    expect([...w.shards.ownerWrittenCopies]).toEqual([`${ownerTable}|ns#${onShard2}@2`]);
    // With its transaction, as applying the intent would have recorded it: the feed's change carries the txid.
    expect(w.shards.peek(ownerTable, 'ns', onShard2)?.writtenBy).toEqual({ txid: execution.txid, writes: 2 });
    // Run again (a retried step): nothing more to apply.
    const again = await w.failover.settleTransactions(result.ranges);
    expect(again.versionsApplied).toBe(0);
  });

  it('a committed one the old owner applied and replicated changes nothing; a pending one is aborted', async () => {
    const w = withTransactions();
    const done = await w.txns.plan('ns', [put(onShard2, 'applied'), put(elsewhere, 'x')], { consistency: 'strong' });
    expect((await w.txns.runInProcess(done)).status).toBe('committed');
    await w.kv.put('ns', onShard2, { value: text('later'), contentType: 'text/plain', consistency: 'strong' });
    const pending = await w.txns.plan('ns', [put(onShard2, 'never'), put(elsewhere, 'never')], { consistency: 'eventual' });
    await w.txns.begin(pending);
    await Promise.all(pending.participants.map((participant) => w.txns.prepare(pending, participant.table)));
    w.shards.down.add('shard-2');
    const result = await failOverInProcess(w.failover, 2);
    expect(result.transactions).toMatchObject({ aborted: 1, rolledForward: 1, versionsApplied: 0 });
    expect((await w.records.find(pending.txid))?.status).toBe('aborted');
    // Its coordinator, resuming, finds the decision taken.
    expect((await w.txns.decide(pending, [])).status).toBe('aborted');
    w.clock.now += 10 * ringLeaseMs;
    expect(await w.strongValue(onShard2)).toEqual({ value: 'later', version: 2 });
  });

  it('a transaction that locks a key after its range is fenced aborts instead of committing on the old owner', async () => {
    const w = withTransactions();
    const execution = await w.txns.plan('ns', [put(onShard2, 'late'), put(elsewhere, 'late')], { consistency: 'eventual' });
    await w.txns.begin(execution);
    await w.failover.fence(2);
    w.clock.now += 10 * ringLeaseMs;
    const prepared = await w.txns.prepare(execution, new Ring(initial).ownerOf(tokenOf('ns', onShard2)).table);
    expect(prepared.abort).toMatchObject({ reason: 'unavailable', key: onShard2 });
  });
});

/** The rejoin step on a failover world's ports (the first `divergentReportedMax` divergent copies are listed). */
function rejoinOf(w: ReturnType<typeof failoverWorld>, divergentReportedMax = 10): RejoinService {
  return new RejoinService({
    rings: w.rings,
    shards: w.shards,
    log: w.log,
    clock: w.clock,
    limits: { copyConcurrency: 4, divergentReportedMax, recordsSearched: 10 },
  });
}

/** Maintenance on a failover world's ports, rejoining returned shards, with no settle time. */
function maintenanceOf(w: ReturnType<typeof failoverWorld>, rejoin = rejoinOf(w)): MaintenanceService {
  return new MaintenanceService({
    shards: w.shards,
    hints: w.hints,
    health: w.health,
    clock: w.clock,
    state: { readMaintenanceState: async () => undefined, saveMaintenanceState: async () => undefined },
    rejoin: (table) => rejoin.rejoin(table),
    limits: handoffOnlyLimits,
  });
}

describe('the failed shard’s return', () => {
  const ring = new Ring(initial);
  const ownedBy2 = Array.from({ length: 400 }, (_, index) => `r${index}`).filter((key) => ring.ownerOf(tokenOf('ns', key)).id === 2);

  it('rejoins as a replica: writes the new owners never saw are reported and replaced, then it serves again', async () => {
    const w = failoverWorld();
    const [same, higher, created, behind] = ownedBy2;
    const put = (key: string, value: string, consistency: 'strong' | 'eventual') =>
      w.kv.put('ns', key, { value: text(value), contentType: 'text/plain', consistency });
    for (const key of [same!, higher!, behind!]) await put(key, 'v1', 'strong');
    // Eventual writes the owner acknowledged and never replicated (no stream runs here).
    await put(same!, 'lost-same', 'eventual');
    await put(higher!, 'lost-higher', 'eventual');
    await put(created!, 'lost-created', 'eventual');
    w.shards.down.add('shard-2');
    await w.health.markUnavailable('shard-2', 'test', w.clock.now);
    const id = 'failover-of-2';
    await w.failover.record({ id, shard: 2, reason: 'test', requestedAtMs: w.clock.now }, 'running');
    const result = await failOverInProcess(w.failover, 2, id);
    await w.failover.record({ id, shard: 2, reason: 'test', requestedAtMs: w.clock.now }, 'completed', { ranges: result.ranges });
    expect(w.rings.state.rejoining).toEqual([
      { shard: 2, failover: id, ends: result.ranges.map((range) => range.end).sort((a, b) => a - b) },
    ]);
    expect((await w.health.all()).get('shard-2')?.status).toBe('unavailable');
    w.clock.now += 10 * ringLeaseMs;
    // The new owner takes writes: one reaches the version the lost write had, with other content.
    await put(same!, 'new-same', 'strong');
    await put(behind!, 'v2', 'strong');

    const newOwner = (key: string) => new Ring(w.rings.state).ownerOf(tokenOf('ns', key)).table;
    w.shards.down.delete('shard-2');
    const maintenance = maintenanceOf(w, rejoinOf(w, 2));
    const [replay] = await maintenance.handoff(new Ring(w.rings.state));
    expect(replay?.rejoin).toHaveLength(1);
    const report = replay!.rejoin![0]!;
    expect(report).toMatchObject({ shard: 2, failover: id, divergent: 3 });
    expect(report.divergentCopies).toHaveLength(2);
    expect((await w.health.all()).get('shard-2')?.status).toBe('available');
    expect(w.rings.state.rejoining).toBeUndefined();
    // Its copies now match the new owners; the key they never saw is gone from it.
    for (const key of [same!, higher!, behind!]) {
      expect(w.shards.peek('shard-2', 'ns', key)).toMatchObject({
        version: w.shards.peek(newOwner(key), 'ns', key)!.version,
        sha256: w.shards.peek(newOwner(key), 'ns', key)!.sha256,
      });
    }
    expect(w.shards.peek('shard-2', 'ns', created!)).toBeUndefined();
    // The failover's record carries the report; a second pass finds nothing left to do.
    expect((w.log.records.get(id)?.report as { rejoin?: { divergent: number } }).rejoin?.divergent).toBe(3);
    const again = await maintenance.handoff(new Ring(w.rings.state));
    expect(again.flatMap((entry) => entry.rejoin ?? [])).toEqual([]);
  });

  it('stays out of reads while it cannot be reconciled', async () => {
    const w = failoverWorld();
    for (const key of ownedBy2.slice(0, 3))
      await w.kv.put('ns', key, { value: text('v'), contentType: 'text/plain', consistency: 'strong' });
    w.shards.down.add('shard-2');
    await failOverInProcess(w.failover, 2);
    w.shards.down.delete('shard-2');
    const owner = new Ring(w.rings.state).ranges().find((range) => range.replicas.includes(2) && range.owner !== 2)!.owner;
    w.shards.down.add(`shard-${owner}`);
    const reports = await maintenanceOf(w).handoff(new Ring(w.rings.state));
    expect(reports.find((entry) => entry.table === 'shard-2')?.completed).toBe(false);
    expect((await w.health.all()).get('shard-2')?.status).not.toBe('available');
    expect(w.rings.state.rejoining).toHaveLength(1);
  });
});

describe('moving ranges back to a returned shard', () => {
  const ring = new Ring(initial);
  const ownedBy2 = Array.from({ length: 400 }, (_, index) => `m${index}`).filter((key) => ring.ownerOf(tokenOf('ns', key)).id === 2);
  const moveBack = { id: 'move-back-2', shard: 2, reason: 'test', requestedAtMs: 0, action: 'moveBack' as const };

  async function failedOverAndBack() {
    const w = failoverWorld();
    const maintenance = maintenanceOf(w);
    for (const key of ownedBy2) await w.kv.put('ns', key, { value: text('before'), contentType: 'text/plain', consistency: 'strong' });
    w.shards.down.add('shard-2');
    await failOverInProcess(w.failover, 2);
    w.clock.now += 10 * ringLeaseMs;
    // Written on the new owners while shard-2 is away: it gets them as hints.
    for (const key of ownedBy2.slice(0, 10))
      await w.kv.put('ns', key, { value: text('while away'), contentType: 'text/plain', consistency: 'strong' });
    return { ...w, maintenance };
  }

  it('refuses before the shard has rejoined, then hands every range back to it caught up', async () => {
    const w = await failedOverAndBack();
    expect(await w.failover.confirm(moveBack)).toMatchObject({ proceed: false, reason: expect.stringContaining('has not rejoined') });
    w.shards.down.delete('shard-2');
    await w.maintenance.handoff(new Ring(w.rings.state));
    expect(await w.failover.confirm(moveBack)).toMatchObject({ proceed: true });

    const fence = await w.failover.fenceAndWaitFor(moveBack);
    expect(fence.ranges).toEqual(rangesToMoveBack(w.rings.state, 2).map((range) => range.end));
    const choices = [];
    for (const end of fence.ranges) choices.push(await w.failover.moveBackRange(2, end));
    expect(choices.every((choice) => choice.owner === 2)).toBe(true);
    await w.failover.settleTransactions(choices);
    expect((await w.failover.publish(2, choices, fence.epoch, moveBack.id)).published).toBe(true);

    const after = new Ring(w.rings.state);
    expect(w.rings.state.owners).toEqual([]);
    expect(after.ranges().filter((range) => range.owner === 2)).toHaveLength(ring.ranges().filter((range) => range.owner === 2).length);
    // The shards that held the ranges reconcile with shard-2 at the next maintenance run; shard-2 serves.
    expect(new Set(w.rings.state.rejoining?.map((entry) => entry.shard))).not.toContain(2);
    expect((await w.health.all()).get('shard-2')?.status ?? 'available').toBe('available');
    w.clock.now += 10 * ringLeaseMs;
    for (const [index, key] of ownedBy2.entries()) {
      const read = await w.kv.get('ns', key, 'strong');
      expect(read.kind === 'value' && new TextDecoder().decode(read.value)).toBe(index < 10 ? 'while away' : 'before');
    }
    // Each key listed once, by its owner again.
    const listed = await w.kv.list('ns', { prefix: 'm', limit: 1000 });
    expect(listed.items.map((item) => item.key).sort()).toEqual([...ownedBy2].sort());
    await w.maintenance.handoff(new Ring(w.rings.state));
    expect(w.rings.state.rejoining).toBeUndefined();
  });

  it('lifts its fence and keeps the owners when it cannot finish', async () => {
    const w = await failedOverAndBack();
    w.shards.down.delete('shard-2');
    await w.maintenance.handoff(new Ring(w.rings.state));
    const owners = w.rings.state.owners;
    const fence = await w.failover.fenceAndWaitFor(moveBack);
    w.shards.down.add('shard-2');
    await expect(w.failover.moveBackRange(2, fence.ranges[0]!)).rejects.toThrow(NoCandidateError);
    await w.failover.abandonFor(moveBack);
    expect(w.rings.state.owners).toEqual(owners);
    expect(w.rings.state.fenced).toEqual([]);
  });
});

describe('re-replication while the failed shard is away', () => {
  const ring = new Ring(initial);
  const ownedBy2 = Array.from({ length: 400 }, (_, index) => `q${index}`).filter((key) => ring.ownerOf(tokenOf('ns', key)).id === 2);

  it('adds the next shard as a replica of each handed-over range, backfills it, then counts it as a copy', async () => {
    const w = failoverWorld();
    for (const key of ownedBy2) await w.kv.put('ns', key, { value: text(`v-${key}`), contentType: 'text/plain', consistency: 'strong' });
    w.shards.down.add('shard-2');
    const result = await failOverInProcess(w.failover, 2, 'rerep');
    expect(result.reReplication?.added).toHaveLength(result.ranges.length);
    const after = new Ring(w.rings.state);
    for (const { end, shard } of result.reReplication!.added) {
      const range = after.rangeOf(end);
      expect(range.replicas).toContain(shard);
      expect(range.backfilling).toBeUndefined();
      // Three live copies again, besides the failed shard.
      expect(after.servingReplicasOf(end).filter((replica) => replica.id !== 2)).toHaveLength(3);
    }
    // The added replica holds every key of its ranges at the owner's version.
    for (const key of ownedBy2) {
      const token = tokenOf('ns', key);
      const added = result.reReplication!.added.find(({ end }) => end === after.rangeOf(token).end)!;
      expect(w.shards.peek(`shard-${added.shard}`, 'ns', key)?.version).toBe(1);
    }
    // With another replica down too, a strong write still has a copy besides its owner: the added one.
    w.clock.now += 10 * ringLeaseMs;
    const key = ownedBy2[0]!;
    const other = after
      .replicasOf(tokenOf('ns', key))
      .find(
        (replica) =>
          replica.id !== 2 &&
          replica.id !== after.ownerOf(tokenOf('ns', key)).id &&
          !result.reReplication!.added.some(({ end, shard }) => end === after.rangeOf(tokenOf('ns', key)).end && shard === replica.id),
      )!;
    w.shards.down.add(other.table);
    const ack = await w.kv.put('ns', key, { value: text('two down'), contentType: 'text/plain', consistency: 'strong' });
    expect(ack.copies).toBe(2);
  });

  it('adds only an active shard as a replica: never one a rebalance is adding or removing', () => {
    const five = initialRingState({ shardCount: 5, replicationFactor: 3, vnodesPerShard: 8, tableName: (id) => `shard-${id}` });
    const ends = new Ring(five)
      .ranges()
      .filter((range) => range.owner === 2)
      .map((range) => range.end);
    // On the plain ring, shards 4 and 5 would be chosen for some of shard 2's ranges.
    const rebalancing = startedRing(five, { join: [5], leave: [4] }, 'rb', (id) => `shard-${id}`);
    const candidates = (state: RingState) => reReplicationPlan(state, 2, ends, 'rerep', () => true).map((replica) => replica.shard);
    const active = { ...rebalancing, shards: rebalancing.shards.map((shard) => ({ ...shard, status: 'active' as const })) };
    expect(candidates(active)).toEqual(expect.arrayContaining([4]));
    const chosen = candidates(rebalancing);
    expect(chosen.length).toBeGreaterThan(0);
    expect(chosen.filter((shard) => shard === 4 || shard === 5)).toEqual([]);
  });

  it('does not count an added replica before its backfill, and the failed shard’s rejoin removes it', async () => {
    const w = failoverWorld();
    for (const key of ownedBy2.slice(0, 5))
      await w.kv.put('ns', key, { value: text('v'), contentType: 'text/plain', consistency: 'strong' });
    w.shards.down.add('shard-2');
    const fence = await w.failover.fenceAndWait(2);
    const choices = [];
    for (const end of fence.ranges) choices.push(await w.failover.handOverRange(2, end));
    await w.failover.publish(2, choices, fence.epoch, 'rerep');
    // Added but not backfilled: it takes writes and serves nothing.
    const plan = reReplicationPlan(w.rings.state, 2, fence.ranges, 'rerep', () => true);
    w.rings.state = withAddedReplicas(w.rings.state, plan);
    const pending = new Ring(w.rings.state);
    const [first] = plan;
    expect(pending.rangeOf(first!.end).backfilling).toEqual([first!.shard]);
    expect(pending.servingReplicasOf(first!.end).map((shard) => shard.id)).not.toContain(first!.shard);
    expect(pending.replicasOf(first!.end).map((shard) => shard.id)).toContain(first!.shard);
    await w.failover.reReplicate(2, fence.ranges, 'rerep');
    expect(new Ring(w.rings.state).rangeOf(first!.end).backfilling).toBeUndefined();
    // The failed shard returns and rejoins: the range is back to its own replicas.
    w.shards.down.delete('shard-2');
    await rejoinOf(w).rejoin('shard-2');
    expect(w.rings.state.addedReplicas).toBeUndefined();
    expect(w.rings.state.rejoining).toBeUndefined();
  });
});
