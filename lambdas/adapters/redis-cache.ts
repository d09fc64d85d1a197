// L2 cache on Redis (ElastiCache in AWS, redis-server locally): version-guarded write-through by a Lua
// script, so an entry is never replaced by an older version whatever order writers arrive in.
// It never throws: a Redis outage turns every call into a miss and reads go to DynamoDB.
import { cacheAcl } from '../../schemas/topology';
import type { CacheEntry, RemoteCache } from '../ports';
import type { PasswordSource } from './elasticache-iam-token';
import { RespClient } from './resp-client';

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

/**
 * How connections authenticate (docs/security.md, "The L2 cache"): as an ACL user with a fixed password (the
 * local redis-server) or with one from a source that renews it (an ElastiCache IAM token).
 */
export interface RedisAuth {
  username: string;
  password: string | PasswordSource;
}

export interface RedisCacheOptions {
  /** Prefix of every key; the ACL user may touch only keys under {@link cacheAcl}'s prefix. */
  keyPrefix?: string;
  /** Absent: no AUTH (a redis-server without ACLs). */
  auth?: RedisAuth;
  /** Told of every failed command (the cache-errors metric): callers see a miss, so nothing else would show it. */
  onError?: (operation: 'get' | 'put' | 'auth') => void;
}

export class RedisCache implements RemoteCache {
  readonly stats: RedisCacheStats = { hits: 0, misses: 0, errors: 0, writesRejectedAsOlder: 0 };
  private readonly redis: RespClient;
  /** Commands wait for the first connection (bounded), then fail fast whenever Redis is away. */
  private readonly firstConnection: Promise<void>;

  private readonly keyPrefix: string;
  private readonly passwords: PasswordSource | undefined;
  /** The password every (re)connection sends: fixed, or the source's latest. */
  private password: string | undefined;
  private readonly onError: NonNullable<RedisCacheOptions['onError']>;

  constructor(url: string, options: RedisCacheOptions = {}) {
    this.keyPrefix = options.keyPrefix ?? cacheAcl.keyPrefix;
    this.onError = options.onError ?? (() => undefined);
    const { auth } = options;
    this.passwords = typeof auth?.password === 'object' ? auth.password : undefined;
    this.password = typeof auth?.password === 'string' ? auth.password : undefined;
    const redis = new RespClient(url, {
      // With a password source, the first connection waits for its first password.
      lazyConnect: this.passwords !== undefined,
      ...(auth ? { username: auth.username } : {}),
      password: () => this.password,
      commandTimeoutMs: redisCommandTimeoutMs,
      connectTimeoutMs: redisConnectTimeoutMs,
      // Reconnect in the background with a capped backoff.
      retryDelayMs: (attempt) => Math.min(50 * 2 ** attempt, 2_000),
    });
    this.redis = redis;
    this.firstConnection = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, redisConnectTimeoutMs);
      timer.unref();
      redis.onceReady(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    if (this.passwords) {
      // A failed first connection is tried again by the client's backoff, with the password of the moment.
      void this.renewPassword(this.passwords).then(() => redis.connect());
    }
  }

  /**
   * Keeps the client's password current: every (re)connection sends the one set here, so one that happens
   * after a token expired (a reconnect after a freeze, a failover) uses a fresh one. Cheap: the source
   * signs a new token only every few minutes. A failure leaves the last one (a miss, never an error).
   */
  private async renewPassword(passwords: PasswordSource): Promise<void> {
    try {
      this.password = await passwords.password();
    } catch {
      this.failed('auth');
    }
  }

  /** Before a command: the first connection tried, and the password current. */
  private ready(): Promise<unknown> {
    return this.passwords ? Promise.all([this.firstConnection, this.renewPassword(this.passwords)]) : this.firstConnection;
  }

  async get(cacheKey: string): Promise<CacheEntry | undefined> {
    await this.ready();
    try {
      const reply = await this.redis.command(['HMGET', this.keyPrefix + cacheKey, 'v', 'p']);
      const [version, payload] = Array.isArray(reply) ? reply : [];
      if (!Buffer.isBuffer(version) || !Buffer.isBuffer(payload)) {
        this.stats.misses += 1;
        return undefined;
      }
      this.stats.hits += 1;
      return decodeEntry(Number(version.toString()), payload);
    } catch {
      this.failed('get');
      return undefined;
    }
  }

  async put(cacheKey: string, entry: CacheEntry, ttlMs: number): Promise<boolean> {
    await this.ready();
    try {
      const stored = await this.redis.evalScript(guardedSetLua, [this.keyPrefix + cacheKey], [entry.version, encodeEntry(entry), ttlMs]);
      if (stored === 0) this.stats.writesRejectedAsOlder += 1;
      return stored === 1;
    } catch {
      this.failed('put');
      return false;
    }
  }

  private failed(operation: 'get' | 'put' | 'auth'): void {
    this.stats.errors += 1;
    this.onError(operation);
  }

  async close(): Promise<void> {
    await this.redis.close();
  }
}
