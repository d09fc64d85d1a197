// The ElastiCache stand-in: redis-server from the machine, memory only, LRU-bounded, and like ElastiCache
// closed to anyone without credentials: one ACL user with a password made for this start (docs/security.md).
import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { cacheAccessString, cacheAcl } from '../../../schemas/topology';
import { spawnManaged, which } from './child';
import { LOCAL_HOST } from './free-port';
import { waitReady } from './ready';
import type { StartedEngine } from './types';

/** Memory bound of the local cache; eviction keeps it a cache, as on ElastiCache. */
export const REDIS_MAX_MEMORY = '256mb';
const PROBE_TIMEOUT_MS = 1_000;

/** The local cache's ACL user, as ElastiCache's is named for a stage's prefix. */
export const localRedisUser = cacheAcl.userName('ringstore-local');

/** Credentials of the local cache's one user; the `default` user is off. */
export interface RedisCredentials {
  username: string;
  password: string;
}

export interface StartedRedis extends StartedEngine {
  credentials: RedisCredentials;
}

/** Path of redis-server on PATH, or undefined (then the L2 cache is off). @example findRedisServer() */
export function findRedisServer(): string | undefined {
  return which('redis-server');
}

/**
 * Arguments for a throwaway redis-server on 127.0.0.1:`port`: no RDB snapshots, no AOF,
 * `allkeys-lru` under {@link REDIS_MAX_MEMORY}; the `default` user off and `credentials`' user allowed
 * what ElastiCache's is ({@link cacheAccessString}).
 *
 * @example
 * redisServerArgs(6379, { username: localRedisUser, password: 'p' })
 */
export function redisServerArgs(port: number, credentials: RedisCredentials): string[] {
  return [
    // Each word its own argument: redis-server quotes an argument that holds a space.
    '--user',
    'default',
    'off',
    '--user',
    credentials.username,
    ...cacheAccessString.split(' '),
    `>${credentials.password}`,
    '--bind',
    LOCAL_HOST,
    '--port',
    String(port),
    '--save',
    '',
    '--appendonly',
    'no',
    '--maxmemory',
    REDIS_MAX_MEMORY,
    '--maxmemory-policy',
    'allkeys-lru',
    '--daemonize',
    'no',
    '--loglevel',
    'warning',
  ];
}

async function ping(port: number, credentials: RedisCredentials): Promise<void> {
  const client = new Redis({
    host: LOCAL_HOST,
    port,
    ...credentials,
    lazyConnect: true,
    connectTimeout: PROBE_TIMEOUT_MS,
    commandTimeout: PROBE_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  client.on('error', () => {}); // reported through the rejected connect/ping
  try {
    await client.connect();
    // ioredis types the reply as 'PONG'; a server that answers otherwise is what this check is for.
    const reply: string = await client.ping();
    if (reply !== 'PONG') throw new Error(`unexpected PING reply ${reply}`);
  } finally {
    client.disconnect();
  }
}

/**
 * Starts `redisServer` on 127.0.0.1:`port` with a fresh password for {@link localRedisUser}, and resolves
 * once that user's PING answers.
 *
 * @example
 * const redis = await startRedis({ redisServer: findRedisServer()!, dataDir, port: 6379 });
 * new RedisCache(redis.endpoint, { auth: redis.credentials });
 */
export async function startRedis(opts: { redisServer: string; dataDir: string; port: number; timeoutMs?: number }): Promise<StartedRedis> {
  // Working directory only: nothing is persisted, but redis-server wants a writable cwd.
  await mkdir(opts.dataDir, { recursive: true });
  const credentials: RedisCredentials = { username: localRedisUser, password: randomBytes(24).toString('hex') };
  const child = spawnManaged('redis-server', opts.redisServer, redisServerArgs(opts.port, credentials), { cwd: opts.dataDir });
  try {
    await waitReady({ name: 'redis-server', child, probe: () => ping(opts.port, credentials), timeoutMs: opts.timeoutMs });
  } catch (e) {
    await child.stop();
    throw e;
  }
  return { name: 'redis', endpoint: `redis://${LOCAL_HOST}:${opts.port}`, credentials, stop: () => child.stop() };
}
