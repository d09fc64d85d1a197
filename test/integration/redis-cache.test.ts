// The L2 cache adapter against a real redis-server: the Lua version guard, and degrading to misses when
// Redis is gone. (CI installs redis-server; without it this suite fails rather than skips.)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisCache } from '../../lambdas/adapters/redis-cache';
import type { CacheEntry } from '../../lambdas/ports';
import { freePort } from '../../cdk/local/engines/free-port';
import { findRedisServer, startRedis } from '../../cdk/local/engines/redis';
import type { StartedEngine } from '../../cdk/local/engines/types';

const entry = (version: number, text?: string): CacheEntry => ({
  version,
  tombstone: text === undefined,
  contentType: 'text/plain',
  size: text?.length ?? 0,
  sha256: 'x'.repeat(64),
  ...(text === undefined ? {} : { value: new TextEncoder().encode(text) }),
});

describe('RedisCache', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ringstore-redis-'));
  let redis: StartedEngine;
  let cache: RedisCache;

  beforeAll(async () => {
    const server = findRedisServer();
    if (!server) throw new Error('redis-server is not installed (apt-get install redis-server)');
    redis = await startRedis({ redisServer: server, dataDir, port: await freePort() });
    cache = new RedisCache(redis.endpoint, `test-${process.pid}:`);
  });

  afterAll(async () => {
    await cache.close();
    await redis.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('round-trips values, metadata and tombstones', async () => {
    await cache.put('ns\u0000a', { ...entry(3, 'hello'), expiresAtSeconds: 2_000_000_000 }, 60_000);
    expect(await cache.get('ns\u0000a')).toEqual({ ...entry(3, 'hello'), expiresAtSeconds: 2_000_000_000 });
    await cache.put('ns\u0000a', entry(4), 60_000);
    expect(await cache.get('ns\u0000a')).toEqual(entry(4));
    expect(await cache.get('ns\u0000missing')).toBeUndefined();
  });

  it('never replaces an entry with an older or equal version, whatever the arrival order', async () => {
    const versions = [5, 2, 9, 7, 9, 1, 8];
    await Promise.all(versions.map((v) => cache.put('ns\u0000race', entry(v, `v${v}`), 60_000)));
    expect((await cache.get('ns\u0000race'))?.version).toBe(9);
    expect(await cache.put('ns\u0000race', entry(9, 'other'), 60_000)).toBe(false);
    expect(new TextDecoder().decode((await cache.get('ns\u0000race'))?.value)).toBe('v9');
    expect(cache.stats.writesRejectedAsOlder).toBeGreaterThan(0);
  });

  it('expires entries after the TTL it was given', async () => {
    await cache.put('ns\u0000short', entry(1, 'x'), 50);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(await cache.get('ns\u0000short')).toBeUndefined();
  });

  it('turns an outage into misses, never into errors', async () => {
    await cache.put('ns\u0000kept', entry(1, 'x'), 60_000);
    await redis.stop();
    expect(await cache.get('ns\u0000kept')).toBeUndefined();
    expect(await cache.put('ns\u0000kept', entry(2, 'y'), 60_000)).toBe(false);
    expect(cache.stats.errors).toBeGreaterThanOrEqual(2);
  });
});
