// L2 cache on Redis (ElastiCache in AWS, redis-server locally): version-guarded write-through by a Lua
// script, so an entry is never replaced by an older version whatever order writers arrive in.
// It never throws: a Redis outage turns every call into a miss and reads go to DynamoDB.
import Redis from 'ioredis';
import type { CacheEntry, RemoteCache } from '../ports';

/** A bounded wait: a slow or absent Redis costs a read at most this, then it is a miss. */
export const redisCommandTimeoutMs = 50;
export const redisConnectTimeoutMs = 500;

// KEYS[1]: the entry; ARGV: version, payload, ttl ms. Compares and writes atomically inside Redis.
const guardedSetLua = `
local current = redis.call('HGET', KEYS[1], 'v')
if current and tonumber(current) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'p', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`;

type GuardedRedis = Redis & { guardedSet(key: string, version: number, payload: Buffer, ttlMs: number): Promise<number> };

interface Header {
  tombstone: boolean;
  contentType: string;
  size: number;
  sha256: string;
  expiresAtSeconds?: number;
  hasValue: boolean;
}

/** payload = 4-byte header length, header JSON, value bytes: one field, one round trip. */
export function encodeEntry(entry: CacheEntry): Buffer {
  const header: Header = {
    tombstone: entry.tombstone,
    contentType: entry.contentType,
    size: entry.size,
    sha256: entry.sha256,
    hasValue: entry.value !== undefined,
    ...(entry.expiresAtSeconds === undefined ? {} : { expiresAtSeconds: entry.expiresAtSeconds }),
  };
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(headerBytes.length);
  return Buffer.concat([length, headerBytes, entry.value ?? Buffer.alloc(0)]);
}

export function decodeEntry(version: number, payload: Buffer): CacheEntry {
  const headerLength = payload.readUInt32BE(0);
  const header = JSON.parse(payload.subarray(4, 4 + headerLength).toString('utf8')) as Header;
  return {
    version,
    tombstone: header.tombstone,
    contentType: header.contentType,
    size: header.size,
    sha256: header.sha256,
    ...(header.expiresAtSeconds === undefined ? {} : { expiresAtSeconds: header.expiresAtSeconds }),
    ...(header.hasValue ? { value: new Uint8Array(payload.subarray(4 + headerLength)) } : {}),
  };
}

export interface RedisCacheStats {
  hits: number;
  misses: number;
  errors: number;
  writesRejectedAsOlder: number;
}

export class RedisCache implements RemoteCache {
  readonly stats: RedisCacheStats = { hits: 0, misses: 0, errors: 0, writesRejectedAsOlder: 0 };
  private readonly redis: GuardedRedis;
  /** Commands wait for the first connection (bounded), then fail fast whenever Redis is away. */
  private readonly firstConnection: Promise<void>;

  constructor(
    url: string,
    private readonly keyPrefix = 'rs:',
  ) {
    const redis = new Redis(url, {
      lazyConnect: false,
      // Fail fast while disconnected instead of queueing: a miss beats a stalled read.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: redisCommandTimeoutMs,
      connectTimeout: redisConnectTimeoutMs,
      // Reconnect in the background with a capped backoff.
      retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 2_000),
    });
    redis.on('error', () => {
      // Counted per failed command; connection errors alone need no handling (reconnects are automatic).
    });
    redis.defineCommand('guardedSet', { lua: guardedSetLua, numberOfKeys: 1 });
    this.redis = redis as GuardedRedis;
    this.firstConnection = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, redisConnectTimeoutMs);
      timer.unref();
      redis.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  async get(cacheKey: string): Promise<CacheEntry | undefined> {
    await this.firstConnection;
    try {
      const [version, payload] = await this.redis.hmgetBuffer(this.keyPrefix + cacheKey, 'v', 'p');
      if (!version || !payload) {
        this.stats.misses += 1;
        return undefined;
      }
      this.stats.hits += 1;
      return decodeEntry(Number(version.toString()), payload);
    } catch {
      this.stats.errors += 1;
      return undefined;
    }
  }

  async put(cacheKey: string, entry: CacheEntry, ttlMs: number): Promise<boolean> {
    await this.firstConnection;
    try {
      const stored = await this.redis.guardedSet(this.keyPrefix + cacheKey, entry.version, encodeEntry(entry), ttlMs);
      if (stored === 0) this.stats.writesRejectedAsOlder += 1;
      return stored === 1;
    } catch {
      this.stats.errors += 1;
      return false;
    }
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
