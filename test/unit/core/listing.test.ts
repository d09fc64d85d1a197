// The listing merge over write-sharded index partitions (lambdas/core/listing.ts), and a namespace's
// listing over the shards' owned keys (KvService.list).
import fc from 'fast-check';
import { isRingstoreError } from '../../../lambdas/core/errors';
import { compareKeys, keysPerPartitionRead, mergeListing } from '../../../lambdas/core/listing';
import { listingBucketOf, tokenOf } from '../../../lambdas/core/ring';
import type { KeySummary, ListPage } from '../../../lambdas/ports';
import { limits, shardSchema } from '../../../schemas/topology';
import { ManualClock, MemoryShardStore, memoryReplication, staticRing, memoryKv } from '../../support/memory-ports';

const summary = (key: string, version = 1): KeySummary => ({ key, version, size: 1, contentType: 'text/plain' });
const sorted = (keys: Iterable<string>) => [...keys].sort(compareKeys);

/** Partitions as sorted key lists, read like the index: at most `limit` keys after `afterKey`, and where it stopped. */
function partitionsOf(contents: string[][], reads: Array<{ partition: number; afterKey: string | undefined }>) {
  const lists = contents.map((keys) => sorted(keys));
  const read = async (partition: number, afterKey: string | undefined, limit: number): Promise<ListPage> => {
    reads.push({ partition, afterKey });
    const after = lists[partition]!.filter((key) => afterKey === undefined || compareKeys(key, afterKey) > 0);
    const items = after.slice(0, limit).map((key) => summary(key));
    return after.length > limit ? { items, more: true, resumeAfter: items[items.length - 1]!.key } : { items, more: false };
  };
  return { partitions: contents.map((_, index) => index), read };
}

describe('mergeListing', () => {
  it('returns the first keys of the union in order, page after page, each once, whatever the split', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 5 }), { maxLength: 80 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 4 }),
        async (keys, partitionCount, limit, roundsMax) => {
          const contents = Array.from({ length: partitionCount }, (_, p) => keys.filter((_, i) => i % partitionCount === p));
          const { partitions, read } = partitionsOf(contents, []);
          const seen: string[] = [];
          let afterKey: string | undefined;
          for (let page = 0; page < 500; page += 1) {
            const merged = await mergeListing({ partitions, read, afterKey, limit, roundsMax });
            expect(merged.items.length).toBeLessThanOrEqual(limit);
            seen.push(...merged.items.map((item) => item.key));
            afterKey = merged.resumeAfter;
            if (afterKey === undefined) break;
          }
          expect(seen).toEqual(sorted(keys));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('fills a page in one round when keys spread evenly, and reads again only the partitions stopped at the boundary', async () => {
    const keys = Array.from({ length: 400 }, (_, i) => `k${String(i).padStart(4, '0')}`);
    const contents = Array.from({ length: 8 }, (_, p) => keys.filter((key) => listingBucketOf(tokenOf('ns', key)) === p));
    const reads: Array<{ partition: number; afterKey: string | undefined }> = [];
    const { partitions, read } = partitionsOf(contents, reads);

    const merged = await mergeListing({ partitions, read, afterKey: undefined, limit: 20, roundsMax: 4 });

    expect(merged.items.map((item) => item.key)).toEqual(keys.slice(0, 20));
    expect(merged.resumeAfter).toBe('k0019');
    const firstRound = reads.slice(0, 8);
    expect(firstRound.map((r) => r.partition)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // Any later read continues a partition from where it stopped, never from the start.
    for (const later of reads.slice(8)) expect(later.afterKey).toBeDefined();
    expect(reads.length).toBeLessThan(16);
  });

  it('asks each partition for about twice its share of a page', () => {
    expect(keysPerPartitionRead(100, 32)).toBe(8);
    expect(keysPerPartitionRead(1000, 4)).toBe(501);
    expect(keysPerPartitionRead(5, 1)).toBe(5);
  });

  it('answers fewer keys with a cursor when its rounds run out, and the cursor continues exactly', async () => {
    // Partition 0 holds the early keys and pages slowly: one round cannot fill the page.
    const early = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8', 'a9'];
    const { partitions, read } = partitionsOf([early, ['z1'], ['z2'], ['z3']], []);

    const first = await mergeListing({ partitions, read, afterKey: undefined, limit: 8, roundsMax: 1 });
    const rest = await mergeListing({ partitions, read, afterKey: first.resumeAfter, limit: 8, roundsMax: 4 });

    expect(first).toEqual({ items: early.slice(0, 5).map((key) => summary(key)), resumeAfter: 'a5' });
    expect(rest).toEqual({ items: [...early.slice(5), 'z1', 'z2', 'z3'].map((key) => summary(key)) });
  });

  it('lists a key found in two partitions (an owner change in progress) once, at its newest version', async () => {
    const pages: ListPage[] = [
      { items: [summary('a', 2), summary('b', 1)], more: false },
      { items: [summary('a', 3)], more: false },
    ];
    const merged = await mergeListing({ partitions: [0, 1], read: async (p) => pages[p]!, afterKey: undefined, limit: 10, roundsMax: 1 });

    expect(merged).toEqual({ items: [summary('a', 3), summary('b', 1)] });
  });
});

describe('KvService.list over owned keys', () => {
  function setup() {
    const shards = new MemoryShardStore();
    const clock = new ManualClock();
    const { replication, health } = memoryReplication(shards, clock);
    const ring = staticRing(4);
    const kv = memoryKv({ shards, ring, clock, limits, replication, health });
    return { kv, shards, health, ring };
  }
  const text = (value: string) => new TextEncoder().encode(value);

  it('keeps a stable cursor while keys are written between pages: each key that stays is listed once, in order', async () => {
    const { kv } = setup();
    const before = Array.from({ length: 30 }, (_, i) => `m${String(i).padStart(2, '0')}`);
    for (const key of before) await kv.put('ns', key, { value: text(key), contentType: 'text/plain' });
    const seen: string[] = [];
    let cursor: string | undefined;
    let page = 0;
    do {
      const result = await kv.list('ns', { prefix: '', limit: 7, ...(cursor ? { cursor } : {}) });
      seen.push(...result.items.map((item) => item.key));
      cursor = result.cursor;
      // Between pages: a key before the cursor (not listed now), one after it (listed), one deleted ahead.
      await kv.put('ns', `a-inserted-${page}`, { value: text('x'), contentType: 'text/plain' });
      await kv.put('ns', `z-inserted-${page}`, { value: text('x'), contentType: 'text/plain' });
      page += 1;
    } while (cursor);

    expect(seen).toEqual(sorted(new Set(seen)));
    expect(seen.filter((key) => key.startsWith('m'))).toEqual(before);
    expect(seen.some((key) => key.startsWith('z-inserted'))).toBe(true);
    expect(seen.some((key) => key.startsWith('a-inserted'))).toBe(false);
  });

  it('lists each key once though RF shards hold it, and a deleted key not at all', async () => {
    const { kv, shards } = setup();
    for (const key of ['a', 'b', 'c']) await kv.put('ns', key, { value: text(key), contentType: 'text/plain' });
    await kv.delete('ns', 'b', {});

    const copies = [...shards.tables.values()].filter((table) => table.has('ns#a')).length;
    expect(copies).toBeGreaterThanOrEqual(1);
    expect((await kv.list('ns', { prefix: '', limit: 10 })).items.map((item) => item.key)).toEqual(['a', 'c']);
  });

  it('refuses with a retryable shard.unavailable while a shard is out (its owned keys would be missing)', async () => {
    const { kv, health, ring } = setup();
    await kv.put('ns', 'a', { value: text('a'), contentType: 'text/plain' });
    const { shards } = await ring.current();
    await health.markUnavailable(shards[1]!.table, 'test outage', Date.now());

    const error = await kv.list('ns', { prefix: '', limit: 10 }).then(
      () => undefined,
      (caught: unknown) => caught,
    );

    expect(isRingstoreError(error) && error.code).toBe('shard.unavailable');
    expect(isRingstoreError(error) && error.retryable).toBe(true);
  });

  it('spreads a namespace over every listing bucket of a shard (the index partitions a busy namespace writes)', () => {
    const counts = new Array<number>(shardSchema.keyIndex.buckets).fill(0);
    for (let i = 0; i < 8_000; i += 1) counts[listingBucketOf(tokenOf('busy', `key-${i}`))]! += 1;
    const expected = 8_000 / shardSchema.keyIndex.buckets;
    for (const count of counts) expect(Math.abs(count - expected)).toBeLessThan(expected * 0.1);
  });
});
