// The ring a handler routes with: read from the control table, cached per instance, never older than
// what it has seen (a lagging read cannot bring back an older epoch).
import type { Clock, RingStore } from '../ports';
import { RingstoreError } from './errors';
import { Ring } from './ring';

/** The current ring, cached and refreshed when its epoch may have moved. */
export interface RingSource {
  current(): Promise<Ring>;
}

/** Bounded staleness of a handler's ring: how long a cached ring is trusted before re-reading. */
export const ringRefreshMs = 5_000;

/**
 * The ring from the control table, cached per handler instance and re-read after `refreshMs`.
 * Concurrent callers share one in-flight read. (Fencing of writes by epoch arrives with failover.)
 */
export class CachedRingSource implements RingSource {
  private cached?: { ring: Ring; readAtMs: number };
  private inFlight?: Promise<Ring>;

  constructor(
    private readonly store: Pick<RingStore, 'readRing'>,
    private readonly clock: Clock,
    private readonly refreshMs = ringRefreshMs,
  ) {}

  async current(): Promise<Ring> {
    const now = this.clock.nowMs();
    if (this.cached && now - this.cached.readAtMs < this.refreshMs) return this.cached.ring;
    this.inFlight ??= this.load(now).finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async load(now: number): Promise<Ring> {
    const state = await this.store.readRing();
    if (!state) throw new RingstoreError('internal', 'ring read failed: no ring in the control table: run the bootstrap');
    // A re-read never goes back in time: a lagging read cannot replace a newer epoch.
    if (this.cached && this.cached.ring.epoch > state.epoch) return this.cached.ring;
    const ring = this.cached?.ring.epoch === state.epoch ? this.cached.ring : new Ring(state);
    this.cached = { ring, readAtMs: now };
    return ring;
  }
}
