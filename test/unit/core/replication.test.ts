// Replication in the core: strong fan-out with hints, the stream path, hinted handoff, anti-entropy.
import fc from 'fast-check';
import { isRingstoreError } from '../../../lambdas/core/errors';
import { MaintenanceService } from '../../../lambdas/core/maintenance';
import { Ring, initialRingState, tokenOf } from '../../../lambdas/core/ring';
import type { OwnerChange } from '../../../lambdas/core/replication';
import type { MaintenanceState, StoredItem } from '../../../lambdas/ports';
import {
  ManualClock,
  MemoryShardStore,
  ScriptedFaults,
  fixedRing,
  memoryReplication,
  memoryKv,
  weighedByRing,
} from '../../support/memory-ports';
import { text } from '../../support/bytes';

const ring = new Ring(initialRingState({ shardCount: 4, replicationFactor: 3, vnodesPerShard: 16, tableName: (id) => `shard-${id}` }));
const tablesOf = (key: string) => ring.replicasOf(tokenOf('ns', key)).map((shard) => shard.table);

function setup() {
  const shards = new MemoryShardStore();
  const clock = new ManualClock();
  const faults = new ScriptedFaults();
  const { replication, health, hints } = memoryReplication(shards, clock, faults);
  const kv = memoryKv({ shards, ring: fixedRing(ring), clock, replication, health, faults });
  const state = { saved: undefined as MaintenanceState | undefined };
  const maintenance = new MaintenanceService({
    shards,
    hints,
    health,
    clock,
    faults,
    state: { readMaintenanceState: async () => state.saved, saveMaintenanceState: async (s) => void (state.saved = s) },
    limits: {
      hintReplayPageSize: 3,
      hintReplayConcurrency: 2,
      antiEntropyRangesPerRun: 8,
      antiEntropyMinIntervalMs: 30_000,
      recoverySettleMs: 2_000,
    },
  });
  /** Every owner item as the owner's stream would carry it now. */
  const ownerChanges = (): OwnerChange[] =>
    [...shards.tables.entries()].flatMap(([table, items]) => [...items.values()].map((item) => ({ sourceTable: table, item })));
  return { kv, shards, clock, faults, replication, health, hints, maintenance, ownerChanges };
}

const versionsOn = (shards: MemoryShardStore, key: string) => tablesOf(key).map((table) => shards.peek(table, 'ns', key)?.version ?? 0);

describe('strong writes', () => {
  it('are on the owner and every replica when acknowledged', async () => {
    const { kv, shards } = setup();
    const ack = await kv.put('ns', 'k', { value: text('v'), contentType: 'text/plain', consistency: 'strong' });
    expect(ack).toEqual({ key: 'k', version: 1, consistency: 'strong', copies: 3 });
    expect(versionsOn(shards, 'k')).toEqual([1, 1, 1]);
  });

  it('leave a hint for a replica that is down, mark it unavailable, and still acknowledge with two copies', async () => {
    const { kv, shards, hints, health } = setup();
    const [, down] = tablesOf('k');
    shards.down.add(down!);
    const ack = await kv.put('ns', 'k', { value: text('v'), contentType: 'text/plain', consistency: 'strong' });
    expect(ack.copies).toBe(2);
    expect(await hints.count(down!)).toBe(1);
    expect((await health.all()).get(down!)?.status).toBe('unavailable');
  });

  it('fail with 503 when no replica can take the version, and report nothing as written', async () => {
    const { kv, shards } = setup();
    const [owner, ...replicas] = tablesOf('k');
    for (const table of replicas) shards.down.add(table);
    const error = await kv.put('ns', 'k', { value: text('v'), contentType: 'text/plain', consistency: 'strong' }).catch((e: unknown) => e);
    expect(isRingstoreError(error, 'shard.unavailable') && error.retryable).toBe(true);
    expect(shards.peek(owner!, 'ns', 'k')?.version).toBe(1);
  });

  it('fail when the owner is down, and nothing is stored anywhere', async () => {
    const { kv, shards } = setup();
    const [owner] = tablesOf('k');
    shards.down.add(owner!);
    const error = await kv.put('ns', 'k', { value: text('v'), contentType: 'text/plain', consistency: 'strong' }).catch((e: unknown) => e);
    expect(isRingstoreError(error, 'shard.unavailable')).toBe(true);
    shards.down.clear();
    expect(versionsOn(shards, 'k')).toEqual([0, 0, 0]);
  });
});

describe('eventual writes and the stream path', () => {
  it('acknowledge after the owner; the stream copies to the replicas, ignoring echoes and older versions', async () => {
    const { kv, shards, replication, ownerChanges } = setup();
    await kv.put('ns', 'k', { value: text('a'), contentType: 'text/plain' });
    const first = ownerChanges();
    await kv.put('ns', 'k', { value: text('b'), contentType: 'text/plain' });
    expect(versionsOn(shards, 'k')).toEqual([2, 0, 0]);
    // Newest first, then a duplicate of the older record: replicas end at the newest version.
    const result = await replication.applyOwnerChanges(...weighedByRing([...ownerChanges(), ...first], ring));
    expect(result.applied).toBe(2);
    expect(versionsOn(shards, 'k')).toEqual([2, 2, 2]);
    // The replicas' own records (echoes) replicate nothing.
    const echoes = await replication.applyOwnerChanges(...weighedByRing(ownerChanges(), ring));
    expect(echoes).toMatchObject({ applied: 0, current: 2, ignored: 2 });
  });

  it('skip intent-only changes: a placed or cleared intent, and the version-0 tombstone holding one on a new key', async () => {
    const { kv, shards, replication, ownerChanges } = setup();
    await kv.put('ns', 'k', { value: text('a'), contentType: 'text/plain', consistency: 'strong' });
    const [written] = ownerChanges();
    const owner = tablesOf('k')[0]!;
    const intentOnly: OwnerChange[] = [
      {
        sourceTable: owner,
        item: { ...written!.item, intent: { txid: 't1', kind: 'put', contentType: '', size: 0, sha256: '', placedAtMs: 1 } },
        previousVersion: 1,
      },
      { sourceTable: owner, item: { ...written!.item, key: 'new', version: 0, tombstone: true }, previousVersion: undefined },
    ];
    const result = await replication.applyOwnerChanges(...weighedByRing(intentOnly, ring));
    expect(result).toMatchObject({ applied: 0, current: 0, ignored: 2 });
    for (const table of tablesOf('k').slice(1)) expect(shards.peek(table, 'ns', 'new')).toBeUndefined();
  });

  it('copy tombstones, so a delete reaches every replica with its version', async () => {
    const { kv, shards, replication, ownerChanges } = setup();
    await kv.put('ns', 'k', { value: text('a'), contentType: 'text/plain', consistency: 'strong' });
    await kv.delete('ns', 'k', {});
    await replication.applyOwnerChanges(...weighedByRing(ownerChanges(), ring));
    for (const table of tablesOf('k')) expect(shards.peek(table, 'ns', 'k')).toMatchObject({ version: 2, tombstone: true });
  });

  it('report the first record it could not replicate nor hint, so the stream retries from it', async () => {
    const { kv, shards, hints, replication, ownerChanges } = setup();
    await kv.put('ns', 'k', { value: text('a'), contentType: 'text/plain' });
    shards.down.add(tablesOf('k')[1]!);
    hints.failing = true;
    const result = await replication.applyOwnerChanges(...weighedByRing(ownerChanges(), ring));
    expect(result.firstFailedIndex).toBe(0);
  });
});

describe('eventual reads', () => {
  it('spread over the replicas, skip one that is down, and never go back behind a version this instance knows', async () => {
    const { kv, shards, replication, ownerChanges } = setup();
    await kv.put('ns', 'k', { value: text('a'), contentType: 'text/plain' });
    await replication.applyOwnerChanges(...weighedByRing(ownerChanges(), ring));
    const reads: string[] = [];
    const original = shards.get.bind(shards);
    shards.get = async (table: string, namespace: string, key: string) => (reads.push(table), original(table, namespace, key));
    for (let i = 0; i < 6; i += 1) await kv.get('ns', 'k', 'eventual');
    expect(new Set(reads)).toEqual(new Set(tablesOf('k')));
    shards.down.add(tablesOf('k')[0]!);
    expect((await kv.get('ns', 'k', 'eventual')).item.version).toBe(1);
  });

  it('do not use a shard marked unavailable until its hints are replayed and it has settled', async () => {
    const { kv, shards, health, maintenance, clock } = setup();
    const [, lagging] = tablesOf('k');
    shards.down.add(lagging!);
    await kv.put('ns', 'k', { value: text('v1'), contentType: 'text/plain', consistency: 'strong' });
    shards.down.delete(lagging!);
    expect((await health.all()).get(lagging!)?.status).toBe('unavailable');
    const first = await maintenance.handoff(ring);
    expect(first.find((report) => report.table === lagging)).toMatchObject({ applied: 1, transition: 'recovering', completed: true });
    expect(shards.peek(lagging!, 'ns', 'k')?.version).toBe(1);
    // Replayed, but a writer with an older health view may still hint it: not readable yet.
    expect((await health.all()).get(lagging!)?.status).toBe('recovering');
    clock.advanceSeconds(3);
    const second = await maintenance.handoff(ring);
    expect(second.find((report) => report.table === lagging)).toMatchObject({ transition: 'available' });
  });

  it('replay a hint written by a writer that still saw the shard as unavailable during recovery', async () => {
    const { kv, shards, health, hints, maintenance, clock, replication } = setup();
    const [, lagging] = tablesOf('k');
    shards.down.add(lagging!);
    await kv.put('ns', 'k', { value: text('v1'), contentType: 'text/plain', consistency: 'strong' });
    shards.down.delete(lagging!);
    const staleView = await health.all();
    await maintenance.handoff(ring);
    // A writer acting on its older view hints the shard instead of writing to it.
    const v2 = { ...shards.peek(tablesOf('k')[0]!, 'ns', 'k')!, version: 2 };
    expect(await replication.copyTo(lagging!, v2, staleView)).toBe('hinted');
    // The shard must not serve reads while that hint waits.
    expect((await health.all()).get(lagging!)?.status).toBe('recovering');
    clock.advanceSeconds(3);
    await maintenance.handoff(ring);
    expect((await health.all()).get(lagging!)?.status).toBe('available');
    expect(shards.peek(lagging!, 'ns', 'k')?.version).toBe(2);
    expect(await hints.count(lagging!)).toBe(0);
  });
});

describe('hinted handoff', () => {
  it('replays per key in version order and keeps the shard out of reads while replay fails', async () => {
    const { kv, shards, health, hints, maintenance, faults, clock } = setup();
    const [, down] = tablesOf('k');
    shards.down.add(down!);
    for (const value of ['a', 'b', 'c']) await kv.put('ns', 'k', { value: text(value), contentType: 'text/plain', consistency: 'strong' });
    expect(await hints.count(down!)).toBe(3);
    // Still down: the probe fails and nothing moves.
    expect(await maintenance.handoff(ring)).toEqual([]);
    shards.down.delete(down!);
    // A crash during replay leaves the shard recovering (not readable) and the hint in the log.
    faults.crashAt('hints.duringReplay');
    await expect(maintenance.handoff(ring)).rejects.toThrow('crash injected at hints.duringReplay');
    expect((await health.all()).get(down!)?.status).toBe('recovering');
    const applied: number[] = [];
    const original = shards.applyReplica.bind(shards);
    shards.applyReplica = async (table, item, options) => (applied.push(item.version), original(table, item, options));
    await maintenance.handoff(ring);
    clock.advanceSeconds(3);
    await maintenance.handoff(ring);
    expect(applied).toEqual([...applied].sort((a, b) => a - b));
    expect(shards.peek(down!, 'ns', 'k')?.version).toBe(3);
    expect(await hints.count(down!)).toBe(0);
    expect((await health.all()).get(down!)?.status).toBe('available');
  });
});

describe('anti-entropy', () => {
  it('finds every divergent key range by range and copies the newest version, and reports it', async () => {
    const { kv, shards, maintenance } = setup();
    for (let i = 0; i < 40; i += 1)
      await kv.put('ns', `key-${i}`, { value: text(`v${i}`), contentType: 'text/plain', consistency: 'strong' });
    // Damage: a replica loses one key, another holds an old version of a second key.
    const [, replicaA] = tablesOf('key-1');
    shards.table(replicaA!).delete('ns#key-1');
    await kv.put('ns', 'key-2', { value: text('newer'), contentType: 'text/plain' });
    const report = await maintenance.antiEntropy(ring, { fromRange: 0, rangesMax: ring.ranges().length });
    expect(report.rangesCompared).toBe(ring.ranges().length);
    expect(report.keysCompared).toBe(40);
    expect(report.repairedCount).toBe(3);
    expect(report.repairs).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ key: 'key-1', from: 0, to: 1 }),
        expect.objectContaining({ key: 'key-2', from: 1, to: 2 }),
      ]),
    );
    expect(versionsOn(shards, 'key-1')).toEqual([1, 1, 1]);
    expect(versionsOn(shards, 'key-2')).toEqual([2, 2, 2]);
    // A second pass finds nothing left to repair.
    expect((await maintenance.antiEntropy(ring, { fromRange: 0, rangesMax: 1000 })).repairedCount).toBe(0);
  });

  it('starts no range past its deadline, answers what is left, and the next run goes on from there', async () => {
    // Prepare: every range takes a second of the clock to compare.
    const { shards, maintenance, clock } = setup();
    const original = shards.versionsInRange.bind(shards);
    shards.versionsInRange = async (table, range) => {
      if (
        table ===
        ring
          .ranges()
          .find((candidate) => candidate.end === range.end)!
          .replicas.map((id) => ring.shard(id).table)[0]
      )
        clock.advanceSeconds(1);
      return original(table, range);
    };
    const total = ring.ranges().length;

    // Act: a full pass with three seconds, then another with no deadline.
    const first = await maintenance.run(ring, { rangesMax: Number.MAX_SAFE_INTEGER, untilMs: clock.nowMs() + 3_000 });
    const second = await maintenance.run(ring, { rangesMax: total });

    // Assess
    expect(first.antiEntropy).toMatchObject({ rangesCompared: 3, rangesLeft: total - 3, nextRange: 3 });
    expect(second.antiEntropy).toMatchObject({ rangesCompared: total, rangesLeft: 0, nextRange: 3 });
  });

  it('compares a slice on a scheduled run only when the last slice is old enough; a repair pass compares at once', async () => {
    // Prepare
    const { maintenance, clock } = setup();
    const total = ring.ranges().length;

    // Act: scheduled runs 2 s apart (the local cloud's schedule), then one past the interval, then a repair pass.
    const first = await maintenance.run(ring);
    clock.advanceSeconds(2);
    const paced = await maintenance.run(ring);
    clock.advanceSeconds(28);
    const due = await maintenance.run(ring);
    clock.advanceSeconds(2);
    const repair = await maintenance.run(ring, { rangesMax: total });

    // Assess: the paced run still replays hints (its handoff is reported) and keeps the walk's place.
    expect(first.antiEntropy).toMatchObject({ rangesCompared: 8, nextRange: 8 });
    expect(first.antiEntropy.nextSliceAt).toBeUndefined();
    expect(paced.handoff).toEqual(expect.any(Array));
    expect(paced.antiEntropy).toMatchObject({
      rangesCompared: 0,
      nextRange: 8,
      nextSliceAt: new Date(clock.nowMs() - 32_000 + 30_000).toISOString(),
    });
    expect(due.antiEntropy).toMatchObject({ rangesCompared: 8, nextRange: 16 });
    expect(repair.antiEntropy).toMatchObject({ rangesCompared: total, nextRange: 16 });
  });

  it('compares at least one range however late it starts', async () => {
    const { maintenance, clock } = setup();
    const report = await maintenance.run(ring, { rangesMax: Number.MAX_SAFE_INTEGER, untilMs: clock.nowMs() - 1 });
    expect(report.antiEntropy).toMatchObject({ rangesCompared: 1, rangesLeft: ring.ranges().length - 1, nextRange: 1 });
  });
});

/**
 * A shard stream as DynamoDB keeps it: one record per stored item change, in order, delivered until the
 * consumer acknowledges it (a failed batch is retried from its first failed record).
 */
class MemoryStream {
  readonly records: OwnerChange[] = [];
  private checkpoint = 0;

  constructor(shards: MemoryShardStore) {
    const write = shards.write.bind(shards);
    shards.write = async (table, change) => {
      const result = await write(table, change);
      // Only a write that happened changes the item, and so makes a stream record.
      if (result.outcome === 'written') {
        this.records.push({ sourceTable: table, item: { ...shards.peek(table, change.namespace, change.key)! } });
      }
      return result;
    };
    const apply = shards.applyReplica.bind(shards);
    shards.applyReplica = async (table, item, options) => {
      const applied = await apply(table, item, options);
      if (applied) this.records.push({ sourceTable: table, item: { ...item } });
      return applied;
    };
  }

  /** Delivers the pending records in one batch; advances past what the replicator acknowledged. */
  async deliver(replication: ReturnType<typeof setup>['replication']): Promise<void> {
    const batch = this.records.slice(this.checkpoint);
    if (batch.length === 0) return;
    const result = await replication.applyOwnerChanges(...weighedByRing(batch, ring));
    this.checkpoint += result.firstFailedIndex ?? batch.length;
  }
}

describe('convergence under crashes and outages (seeded)', () => {
  const crashable = [
    'write.beforeOwner',
    'write.afterOwner',
    'write.afterFirstReplica',
    'write.beforeHint',
    'hints.duringReplay',
    'replicator.beforeApply',
    'replicator.afterApply',
  ] as const;

  it('converges every replica to the owner by the stream and hinted handoff alone, never behind an acknowledged write', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            key: fc.constantFrom('a', 'b', 'c', 'd'),
            kind: fc.constantFrom('put', 'delete'),
            consistency: fc.constantFrom<'eventual' | 'strong'>('eventual', 'strong'),
            crash: fc.option(fc.constantFrom(...crashable), { freq: 3 }),
            downShard: fc.option(fc.integer({ min: 0, max: 3 }), { freq: 3 }),
            maintenance: fc.boolean(),
          }),
          { minLength: 1, maxLength: 25 },
        ),
        async (steps) => {
          const { kv, shards, replication, maintenance, faults, clock } = setup();
          const stream = new MemoryStream(shards);
          const acked = new Map<string, { version: number; sha256?: string }>();
          for (const [index, step] of steps.entries()) {
            shards.down.clear();
            if (step.downShard !== null) shards.down.add(`shard-${step.downShard}`);
            faults.disarm();
            if (step.crash) faults.crashAt(step.crash);
            try {
              const ack =
                step.kind === 'put'
                  ? await kv.put('ns', step.key, { value: text(`${index}`), contentType: 'text/plain', consistency: step.consistency })
                  : await kv.delete('ns', step.key, { consistency: step.consistency });
              acked.set(step.key, { version: ack.version });
            } catch {
              // Crashed, unavailable or not found: not acknowledged.
            }
            // The stream and the maintenance job run between requests, and may crash too.
            await stream.deliver(replication).catch(() => undefined);
            if (step.maintenance) await maintenance.handoff(ring).catch(() => undefined);
            clock.advanceSeconds(1);
          }
          // Recovery: every shard back, no faults; the stream drains and hinted handoff runs. No
          // anti-entropy: it would mask a write that the stream and hints both lost.
          shards.down.clear();
          faults.disarm();
          await stream.deliver(replication);
          await maintenance.handoff(ring);
          clock.advanceSeconds(3);
          await maintenance.handoff(ring);
          await stream.deliver(replication);
          for (const key of ['a', 'b', 'c', 'd']) {
            const [owner, ...replicas] = tablesOf(key);
            const ownerItem = shards.peek(owner!, 'ns', key);
            expect(ownerItem?.version ?? 0).toBeGreaterThanOrEqual(acked.get(key)?.version ?? 0);
            for (const table of replicas) {
              const replica: StoredItem | undefined = shards.peek(table, 'ns', key);
              expect({ table, version: replica?.version, sha256: replica?.sha256, tombstone: replica?.tombstone }).toEqual({
                table,
                version: ownerItem?.version,
                sha256: ownerItem?.sha256,
                tombstone: ownerItem?.tombstone,
              });
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
