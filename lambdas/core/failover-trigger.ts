// The automatic start of a failover (docs/failover.md): shard health that, when a request marks a shard
// unavailable, also starts the failover of that shard if it owns token ranges. The workflow itself
// confirms the failure with its own probes, so a single slow answer never moves a range.
import type { FailoverStarter, ShardHealth, ShardHealthStore } from '../ports';
import type { RingSource } from './ring-source';

/**
 * What every failover id starts with: the shard and the ring epoch it was asked for on (an admin's request,
 * failover-requests.ts, and the automatic start below), so one run per shard and epoch names itself alike.
 */
export function failoverIdBase(shard: number, epoch: number): string {
  return `shard-${shard}-epoch-${epoch}`;
}

/** At most one automatic failover per shard, ring epoch and minute (a failover that found the shard up may run again later). */
export function automaticFailoverId(shard: number, epoch: number, nowMs: number): string {
  return `${failoverIdBase(shard, epoch)}-auto-${Math.floor(nowMs / 60_000)}`;
}

/**
 * Starts the failover of the shard behind `table` if it owns token ranges (a no-op for one that owns none,
 * and for a failover of the same shard, epoch and minute already started). Returns whether one started.
 */
export async function startAutomaticFailover(
  ring: RingSource,
  starter: FailoverStarter,
  table: string,
  reason: string,
  nowMs: number,
): Promise<boolean> {
  // A fresh read, not the cached ring: a failover that just handed the shard's ranges over leaves a cached ring
  // showing them still owned for up to its refresh, and a second failover of the shard would start on it.
  const current = (await ring.fresh()).ring;
  const shard = current.shards.find((candidate) => candidate.table === table);
  if (!shard || !current.ownsAnyRange(shard.id)) return false;
  return starter.start({
    id: automaticFailoverId(shard.id, current.epoch, nowMs),
    shard: shard.id,
    reason: `automatic: ${reason}`,
    requestedAtMs: nowMs,
  });
}

export class FailoverOnUnavailable implements ShardHealthStore {
  constructor(
    private readonly inner: ShardHealthStore,
    private readonly ring: RingSource,
    private readonly starter: FailoverStarter,
    private readonly onError: (error: unknown) => void,
  ) {}

  all(): Promise<Map<string, ShardHealth>> {
    return this.inner.all();
  }

  beginRecovery(table: string, nowMs: number): Promise<boolean> {
    return this.inner.beginRecovery(table, nowMs);
  }

  completeRecovery(table: string, nowMs: number): Promise<boolean> {
    return this.inner.completeRecovery(table, nowMs);
  }

  async markUnavailable(table: string, reason: string, nowMs: number): Promise<void> {
    await this.inner.markUnavailable(table, reason, nowMs);
    try {
      await startAutomaticFailover(this.ring, this.starter, table, reason, nowMs);
    } catch (error) {
      // The request that met the outage answers as it would have; the probe or an admin starts the failover.
      this.onError(error);
    }
  }
}
