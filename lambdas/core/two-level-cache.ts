// L1 (this instance's memory) in front of L2 (Redis shared by all instances). Both are version-guarded,
// so write-through from any writer and population from any reader can only move an entry forward.
import { cacheKeyOf, type L1Cache } from './l1-cache';
import type { RemoteCache, ValueCache, CacheEntry } from '../ports';
import type { CacheMetrics } from '../ports/observability';

export class TwoLevelCache implements ValueCache {
  /** L2 writes started by reads and not finished yet. */
  private readonly backgroundWrites = new Set<Promise<unknown>>();

  constructor(
    private readonly l1: L1Cache | undefined,
    private readonly l2: RemoteCache | undefined,
    private readonly l2TtlMs: number,
    private readonly metrics?: CacheMetrics,
  ) {}

  async get(namespace: string, key: string): Promise<CacheEntry | undefined> {
    const cacheKey = cacheKeyOf(namespace, key);
    const local = this.l1?.get(cacheKey);
    if (local) {
      this.metrics?.lookedUp('l1');
      return local;
    }
    const shared = await this.l2?.get(cacheKey);
    if (shared) this.l1?.put(cacheKey, shared);
    this.metrics?.lookedUp(shared ? 'l2' : 'miss');
    return shared;
  }

  /**
   * What a read found in the database. L1 learns it at once; L2 only when this instance did not
   * already know that version (which spares strong reads of hot keys a Redis round trip), and in the
   * background: a read's answer never waits on Redis. A late L2 write is harmless (version-guarded,
   * it only moves an entry forward), and a lost one leaves L2 as a Redis outage would.
   */
  refresh(namespace: string, key: string, entry: CacheEntry): void {
    const cacheKey = cacheKeyOf(namespace, key);
    const known = this.l1?.peek(cacheKey);
    if (known && known.version >= entry.version) return;
    this.l1?.put(cacheKey, entry);
    if (!this.l2) return;
    const write: Promise<unknown> = this.l2
      .put(cacheKey, entry, this.l2TtlMs)
      .catch(() => false)
      .finally(() => this.backgroundWrites.delete(write));
    this.backgroundWrites.add(write);
  }

  /** Resolves once the L2 writes that reads started so far have finished (hosts on the way out, tests). */
  async settled(): Promise<void> {
    await Promise.all([...this.backgroundWrites]);
  }

  async put(namespace: string, key: string, entry: CacheEntry): Promise<void> {
    const cacheKey = cacheKeyOf(namespace, key);
    this.l1?.put(cacheKey, entry);
    await this.l2?.put(cacheKey, entry, this.l2TtlMs);
  }
}
