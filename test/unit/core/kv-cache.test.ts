// The KV service with its read cache: eventual reads from the cache, strong reads never, version guards.
import { isRingstoreError } from '../../../lambdas/core/errors';
import type { CacheEntry, RemoteCache } from '../../../lambdas/ports';
import { L1Cache } from '../../../lambdas/core/l1-cache';
import { KvService } from '../../../lambdas/core/kv';
import { TwoLevelCache } from '../../../lambdas/core/two-level-cache';
import { limits } from '../../../schemas/topology';
import { ManualClock, MemoryShardStore, memoryReplication, staticRing, memoryKv } from '../../support/memory-ports';
import { decode, text } from '../../support/bytes';

/** A shard store that counts reads, so a test can tell a cache hit from a database read. */
class CountingShards extends MemoryShardStore {
  reads = 0;
  override async get(table: string, namespace: string, key: string) {
    this.reads += 1;
    return super.get(table, namespace, key);
  }
}

class FailingRemote implements RemoteCache {
  async get(): Promise<CacheEntry | undefined> {
    return undefined; // what RedisCache answers during an outage
  }
  async put(): Promise<boolean> {
    return false;
  }
}

function setup(remote?: RemoteCache) {
  const clock = new ManualClock();
  const shards = new CountingShards();
  const l1 = new L1Cache({ policy: 'lru', entriesMax: 100, bytesMax: 1 << 20, ttlMs: 1000, clock });
  const cache = new TwoLevelCache(l1, remote, 60_000);
  const { replication, health } = memoryReplication(shards, clock);
  const kv = memoryKv({
    shards,
    ring: staticRing(),
    clock,
    limits,
    cache,
    replication,
    health,
  });
  return { kv, shards, clock, cache };
}

async function valueOf(kv: KvService, key: string, consistency: 'eventual' | 'strong') {
  const read = await kv.get('ns', key, consistency);
  return read.kind === 'value' ? decode(read.value) : 'redirect';
}

describe('KvService with a cache', () => {
  it('serves eventual reads of a written key from the cache, and strong reads from the owner', async () => {
    const { kv, shards } = setup();
    await kv.put('ns', 'k', { value: text('v1'), contentType: 'text/plain' });
    expect(await valueOf(kv, 'k', 'eventual')).toBe('v1');
    expect(shards.reads).toBe(0);
    expect(await valueOf(kv, 'k', 'strong')).toBe('v1');
    expect(shards.reads).toBe(1);
  });

  it('populates the cache on a miss and answers deletes from a cached tombstone', async () => {
    const { kv, shards, clock } = setup();
    await kv.put('ns', 'k', { value: text('v1'), contentType: 'text/plain' });
    clock.advanceSeconds(2); // past the L1 TTL
    expect(await valueOf(kv, 'k', 'eventual')).toBe('v1');
    expect(shards.reads).toBe(1);
    expect(await valueOf(kv, 'k', 'eventual')).toBe('v1');
    expect(shards.reads).toBe(1);
    await kv.delete('ns', 'k', {});
    const error = await kv.get('ns', 'k', 'eventual').catch((e: unknown) => e);
    expect(isRingstoreError(error, 'kv.notFound')).toBe(true);
    expect(shards.reads).toBe(1);
  });

  it('never lets a stale read replace a newer cached version', async () => {
    const { kv, cache } = setup();
    await kv.put('ns', 'k', { value: text('v1'), contentType: 'text/plain' });
    await kv.put('ns', 'k', { value: text('v2'), contentType: 'text/plain' });
    // A slow reader that fetched version 1 before the second write now populates the cache.
    await cache.put('ns', 'k', { version: 1, tombstone: false, contentType: 'text/plain', size: 2, sha256: '', value: text('v1') });
    expect(await valueOf(kv, 'k', 'eventual')).toBe('v2');
  });

  it('does not serve a cached value past its key TTL', async () => {
    const { kv, clock } = setup();
    await kv.put('ns', 'k', { value: text('v1'), contentType: 'text/plain', ttlSeconds: 1 });
    clock.now += 500;
    expect(await valueOf(kv, 'k', 'eventual')).toBe('v1');
    clock.advanceSeconds(2);
    const error = await kv.get('ns', 'k', 'eventual').catch((e: unknown) => e);
    expect(isRingstoreError(error, 'kv.notFound')).toBe(true);
  });

  it('keeps working from the database when the shared cache is down', async () => {
    const { kv, shards, clock } = setup(new FailingRemote());
    await kv.put('ns', 'k', { value: text('v1'), contentType: 'text/plain' });
    clock.advanceSeconds(2);
    expect(await valueOf(kv, 'k', 'eventual')).toBe('v1');
    expect(shards.reads).toBe(1);
  });

  it('caches only the version of values kept in S3, and reads those from the store', async () => {
    const { kv, shards } = setup();
    await kv.put('ns', 'big', { value: new Uint8Array(limits.inlineValueBytesMax + 1), contentType: 'a' });
    await kv.get('ns', 'big', 'eventual');
    expect(shards.reads).toBe(1);
  });
});
