// The value caches: the shared L2 (Redis/ElastiCache) and the read cache the KV service consults.
import type { CacheEntry } from './cache-entry';

/** The shared cache (L2: Redis/ElastiCache). Implementations never throw: a failure is a miss. */
export interface RemoteCache {
  get(cacheKey: string): Promise<CacheEntry | undefined>;
  /** Version-guarded: stores only if the cache holds no version >= entry.version. */
  put(cacheKey: string, entry: CacheEntry, ttlMs: number): Promise<boolean>;
}

/** The read cache the KV service consults for eventual reads and writes through on every write. */
export interface ValueCache {
  get(namespace: string, key: string): Promise<CacheEntry | undefined>;
  /** Write-through of a write: always reaches every level. */
  put(namespace: string, key: string, entry: CacheEntry): Promise<void>;
  /**
   * Population by a read; may skip levels that already hold this version. Returns at once: this
   * instance's level holds the entry on return, a shared level learns it in the background.
   */
  refresh(namespace: string, key: string, entry: CacheEntry): void;
}
