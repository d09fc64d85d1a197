// The ring a handler routes with: read from the control table, cached per instance, never older than
// what it has seen (a lagging read cannot bring back an older epoch).
//
// Fencing (docs/failover.md). A failover first publishes a ring that fences the failed owner's ranges,
// then waits out the ring lease before it hands them to a new owner. A write or strong read is routed
// with a leased ring (read at most `leaseMs` ago, by this process's monotonic clock) and is answered
// only if, once its request returned, the lease still held or a fresh read shows the same owner for
// its token. So a handler holding an old ring, even one paused for minutes between routing and
// sending, can never acknowledge a write on a shard that lost the range: either the fence was
// published after its ring was read, and the answer comes within the lease, before the new owner
// takes writes; or its check after the request sees the new ring and refuses.
import type { Clock, RingStore } from '../ports';
import { RingstoreError } from './errors';
import { Ring } from './ring';

/** A ring and when it was read (monotonic ms of this process): what a write or strong read is routed by. */
export interface RingLease {
  ring: Ring;
  readAtMs: number;
}

/** The current ring, cached and refreshed when its epoch may have moved. */
export interface RingSource {
  current(): Promise<Ring>;
  /** A ring read within the lease (re-read first when older), to route a write or strong read. */
  lease(): Promise<RingLease>;
  /**
   * After the request routed by `lease` returned: true when the ring it was routed by was still current
   * (within the lease), or the current ring gives the token the same owner and does not fence it.
   */
  stillOwner(lease: RingLease, token: number): Promise<boolean>;
  /** A ring read that started after this call (the cache takes it too): what a request waiting on a fence polls. */
  fresh(): Promise<RingLease>;
  /**
   * After a strong read a rebalance's cut-over fence did not hold back: true when a ring read that started
   * after the read returned still gives the token the lease's owner. Until the cut-over publishes its new
   * owner, that owner took no write, so the old owner held every acknowledged version when it answered.
   */
  ownerUnchangedSince(lease: RingLease, token: number): Promise<boolean>;
}

/** Bounded staleness of a handler's ring for eventual reads and listings: how long a cached ring is trusted. */
export const ringRefreshMs = 5_000;

/**
 * How long a ring read stays good for acknowledging writes and strong reads. A failover waits this long
 * (plus ringLeaseMarginMs) between fencing a range and handing it over. Shorter: faster failovers and
 * more control-table reads (two per lease per busy handler instance).
 */
export const ringLeaseMs = 500;

/** What a failover waits beyond the lease: clock rate drift between processes and scheduling slack. */
export const ringLeaseMarginMs = 200;

/**
 * The lease of a ring that shows a rebalance copying ranges to new owners (Ring.copyingToNewOwners). A
 * cut-over fences its ranges and waits out this lease and its margin, rather than ringLeaseMs: every ring
 * still trusted when the fence is published shows the ranges copying (the copying mark waited out the
 * full lease long before), so it is trusted this long at most. Writes that meet the fence wait about as
 * long. The cost: while ranges copy, a busy handler renews its ring every cutoverLeaseMs / 2.
 */
export const cutoverLeaseMs = 150;

/** How long a request waits for a range a failover fenced (its hand-over) before its retryable 503. */
export const fenceWaitMs = 2_500;

/**
 * How long a write waits for a range a rebalance fenced (its cut-over; strong reads are not held back): about
 * a second normally, more when the cut-over's step crashed under the fence and is retried; well inside the
 * handlers' timeouts (28 s). A failover's fence is waited less: a quick retryable 503 serves its clients better.
 */
export const cutoverFenceWaitMs = 10_000;

/** How often a request waiting on a fence reads the ring again (a fresh read each time: RingSource.fresh). */
export const fencePollMs = 100;

/** How long a ring read is trusted for routing writes and strong reads: shorter while ranges copy to new owners. */
export function leaseMsOf(ring: Ring, leaseMs = ringLeaseMs): number {
  return ring.copyingToNewOwners ? Math.min(leaseMs, cutoverLeaseMs) : leaseMs;
}

/**
 * The ring from the control table, cached per handler instance and re-read after `refreshMs`.
 * Concurrent callers share one in-flight read. Leases are refreshed ahead of expiry in the background,
 * so a busy instance's writes rarely wait for a ring read.
 */
export class CachedRingSource implements RingSource {
  private cached?: RingLease;
  private inFlight?: Promise<RingLease>;

  constructor(
    private readonly store: Pick<RingStore, 'readRing'>,
    private readonly clock: Clock,
    private readonly refreshMs = ringRefreshMs,
    private readonly leaseMs = ringLeaseMs,
  ) {}

  async current(): Promise<Ring> {
    return (await this.within(this.refreshMs)).ring;
  }

  async lease(): Promise<RingLease> {
    return this.within(this.cached ? leaseMsOf(this.cached.ring, this.leaseMs) : this.leaseMs);
  }

  async stillOwner(lease: RingLease, token: number): Promise<boolean> {
    if (this.clock.monotonicMs() - lease.readAtMs < leaseMsOf(lease.ring, this.leaseMs)) return true;
    const { ring } = await this.reload();
    return ring.epoch === lease.ring.epoch || (ring.ownerOf(token).id === lease.ring.ownerOf(token).id && !ring.isFenced(token));
  }

  async fresh(): Promise<RingLease> {
    const calledAtMs = this.clock.monotonicMs();
    // An in-flight read may have started before the call: then one more, started after it.
    const shared = await this.reload();
    return shared.readAtMs >= calledAtMs ? shared : this.reload();
  }

  async ownerUnchangedSince(lease: RingLease, token: number): Promise<boolean> {
    const calledAtMs = this.clock.monotonicMs();
    const now = await this.fresh();
    // A read that lagged behind the cached epoch proves nothing about the ring after the call.
    return now.readAtMs >= calledAtMs && now.ring.ownerOf(token).id === lease.ring.ownerOf(token).id;
  }

  private async within(ageMs: number): Promise<RingLease> {
    const cached = this.cached;
    const age = cached ? this.clock.monotonicMs() - cached.readAtMs : Infinity;
    if (cached && age < ageMs) {
      // Half-way through the lease, a background read renews it, so steady traffic never waits.
      if (age >= leaseMsOf(cached.ring, this.leaseMs) / 2) void this.reload().catch(() => undefined);
      return cached;
    }
    return this.reload();
  }

  private reload(): Promise<RingLease> {
    this.inFlight ??= this.load().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async load(): Promise<RingLease> {
    // The lease starts before the read is sent: the ring it returns was current at some instant after that.
    const readAtMs = this.clock.monotonicMs();
    const state = await this.store.readRing();
    if (!state) throw new RingstoreError('internal', 'ring read failed: no ring in the control table: run the bootstrap');
    // A re-read never goes back in time: a lagging read cannot replace a newer epoch.
    if (this.cached && this.cached.ring.epoch > state.epoch) return this.cached;
    const ring = this.cached?.ring.epoch === state.epoch ? this.cached.ring : new Ring(state);
    this.cached = { ring, readAtMs };
    return this.cached;
  }
}
