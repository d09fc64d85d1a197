// The change feed's core (lambdas/core/watch.ts): placement by topic, positions, cursors, what the stream consumer
// appends, and what a watcher is served, down to the no-gap argument under slow appends (a property over virtual time).
import fc from 'fast-check';
import {
  FeedClock,
  FeedWriter,
  WatchService,
  boundAtMs,
  bucketOfKey,
  bucketsOfPrefix,
  decodeCursor,
  encodeCursor,
  isPosition,
  msOfPosition,
  topicOf,
  type FeedChange,
  type WatchLimits,
} from '../../../lambdas/core/watch';
import type { StoredItem } from '../../../lambdas/ports';
import { watchDefaults } from '../../../schemas/topology';
import { codeOf } from '../../support/errors';
import { MemoryFeedStore } from '../../support/memory-feed';
import { fixedRing, ManualClock, MemoryShardStore } from '../../support/memory-ports';
import { RingstoreError } from '../../../lambdas/core/errors';
import { fencedRangesRing } from '../../../lambdas/core/failover';
import { initialRingState, Ring } from '../../../lambdas/core/ring';
import type { RingSource } from '../../../lambdas/core/ring-source';
import { StreamOwnership } from '../../../lambdas/core/stream-ownership';

const limits: WatchLimits = watchDefaults;
const ring = new Ring(initialRingState({ shardCount: 4, replicationFactor: 3, vnodesPerShard: 16, tableName: (id) => `shard-${id}` }));
/** The owner of the token every test item carries, whose stream the changes come from unless a test says otherwise. */
const ownerTable = ring.ownerOf(1).table;
/** The weighing of writes by a ring source (a fixed ring unless given) and the shard tables. */
const ownedBy = (
  shards = new MemoryShardStore(),
  byRing: Ring | Pick<RingSource, 'lease' | 'fresh'> = ring,
  clock = new ManualClock(),
  sleep = async (_ms: number) => undefined,
) => new StreamOwnership({ ring: byRing instanceof Ring ? fixedRing(byRing) : byRing, shards, clock, sleep });

function itemOf(key: string, version: number, parts: Partial<StoredItem> = {}): StoredItem {
  const value = new TextEncoder().encode(`${key}@${version}`);
  return {
    namespace: 'ns',
    key,
    version,
    token: 1,
    contentType: 'text/plain',
    size: value.length,
    sha256: '',
    tombstone: false,
    value,
    modifiedAtMs: 1,
    ...parts,
  };
}

const written = (key: string, version: number, parts: Partial<StoredItem> = {}): FeedChange => ({
  sourceTable: ownerTable,
  item: itemOf(key, version, parts),
  ...(version > 1 ? { previousVersion: version - 1 } : {}),
  copied: false,
});

/** Virtual time: sleeps resolve in time order as the test drives the clock; actors run between timers. */
class VirtualTime {
  private timers: Array<{ atMs: number; resolve: () => void; order: number }> = [];
  private order = 0;
  constructor(readonly clock: ManualClock) {}

  sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      this.timers.push({ atMs: this.clock.now + Math.max(0, ms), resolve, order: this.order++ });
    });

  /** Runs timers until `done` settles (or there are none left). */
  async run<T>(done: Promise<T>): Promise<T> {
    let finished = false;
    void done.finally(() => (finished = true));
    for (;;) {
      for (let turn = 0; turn < 20; turn++) await Promise.resolve();
      await new Promise((resolve) => setImmediate(resolve));
      if (finished) return done;
      this.timers.sort((a, b) => a.atMs - b.atMs || a.order - b.order);
      const next = this.timers.shift();
      if (!next) return done;
      this.clock.now = Math.max(this.clock.now, next.atMs);
      next.resolve();
    }
  }
}

describe('feed placement', () => {
  it('puts a key in its topic’s partition, and a prefix that names a topic reads that partition alone', () => {
    expect(topicOf('orders/eu/17')).toBe('orders/');
    expect(topicOf('plain')).toBe('plain');
    expect(bucketsOfPrefix('', 8)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(bucketsOfPrefix('ord', 8)).toHaveLength(8);
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string(), fc.string(), (segment, rest, tail) => {
        const prefix = `${segment.replaceAll('/', '')}/${rest}`;
        expect(bucketsOfPrefix(prefix, 8)).toEqual([bucketOfKey(prefix + tail, 8)]);
      }),
    );
  });
});

describe('feed positions', () => {
  it('only grow, within a millisecond and when the clock steps back, and a bound sorts after its millisecond', () => {
    const clock = new ManualClock(1_000);
    const feedClock = new FeedClock(clock, 'abcdef01');
    const stamped = [feedClock.stamp(), feedClock.stamp()];
    clock.now = 900;
    stamped.push(feedClock.stamp());
    clock.now = 1_001;
    stamped.push(feedClock.stamp());
    expect([...stamped].sort()).toEqual(stamped);
    expect(new Set(stamped).size).toBe(4);
    expect(stamped.every(isPosition)).toBe(true);
    expect(stamped[2]! < boundAtMs(1_000)).toBe(true);
    expect(boundAtMs(1_000) < stamped[3]!).toBe(true);
    expect(msOfPosition(stamped[3]!)).toBe(1_001);
  });
});

describe('watch cursors', () => {
  it('round-trip, and an edited, cut or foreign text is refused with watch.cursorInvalid', () => {
    const cursor = encodeCursor('ns', boundAtMs(5));
    expect(decodeCursor(cursor)).toEqual({ namespace: 'ns', position: boundAtMs(5) });
    const edited = encodeCursor('other', boundAtMs(5)).split('.')[1];
    const [version, , check] = cursor.split('.');
    for (const bad of ['', 'nonsense', cursor.slice(0, -1), `${version}.${edited}.${check}`, `${cursor}.x`, 'w1.e30.AAAAAAAAAAAAAAAA']) {
      expect(() => decodeCursor(bad)).toThrow(RingstoreError);
      expect(() => decodeCursor(bad)).toThrow('cursor is not a watch cursor Ringstore gave');
    }
  });
});

describe('FeedWriter', () => {
  it('appends the owner’s committed changes only, each as put, delete or expire, with the value inline when small', async () => {
    const store = new MemoryFeedStore();
    const clock = new ManualClock();
    const writer = new FeedWriter({ store, clock, limits, ownership: ownedBy() });
    const big = new Uint8Array(limits.inlineValueBytesMax + 1);
    const result = await writer.append([
      written('a/1', 1),
      { ...written('a/1', 2), copied: true },
      { sourceTable: ownerTable, item: itemOf('a/1', 2), previousVersion: 2, copied: false },
      { sourceTable: ownerTable, item: itemOf('a/new', 0, { tombstone: true }), copied: false },
      written('a/2', 3, { tombstone: true, value: undefined, size: 0 }),
      written('b', 4, { value: big, size: big.length, writtenBy: { txid: 't1', writes: 2 } }),
      { sourceTable: ownerTable, item: itemOf('c', 5, { expiresAtSeconds: 9 }), copied: false, expired: true },
      { sourceTable: ownerTable, item: itemOf('c', 6, { tombstone: true }), copied: false, expired: true },
    ]);
    expect(result).toEqual({ appended: 4, restamped: 0, ignored: 4, alreadyAppended: 0, notInEffect: 0 });
    const entries = store.all('ns');
    expect(entries.map((entry) => [entry.key, entry.version, entry.operation])).toEqual([
      ['a/1', 1, 'put'],
      ['a/2', 3, 'delete'],
      ['b', 4, 'put'],
      ['c', 5, 'expire'],
    ]);
    expect(new TextDecoder().decode(entries[0]!.value)).toBe('a/1@1');
    expect(entries[2]).toMatchObject({ txid: 't1', size: big.length });
    expect(entries[2]!.value).toBeUndefined();
    expect(entries[3]).toMatchObject({ expiresAtSeconds: 9 });
  });

  it('stamps again an append that outlasted the settle time, and reports the first change of a failed one', async () => {
    const store = new MemoryFeedStore();
    const clock = new ManualClock();
    const writer = new FeedWriter({ store, clock, limits, ownership: ownedBy() });
    let slow = true;
    store.beforeAppend = () => {
      if (slow) clock.now += limits.settleMs;
      slow = false;
    };
    expect(await writer.append([written('a', 1), written('b', 1)])).toEqual({
      appended: 2,
      restamped: 2,
      ignored: 0,
      alreadyAppended: 0,
      notInEffect: 0,
    });
    expect(store.all('ns').map((entry) => entry.key)).toEqual(['a', 'b', 'a', 'b']);

    store.beforeAppend = () => {
      throw new RingstoreError('shard.unavailable', 'feed table down', { retryable: true });
    };
    expect(await writer.append([{ ...written('c', 1), copied: true }, written('d', 1)])).toEqual({
      appended: 0,
      restamped: 0,
      ignored: 1,
      alreadyAppended: 0,
      notInEffect: 0,
      firstFailedIndex: 1,
    });
  });

  it('does not append again the changes of a retried batch it had appended, and appends the rest', async () => {
    const store = new MemoryFeedStore();
    const writer = new FeedWriter({ store, clock: new ManualClock(), limits: { ...limits, appendBatchMax: 2 }, ownership: ownedBy() });
    // The second request of the batch fails: the stream retries the whole batch.
    let appends = 0;
    store.beforeAppend = () => {
      if (++appends === 2) throw new RingstoreError('shard.unavailable', 'feed table down', { retryable: true });
    };
    const batch = [written('a', 1), written('b', 1), written('c', 1), written('a', 2)];
    expect(await writer.append(batch)).toMatchObject({ appended: 2, firstFailedIndex: 2 });
    expect(await writer.append(batch)).toEqual({ appended: 2, restamped: 0, ignored: 0, alreadyAppended: 2, notInEffect: 0 });
    expect(store.all('ns').map((entry) => `${entry.key}@${entry.version}`)).toEqual(['a@1', 'b@1', 'c@1', 'a@2']);
    // A key written again at version 1 after its expiry is a new change.
    const recreated = written('a', 1, { modifiedAtMs: 1_800_000_000_000 });
    expect(await writer.append([recreated])).toMatchObject({ appended: 1, alreadyAppended: 0 });
  });
});

describe('FeedWriter: a write a table made after it lost the key’s range', () => {
  // A table that holds the items' token range but does not own it: an old owner after a cut-over or a failover.
  const oldTable = ring.replicasOf(1)[1]!.table;
  const fromOld = (key: string, version: number, modifiedAtMs = 100): FeedChange => ({
    ...written(key, version, { modifiedAtMs }),
    sourceTable: oldTable,
  });

  it('is appended when the owner carries it, and left out when the owner reused its version or never received it', async () => {
    const store = new MemoryFeedStore();
    const shards = new MemoryShardStore();
    // k1: the move's catch-up copied it. k2: it landed after the fenced catch-up; the owner wrote its own 5 (the
    // watch fault suite's a/3@17, seed 811759886). k3: landed late, nothing written since on the owner.
    await shards.applyReplica(ownerTable, itemOf('k1', 5, { modifiedAtMs: 100 }), { nowSeconds: 1, listed: true });
    await shards.applyReplica(ownerTable, itemOf('k2', 4, { modifiedAtMs: 90 }), { nowSeconds: 1, listed: true });
    await shards.write(ownerTable, {
      namespace: 'ns',
      key: 'k2',
      token: 1,
      content: { contentType: 'text/plain', size: 1, sha256: '', value: new Uint8Array([1]) },
      precondition: { kind: 'none' },
      nowSeconds: 1,
      modifiedAtMs: 200,
    });
    await shards.applyReplica(ownerTable, itemOf('k3', 4, { modifiedAtMs: 90 }), { nowSeconds: 1, listed: true });
    const writer = new FeedWriter({ store, clock: new ManualClock(), limits, ownership: ownedBy(shards) });
    const result = await writer.append([fromOld('k1', 5), fromOld('k2', 5), fromOld('k3', 5), written('k4', 1)]);
    expect(result).toEqual({ appended: 2, restamped: 0, ignored: 0, alreadyAppended: 0, notInEffect: 2 });
    expect(store.all('ns').map((entry) => `${entry.key}@${entry.version}`)).toEqual(['k1@5', 'k4@1']);
  });

  const fenced = new Ring(fencedRangesRing(ring.state, [ring.rangeOf(1).end]));

  it('waits for a fence to lift, then weighs the change by the ring that lifted it', async () => {
    const store = new MemoryFeedStore();
    const clock = new ManualClock();
    const shards = new MemoryShardStore();
    await shards.applyReplica(ownerTable, itemOf('k', 5, { modifiedAtMs: 100 }), { nowSeconds: 1, listed: true });
    // The fence lifts after three fresh reads of the ring.
    let reads = 0;
    const lifting = {
      lease: async () => ({ ring: fenced, readAtMs: 0 }),
      fresh: async () => ({ ring: ++reads >= 3 ? ring : fenced, readAtMs: 0 }),
    };
    const sleep = async (ms: number) => void (clock.now += ms);
    const writer = new FeedWriter({ store, clock, limits, ownership: ownedBy(shards, lifting, clock, sleep) });
    expect(await writer.append([fromOld('k', 5), fromOld('k', 6)])).toEqual({
      appended: 1,
      restamped: 0,
      ignored: 0,
      alreadyAppended: 0,
      notInEffect: 1,
    });
    expect(reads).toBe(3);
  });

  it('gives up on a fence that outlasts a write’s wait: what comes before is appended, the stream retries from the fenced change', async () => {
    const store = new MemoryFeedStore();
    const clock = new ManualClock();
    const sleep = async (ms: number) => void (clock.now += ms);
    const writer = new FeedWriter({ store, clock, limits, ownership: ownedBy(new MemoryShardStore(), fenced, clock, sleep) });
    const elsewhere = {
      ...written('far', 1, { token: ring.rangeOf(1).end + 1 }),
      sourceTable: fenced.ownerOf(ring.rangeOf(1).end + 1).table,
    };
    expect(await writer.append([elsewhere, written('a', 2), written('b', 1)])).toEqual({
      appended: 1,
      restamped: 0,
      ignored: 0,
      alreadyAppended: 0,
      notInEffect: 0,
      firstFailedIndex: 1,
      awaitingFence: true,
    });
    expect(store.all('ns').map((entry) => entry.key)).toEqual(['far']);
  });

  it('appends up to a change whose owner cannot be read, and reports that change for the stream to retry', async () => {
    const store = new MemoryFeedStore();
    const shards = new MemoryShardStore();
    shards.down.add(ownerTable);
    const writer = new FeedWriter({ store, clock: new ManualClock(), limits, ownership: ownedBy(shards) });
    const result = await writer.append([written('a', 1), fromOld('b', 2), written('c', 1)]);
    expect(result).toMatchObject({ appended: 1, firstFailedIndex: 1 });
    expect(result.awaitingFence).toBeUndefined();
    expect(store.all('ns').map((entry) => entry.key)).toEqual(['a']);
  });

  it('reports the first change when the ring cannot be read, and appends nothing', async () => {
    const store = new MemoryFeedStore();
    const unreadable = { lease: () => Promise.reject(new Error('control table down')), fresh: () => Promise.reject(new Error('down')) };
    const writer = new FeedWriter({ store, clock: new ManualClock(), limits, ownership: ownedBy(new MemoryShardStore(), unreadable) });
    expect(await writer.append([written('a', 1), fromOld('b', 2)])).toMatchObject({ appended: 0, firstFailedIndex: 0 });
    expect(store.all('ns')).toEqual([]);
  });
});

describe('FeedWriter on a store slower than the settle time on every append', () => {
  it('stamps the entries again ahead of the clock, so the restamps end and no watcher passes them before they land', async () => {
    const { clock, time, store, writer, watch } = world();
    const start = await watch.watch('ns', { prefix: '', waitMs: 0, limit: 10 });
    // Every append takes twice the settle time: without stamping ahead, every attempt would be too late.
    store.beforeAppend = () => time.sleep(2 * limits.settleMs);
    const appending = writer.append([written('a', 1), written('b', 1)]);
    const result = await time.run(appending);
    expect(result).toMatchObject({ appended: 2, restamped: 2 });
    expect(result.firstFailedIndex).toBeUndefined();
    // The restamped entries lie ahead of the clock: served once their position has settled, not before.
    const early = await watch.watch('ns', { prefix: '', cursor: start.cursor, waitMs: 0, limit: 10 });
    expect(early.changes.map(({ entry }) => entry.key)).toEqual(['a', 'b']);
    clock.now += 2 * limits.restampLeadMaxMs;
    const later = await watch.watch('ns', { prefix: '', cursor: early.cursor, waitMs: 0, limit: 10 });
    expect(later.changes.map(({ entry }) => entry.key)).toEqual(['a', 'b']);
  });
});

function world(parts: { watchLimits?: Partial<WatchLimits> } = {}) {
  const watchLimits = { ...limits, ...parts.watchLimits };
  const clock = new ManualClock();
  const time = new VirtualTime(clock);
  const store = new MemoryFeedStore();
  const writer = new FeedWriter({ store, clock, limits: watchLimits, ownership: ownedBy() });
  const watch = new WatchService({ store, clock, sleep: time.sleep, limits: watchLimits });
  return { clock, time, store, writer, watch, limits: watchLimits };
}

describe('WatchService', () => {
  it('serves changes after the cursor once settled, by prefix, in pages that continue where they ended', async () => {
    const { clock, writer, watch } = world();
    const before = await watch.watch('ns', { prefix: '', waitMs: 0, limit: 100 });
    expect(before.changes).toEqual([]);
    clock.now += 1;
    await writer.append([written('orders/1', 1), written('users/1', 1), written('orders/2', 1), written('orders/1', 2)]);
    await writer.append([{ ...written('orders/3', 1), item: itemOf('orders/3', 1, { namespace: 'other' }) }]);
    // Not yet settled: nothing is served, and the cursor does not move past the unsettled changes.
    const early = await watch.watch('ns', { prefix: '', cursor: before.cursor, waitMs: 0, limit: 100 });
    expect(early.changes).toEqual([]);
    clock.now += limits.settleMs;
    const orders = await watch.watch('ns', { prefix: 'orders/', cursor: early.cursor, waitMs: 0, limit: 2 });
    expect(orders.changes.map(({ entry }) => `${entry.key}@${entry.version}`)).toEqual(['orders/1@1', 'orders/2@1']);
    const rest = await watch.watch('ns', { prefix: 'orders/', cursor: orders.cursor, waitMs: 0, limit: 2 });
    expect(rest.changes.map(({ entry }) => `${entry.key}@${entry.version}`)).toEqual(['orders/1@2']);
    const fromMiddle = await watch.watch('ns', { prefix: '', cursor: orders.changes[0]!.cursor, waitMs: 0, limit: 10 });
    expect(fromMiddle.changes.map(({ entry }) => `${entry.key}@${entry.version}`)).toEqual(['users/1@1', 'orders/2@1', 'orders/1@2']);
    const none = await watch.watch('ns', { prefix: 'orders/', cursor: rest.cursor, waitMs: 0, limit: 2 });
    expect(none.changes).toEqual([]);
  });

  it('waits for a first change within the wait, and answers empty with a cursor that has moved when none comes', async () => {
    const { clock, time, writer, watch } = world();
    const start = await watch.watch('ns', { prefix: 'a/', waitMs: 0, limit: 10 });
    const waiting = watch.watch('ns', { prefix: 'a/', cursor: start.cursor, waitMs: 5_000, limit: 10 });
    void time.sleep(1_000).then(() => writer.append([written('a/1', 1)]));
    const page = await time.run(waiting);
    expect(page.changes.map(({ entry }) => entry.key)).toEqual(['a/1']);
    expect(clock.now - 1_700_000_000_000).toBeLessThan(1_000 + limits.settleMs + limits.pollMs + 1);

    const empty = await time.run(watch.watch('ns', { prefix: 'a/', cursor: page.cursor, waitMs: 2_000, limit: 10 }));
    expect(empty.changes).toEqual([]);
    expect(msOfPosition(decodeCursor(empty.cursor).position)).toBeGreaterThan(msOfPosition(decodeCursor(page.cursor).position));
  });

  it('reads again when a change it saw unsettled settles, not a poll interval later', async () => {
    const { clock, time, writer, watch, limits: watchLimits } = world({ watchLimits: { pollMs: 2_000 } });
    const startMs = clock.now;
    const waiting = watch.watch('ns', { prefix: 'a/', waitMs: 10_000, limit: 10 });
    // Appended just before the watcher's second read (at 2 000 ms), which sees it unsettled.
    void time.sleep(1_900).then(() => writer.append([written('a/1', 1)]));
    const page = await time.run(waiting);
    expect(page.changes.map(({ entry }) => entry.key)).toEqual(['a/1']);
    expect(clock.now - startMs).toBe(1_900 + watchLimits.settleMs);
  });

  it('reads no more often than its least interval while changes settle one after another', async () => {
    const { clock, time, writer, watch, store, limits: watchLimits } = world();
    const readsAtMs: number[] = [];
    const read = store.read.bind(store);
    store.read = (query) => {
      readsAtMs.push(clock.now);
      return read(query);
    };
    const startMs = clock.now;
    const start = await watch.watch('ns', { prefix: 'a/', waitMs: 0, limit: 10 });
    readsAtMs.length = 0;
    // A change every 10 ms for 2 s, followed by one watcher from the start.
    for (let n = 1; n <= 200; n++) void time.sleep(n * 10).then(() => writer.append([written(`a/${n}`, 1)]));
    let cursor = start.cursor;
    const delivered: string[] = [];
    while (delivered.length < 200) {
      const page = await time.run(watch.watch('ns', { prefix: 'a/', cursor, waitMs: 5_000, limit: 100 }));
      delivered.push(...page.changes.map(({ entry }) => entry.key));
      cursor = page.cursor;
    }
    expect(delivered).toEqual(Array.from({ length: 200 }, (_, index) => `a/${index + 1}`));
    // One read when each request begins, and within a request reads at least the interval apart.
    const spanMs = clock.now - startMs;
    expect(readsAtMs.length).toBeLessThanOrEqual(2 * (spanMs / watchLimits.readIntervalMinMs + 1));
  });

  it('refuses a cursor of another namespace, and one past the retention with the oldest cursor still served', async () => {
    const { clock, watch } = world();
    const foreign = encodeCursor('other', boundAtMs(clock.now));
    expect(await codeOf(watch.watch('ns', { prefix: '', cursor: foreign, waitMs: 0, limit: 1 }))).toBe('watch.cursorForeign');
    const old = await watch.watch('ns', { prefix: '', waitMs: 0, limit: 1 });
    clock.now += limits.retentionSeconds * 1000 + 1;
    const refusal: unknown = await watch.watch('ns', { prefix: '', cursor: old.cursor, waitMs: 0, limit: 1 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toMatchObject({ code: 'watch.cursorExpired', details: { retentionSeconds: limits.retentionSeconds } });
    const oldest = (refusal as RingstoreError).details!.oldestCursor as string;
    await expect(watch.watch('ns', { prefix: '', cursor: oldest, waitMs: 0, limit: 1 })).resolves.toMatchObject({ changes: [] });
  });

  it('never leaves a gap: every change appended after a watcher began reaches it, whatever the appends’ durations', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            gapMs: fc.integer({ min: 0, max: 400 }),
            appendMs: fc.oneof(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 3 * limits.settleMs })),
            keys: fc.array(fc.constantFrom('a/1', 'a/2', 'b/1', 'c'), { minLength: 1, maxLength: 4 }),
          }),
          { minLength: 1, maxLength: 12 },
        ),
        fc.array(fc.integer({ min: 0, max: 1_500 }), { minLength: 1, maxLength: 8 }),
        fc.constantFrom('', 'a/', 'a'),
        async (batches, waits, prefix) => {
          const { clock, time, store, writer, watch } = world();
          const versions = new Map<string, number>();
          const appended: string[] = [];
          const appender = (async () => {
            for (const batch of batches) {
              await time.sleep(batch.gapMs);
              const changes = batch.keys.map((key) => {
                const version = (versions.get(key) ?? 0) + 1;
                versions.set(key, version);
                return written(key, version);
              });
              let remainingMs = batch.appendMs;
              store.beforeAppend = async () => {
                const waitMs = remainingMs;
                remainingMs = 0;
                if (waitMs > 0) await time.sleep(waitMs);
              };
              const result = await writer.append(changes);
              expect(result.firstFailedIndex).toBeUndefined();
              appended.push(...changes.map(({ item }) => `${item.key}@${item.version}`));
            }
          })();
          const delivered: string[] = [];
          const watcher = (async () => {
            let { cursor } = await watch.watch('ns', { prefix, waitMs: 0, limit: 3 });
            let turn = 0;
            // Until the appends are done and everything stamped has settled and been read.
            let quietSince: number | undefined;
            for (;;) {
              const page = await watch.watch('ns', { prefix, cursor, waitMs: waits[turn++ % waits.length]!, limit: 3 });
              delivered.push(...page.changes.map(({ entry }) => `${entry.key}@${entry.version}`));
              cursor = page.cursor;
              if (appended.length === batches.reduce((sum, batch) => sum + batch.keys.length, 0) && page.changes.length === 0) {
                quietSince ??= clock.now;
                // A restamped entry may lie ahead of the clock by up to the restamp lead.
                if (clock.now - quietSince > limits.restampLeadMaxMs + limits.settleMs * 2) return;
              }
              await time.sleep(10);
            }
          })();
          await time.run(Promise.all([appender, watcher]));
          const expected = appended.filter((change) => change.startsWith(prefix));
          expect(new Set(delivered)).toEqual(new Set(expected));
          // A key's versions arrive in order once repeats (a change delivered before) are dropped, as clients drop them.
          const seen = new Set<string>();
          const newest = new Map<string, number>();
          for (const change of delivered) {
            if (seen.has(change)) continue;
            seen.add(change);
            const [key, version] = change.split('@') as [string, string];
            expect(Number(version)).toBeGreaterThan(newest.get(key) ?? 0);
            newest.set(key, Number(version));
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
