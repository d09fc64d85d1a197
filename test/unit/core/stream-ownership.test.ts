// What the shard streams' consumers pass on (lambdas/core/stream-ownership.ts): a write its range's owner made, or a
// former owner's write the owner carries; never a former owner's write that landed after the fenced catch-up (refused
// to its client), whichever consumer weighs it: the replicator's copies, the change feed (test/unit/core/watch.test.ts)
// and the DR shipper's key messages.
import { DrShipper } from '../../../lambdas/core/dr-shipper';
import { fencedRangesRing } from '../../../lambdas/core/failover';
import { isReplicable, type OwnerChange } from '../../../lambdas/core/replication';
import { Ring, initialRingState } from '../../../lambdas/core/ring';
import type { RingSource } from '../../../lambdas/core/ring-source';
import { StreamOwnership, ownerCarries } from '../../../lambdas/core/stream-ownership';
import type { DrKeyMessage, StoredItem } from '../../../lambdas/ports';
import { ManualClock, MemoryBlobStore, MemoryShardStore, fixedRing, memoryReplication } from '../../support/memory-ports';

const ring = new Ring(initialRingState({ shardCount: 4, replicationFactor: 3, vnodesPerShard: 16, tableName: (id) => `shard-${id}` }));
const token = 1;
const [owner, formerOwner, replica] = ring.replicasOf(token).map((shard) => shard.table) as [string, string, string];
/** The range of `token` under a failover's or a cut-over's fence. */
const fenced = new Ring(fencedRangesRing(ring.state, [ring.rangeOf(token).end]));

function itemOf(key: string, version: number, modifiedAtMs: number): StoredItem {
  const value = new TextEncoder().encode(`${key}@${version}@${modifiedAtMs}`);
  return {
    namespace: 'ns',
    key,
    version,
    token,
    contentType: 'text/plain',
    size: value.length,
    sha256: '',
    tombstone: false,
    value,
    modifiedAtMs,
  };
}

const change = (sourceTable: string, item: StoredItem, copied = false): OwnerChange => ({
  sourceTable,
  item,
  previousVersion: item.version - 1,
  ...(copied ? { copied: true } : {}),
});

/**
 * The tables after a move of `token`'s range from `formerOwner` to `owner`: `carried`@5 reached the owner by the
 * catch-up; `refused`@5 landed on the former owner after the catch-up read it, and the owner wrote its own 5.
 */
async function afterCutOver() {
  const shards = new MemoryShardStore();
  const copy = { nowSeconds: 1, listed: true };
  const carried = itemOf('carried', 5, 100);
  const refused = itemOf('refused', 5, 100);
  const acknowledged = itemOf('refused', 5, 200);
  await shards.applyReplica(formerOwner, carried, { ...copy, ownerWrite: true });
  await shards.applyReplica(owner, carried, copy);
  await shards.applyReplica(formerOwner, refused, { ...copy, ownerWrite: true });
  await shards.applyReplica(owner, acknowledged, { ...copy, ownerWrite: true });
  for (const item of [itemOf('carried', 4, 50), itemOf('refused', 4, 50)]) await shards.applyReplica(replica, item, copy);
  return { shards, carried, refused, acknowledged };
}

function ownership(shards: MemoryShardStore, source: Pick<RingSource, 'lease' | 'fresh'> = fixedRing(ring), clock = new ManualClock()) {
  const sleep = async (ms: number) => void (clock.now += ms);
  return new StreamOwnership({ ring: source, shards, clock, sleep });
}

/** A ring source whose range stays fenced for `fencedReads` fresh reads, then shows the range's new owner. */
function liftingAfter(fencedReads: number) {
  const source = {
    reads: 0,
    lease: async () => ({ ring: fenced, readAtMs: 0 }),
    fresh: async () => ({ ring: ++source.reads > fencedReads ? ring : fenced, readAtMs: 0 }),
  };
  return source;
}

describe('ownerCarries', () => {
  it('holds when the owner holds this very write, or later ones over a copy at least as new', () => {
    const item = itemOf('k', 5, 100);
    expect(ownerCarries({ version: 5, copiedVersion: 5, modifiedAtMs: 100 }, item)).toBe(true);
    expect(ownerCarries({ version: 7, copiedVersion: 6, modifiedAtMs: 300 }, item)).toBe(true);
    expect(ownerCarries({ version: 7, copiedVersion: 5, modifiedAtMs: 300 }, item)).toBe(true);
    // The owner wrote its own version 5 (another modified time), or never received 5 before writing its own.
    expect(ownerCarries({ version: 5, copiedVersion: 4, modifiedAtMs: 200 }, item)).toBe(false);
    expect(ownerCarries({ version: 7, copiedVersion: 4, modifiedAtMs: 300 }, item)).toBe(false);
    expect(ownerCarries({ version: 7, modifiedAtMs: 300 }, item)).toBe(false);
    expect(ownerCarries({ version: 4, copiedVersion: 4, modifiedAtMs: 90 }, item)).toBe(false);
    expect(ownerCarries(undefined, item)).toBe(false);
  });
});

describe('StreamOwnership.weigh', () => {
  it("stands an owner's write, a former owner's carried and refused writes, and skips what the caller does not weigh", async () => {
    const { shards, carried, refused } = await afterCutOver();
    const batch = [
      change(owner, itemOf('mine', 1, 10)),
      change(formerOwner, carried),
      change(formerOwner, refused),
      change(replica, itemOf('echo', 3, 10), true),
    ];
    const weighing = await ownership(shards).weigh(batch, isReplicable);
    expect(weighing.standings).toEqual(['owner', 'carried', 'notInEffect', 'skipped']);
    expect(weighing.stoppedAt).toBeUndefined();
  });

  it('waits for a fence to lift and weighs by the ring that lifted it', async () => {
    const { shards, refused } = await afterCutOver();
    const source = liftingAfter(3);
    const weighing = await ownership(shards, source).weigh([change(formerOwner, refused)]);
    expect(source.reads).toBe(4);
    expect(weighing).toMatchObject({ ring, standings: ['notInEffect'] });
  });

  it('gives up on a fence that outlasts a write’s wait: the writes before it are stood, the stream retries from it', async () => {
    const { shards } = await afterCutOver();
    const clock = new ManualClock();
    const elsewhere = itemOf('far', 1, 10);
    const farToken = ring.rangeOf(token).end + 1;
    const batch = [change(ring.ownerOf(farToken).table, { ...elsewhere, token: farToken }), change(owner, itemOf('mine', 2, 10))];
    const weighing = await ownership(shards, liftingAfter(Infinity), clock).weigh(batch);
    expect(weighing.standings).toEqual(['owner']);
    expect(weighing.stoppedAt).toEqual({ index: 1, cause: 'fence' });
    expect(clock.now).toBeGreaterThanOrEqual(10_000);
  });

  it('stops at a write whose owner cannot be read: nothing is stood as out of history on a guess', async () => {
    const { shards, carried } = await afterCutOver();
    shards.down.add(owner);
    const weighing = await ownership(shards).weigh(
      [change(replica, itemOf('echo', 3, 10), true), change(formerOwner, carried)],
      isReplicable,
    );
    expect(weighing).toMatchObject({ standings: ['skipped'], stoppedAt: { index: 1, cause: 'unreadable' } });
  });
});

describe('the replicator weighs what it copies', () => {
  it("copies a former owner's carried write to the replicas the owner's stream would not, and a refused write nowhere", async () => {
    const { shards, carried, refused, acknowledged } = await afterCutOver();
    const { replication } = memoryReplication(shards, new ManualClock());
    const batch = [change(formerOwner, carried), change(formerOwner, refused)];
    const result = await replication.applyOwnerChanges(batch, await ownership(shards).weigh(batch, isReplicable));
    expect(result).toMatchObject({ applied: 1, notInEffect: 1 });
    expect(shards.peek(replica, 'ns', 'carried')).toMatchObject({ version: 5, modifiedAtMs: 100 });
    // The refused write reached no replica, so the owner's own 5 (its stream's record) still can.
    expect(shards.peek(replica, 'ns', 'refused')).toMatchObject({ version: 4 });
    const own = [change(owner, acknowledged)];
    await replication.applyOwnerChanges(own, await ownership(shards).weigh(own, isReplicable));
    expect(shards.peek(replica, 'ns', 'refused')).toMatchObject({ version: 5, modifiedAtMs: 200 });
    expect(shards.peek(formerOwner, 'ns', 'refused')).toMatchObject({ modifiedAtMs: 100 });
  });

  it('copies what comes before a fence that does not lift and reports the fenced write as awaiting', async () => {
    const { shards } = await afterCutOver();
    const { replication } = memoryReplication(shards, new ManualClock());
    const farToken = ring.rangeOf(token).end + 1;
    const far = change(ring.ownerOf(farToken).table, { ...itemOf('far', 1, 10), token: farToken });
    const batch = [far, change(owner, itemOf('mine', 2, 10))];
    const result = await replication.applyOwnerChanges(batch, await ownership(shards, liftingAfter(Infinity)).weigh(batch, isReplicable));
    expect(result).toMatchObject({ applied: 2, firstFailedIndex: 1, awaitingFence: true });
    for (const table of ring.replicasOf(farToken).slice(1)) expect(shards.peek(table.table, 'ns', 'far')?.version).toBe(1);
  });
});

describe('the DR shipper weighs what it ships', () => {
  it("ships a former owner's carried write and never a refused one: the backup learns no version the primary never had", async () => {
    const { shards, carried, refused, acknowledged } = await afterCutOver();
    const sent: DrKeyMessage[] = [];
    const shipper = new DrShipper({
      keys: { send: async (messages: readonly DrKeyMessage[]) => void sent.push(...messages) },
      backupValues: new MemoryBlobStore(),
      blobs: new MemoryBlobStore(),
      limits: { shipConcurrency: 2 },
    });
    const batch = [change(formerOwner, carried), change(formerOwner, refused), change(owner, acknowledged)];
    const result = await shipper.shipOwnerChanges(batch, await ownership(shards).weigh(batch, isReplicable));
    expect(result).toMatchObject({ shipped: 2, notInEffect: 1 });
    expect(sent.map((message) => `${message.key}@${message.version}`)).toEqual(['carried@5', 'refused@5']);
    expect(sent.find((message) => message.key === 'refused')).toMatchObject({ writtenAtMs: 200 });
  });
});
