// The ElastiCache stand-in: redis-server from the machine, memory only, LRU-bounded.
import Redis from 'ioredis';
import { mkdir } from 'node:fs/promises';
import { spawnManaged, which } from './child';
import { LOCAL_HOST } from './free-port';
import { waitReady } from './ready';
import type { StartedEngine } from './types';

/** Memory bound of the local cache; eviction keeps it a cache, as on ElastiCache. */
export const REDIS_MAX_MEMORY = '256mb';
const PROBE_TIMEOUT_MS = 1_000;

/** Path of redis-server on PATH, or undefined (then the L2 cache is off). @example findRedisServer() */
export function findRedisServer(): string | undefined {
  return which('redis-server');
}

/**
 * Arguments for a throwaway redis-server on 127.0.0.1:`port`: no RDB snapshots, no AOF,
 * `allkeys-lru` under {@link REDIS_MAX_MEMORY}.
 *
 * @example
 * redisServerArgs(6379)
 */
export function redisServerArgs(port: number): string[] {
  return [
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

async function ping(port: number): Promise<void> {
  const client = new Redis({
    host: LOCAL_HOST,
    port,
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
 * Starts `redisServer` on 127.0.0.1:`port` and resolves once PING answers.
 *
 * @example
 * const redis = await startRedis({ redisServer: findRedisServer()!, dataDir, port: 6379 });
 */
export async function startRedis(opts: { redisServer: string; dataDir: string; port: number; timeoutMs?: number }): Promise<StartedEngine> {
  // Working directory only: nothing is persisted, but redis-server wants a writable cwd.
  await mkdir(opts.dataDir, { recursive: true });
  const child = spawnManaged('redis-server', opts.redisServer, redisServerArgs(opts.port), { cwd: opts.dataDir });
  try {
    await waitReady({ name: 'redis-server', child, probe: () => ping(opts.port), timeoutMs: opts.timeoutMs });
  } catch (e) {
    await child.stop();
    throw e;
  }
  return { name: 'redis', endpoint: `redis://${LOCAL_HOST}:${opts.port}`, stop: () => child.stop() };
}
