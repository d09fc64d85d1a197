// ShardHealthStore with a short per-instance cache: every read path asks for shard health, so the
// control table is read at most once per refresh interval; this instance's own marks apply at once.
import type { Clock, ShardHealth, ShardHealthStore } from '../ports';

export class CachedShardHealth implements ShardHealthStore {
  private cached?: { records: Map<string, ShardHealth>; readAtMs: number };
  private inFlight?: Promise<Map<string, ShardHealth>>;

  constructor(
    private readonly store: ShardHealthStore,
    private readonly clock: Clock,
    private readonly refreshMs: number,
  ) {}

  async all(): Promise<Map<string, ShardHealth>> {
    const now = this.clock.nowMs();
    if (this.cached && now - this.cached.readAtMs < this.refreshMs) return this.cached.records;
    this.inFlight ??= this.store
      .all()
      .then((records) => {
        this.cached = { records, readAtMs: now };
        return records;
      })
      // The control table being unreachable must not fail reads: the last view (or none) stands.
      .catch(() => this.cached?.records ?? new Map<string, ShardHealth>())
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }

  async markUnavailable(table: string, reason: string, nowMs: number): Promise<void> {
    if (this.cached?.records.get(table)?.status === 'unavailable') return;
    this.remember({ table, status: 'unavailable', sinceMs: nowMs, reason });
    await this.store.markUnavailable(table, reason, nowMs);
  }

  async beginRecovery(table: string, nowMs: number): Promise<boolean> {
    const moved = await this.store.beginRecovery(table, nowMs);
    if (moved) this.remember({ table, status: 'recovering', sinceMs: nowMs });
    return moved;
  }

  async completeRecovery(table: string, nowMs: number): Promise<boolean> {
    const moved = await this.store.completeRecovery(table, nowMs);
    if (moved) this.remember({ table, status: 'available', sinceMs: nowMs });
    return moved;
  }

  /** Forgets the cached view, so the next read sees the control table. */
  invalidate(): void {
    this.cached = undefined;
  }

  private remember(record: ShardHealth): void {
    if (!this.cached) return;
    const records = new Map(this.cached.records);
    records.set(record.table, record);
    this.cached = { records, readAtMs: this.cached.readAtMs };
  }
}
