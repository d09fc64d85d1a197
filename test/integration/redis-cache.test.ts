// The L2 cache adapter against a real redis-server that, like ElastiCache, lets in only its ACL user: the
// Lua version guard, the ACL refusals, and degrading to misses when Redis is gone. (CI installs
// redis-server; without it this suite fails rather than skips.)
import Redis from 'ioredis';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PasswordSource } from '../../lambdas/adapters/elasticache-iam-token';
import { RedisCache } from '../../lambdas/adapters/redis-cache';
import type { CacheEntry } from '../../lambdas/ports';
import { freePort } from '../../cdk/local/engines/free-port';
import { findRedisServer, startRedis, type StartedRedis } from '../../cdk/local/engines/redis';
import { cacheAcl } from '../../schemas/topology';

const entry = (version: number, text?: string): CacheEntry => ({
  version,
  tombstone: text === undefined,
  contentType: 'text/plain',
  size: text?.length ?? 0,
  sha256: 'x'.repeat(64),
  ...(text === undefined ? {} : { value: new TextEncoder().encode(text) }),
});

/** The first reply line redis-server sends to one inline command on a fresh connection. */
function firstReply(endpoint: string, command: string): Promise<string> {
  const { hostname, port } = new URL(endpoint);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(`${command}\r\n`));
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString('utf8');
      if (received.includes('\r\n')) {
        socket.destroy();
        resolve(received.split('\r\n')[0] ?? '');
      }
    });
    socket.on('error', reject);
  });
}

/** `attempt`'s answer once it is true, or false after 10 s of asking. */
async function untilTrue(attempt: () => Promise<boolean>): Promise<boolean> {
  for (const deadline = Date.now() + 10_000; ;) {
    if (await attempt()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('RedisCache', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ringstore-redis-'));
  let redis: StartedRedis;
  let cache: RedisCache;
  /** A plain client, closed after each test that makes one. */
  let raw: Redis | undefined;
  const rawClient = (options: { username: string; password: string }): Redis => {
    raw = new Redis(redis.endpoint, { ...options, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    raw.on('error', () => {}); // each test asserts on the command's rejection
    return raw;
  };

  beforeAll(async () => {
    const server = findRedisServer();
    if (!server) throw new Error('redis-server is not installed (apt-get install redis-server)');
    redis = await startRedis({ redisServer: server, dataDir, port: await freePort() });
    cache = new RedisCache(redis.endpoint, { keyPrefix: `${cacheAcl.keyPrefix}test-${process.pid}:`, auth: redis.credentials });
  });

  afterEach(() => {
    raw?.disconnect();
    raw = undefined;
  });

  afterAll(async () => {
    await cache.close();
    await redis.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses a client that does not authenticate, and a wrong password', async () => {
    // Act: what any process that reaches the port would send
    const anonymous = await firstReply(redis.endpoint, `GET ${cacheAcl.keyPrefix}x`);
    const wrong = await firstReply(redis.endpoint, `AUTH ${redis.credentials.username} not-the-password`);
    const asDefault = await firstReply(redis.endpoint, `AUTH default ${redis.credentials.password}`);

    // Assess
    expect(anonymous).toMatch(/^-NOAUTH/);
    expect(wrong).toMatch(/^-WRONGPASS/);
    expect(asDefault).toMatch(/^-WRONGPASS/);
  });

  it("keeps the authenticated user to the cache's keys and commands", async () => {
    // Prepare
    const client = rawClient(redis.credentials);
    await client.connect();

    // Act / Assess: its own keys, yes; any other key, a flush, the configuration, no
    await expect(client.hset(`${cacheAcl.keyPrefix}own`, 'v', '1')).resolves.toBe(1);
    await expect(client.hset('other:key', 'v', '1')).rejects.toThrow(/NOPERM/);
    await expect(client.flushall()).rejects.toThrow(/NOPERM/);
    await expect(client.config('GET', 'requirepass')).rejects.toThrow(/NOPERM/);
    await expect(client.keys('*')).rejects.toThrow(/NOPERM/);
  });

  it('authenticates with a password that a source renews (as an IAM token is), from its first connection', async () => {
    // Prepare: the source hands out the password, as ElastiCacheIamToken hands out tokens
    let asked = 0;
    const source: PasswordSource = {
      password: () => {
        asked += 1;
        return Promise.resolve(redis.credentials.password);
      },
    };
    const renewed = new RedisCache(redis.endpoint, { auth: { username: redis.credentials.username, password: source } });

    // Act: the first command waits for the first connection, up to its bound (redisConnectTimeoutMs), and each
    // command has 50 ms; on a machine too busy for those, a command is a miss, as designed, so each is sent again
    // until it succeeds (bounded). A password that never authenticates never stores.
    const stored = await untilTrue(() => renewed.put('ns\u0000renewed', entry(1, 'x'), 60_000));
    const read = await untilTrue(async () => (await renewed.get('ns\u0000renewed'))?.version === 1);
    await renewed.close();

    // Assess
    expect(stored).toBe(true);
    expect(read).toBe(true);
    expect(asked).toBeGreaterThanOrEqual(2);
  });

  it('turns a refused password into misses, never into errors', async () => {
    // Prepare
    const refused = new RedisCache(redis.endpoint, { auth: { username: redis.credentials.username, password: 'not-the-password' } });

    // Act
    const stored = await refused.put('ns\u0000refused', entry(1, 'x'), 60_000);
    const read = await refused.get('ns\u0000refused');
    await refused.close();

    // Assess
    expect([stored, read]).toEqual([false, undefined]);
    expect(refused.stats.errors).toBe(2);
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
