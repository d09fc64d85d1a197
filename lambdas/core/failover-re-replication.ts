// After a failover's hand-over (docs/failover.md, "Re-replication"): a handed-over range left with fewer than
// RF live replicas gets the next available shard as a replica, backfilled from its owner.
import { forAllBounded } from './bounded';
import { reReplicationPlan, withAddedReplicas, withReadyReplicas } from './failover';
import type { FailoverDeps } from './failover-context';
import { Ring, readRingState } from './ring';
import type { Clock } from '../ports';

/** What re-replication did (the failover's report). */
export interface ReReplication {
  /** Replicas added, per range (end token and shard). */
  added: Array<{ end: number; shard: number }>;
  /** Versions the added replicas were backfilled with from their range's owner. */
  copied: number;
  /** Whether they count as copies now. */
  ready: boolean;
}

export class ReReplicator {
  constructor(private readonly deps: Pick<FailoverDeps, 'rings' | 'shards' | 'health' | 'clock' | 'sleep' | 'limits'>) {}

  /**
   * After the hand-over: each handed-over range that has fewer than RF live replicas gets the next
   * available shard in walk order as a replica (one ring write), which takes every write from then on
   * (after a lease wait, every handler routes with it), is backfilled from the range's owner, and then
   * counts as a copy (one ring write). Run again, it adds nothing twice and copies only what is missing.
   */
  async reReplicate(failed: number, ends: readonly number[], by: string): Promise<ReReplication> {
    for (;;) {
      const state = await readRingState(this.deps.rings);
      const ring = new Ring(state);
      const health = await this.deps.health.all();
      const rejoining = new Set((state.rejoining ?? []).map((entry) => entry.shard));
      const available = (shard: number) =>
        !rejoining.has(shard) && (health.get(ring.shard(shard).table)?.status ?? 'available') === 'available';
      const plan = reReplicationPlan(state, failed, ends, by, available);
      if (plan.length === 0) break;
      if (await this.deps.rings.publishRing(withAddedReplicas(state, plan))) {
        await this.deps.sleep(this.deps.limits.leaseWaitMs);
        break;
      }
    }
    const state = await readRingState(this.deps.rings);
    const ring = new Ring(state);
    const mine = (state.addedReplicas ?? []).filter((replica) => replica.failover === by);
    let copied = 0;
    for (const replica of mine.filter((candidate) => !candidate.ready)) {
      const range = ring.rangeOf(replica.end);
      const ownerTable = ring.shard(range.owner).table;
      const table = ring.shard(replica.shard).table;
      const [theirs, held] = await Promise.all([
        this.deps.shards.versionsInRange(ownerTable, range),
        this.deps.shards.versionsInRange(table, range),
      ]);
      const versions = new Map(held.map((entry) => [`${entry.namespace}#${entry.key}`, entry.version]));
      const behind = theirs.filter((entry) => (versions.get(`${entry.namespace}#${entry.key}`) ?? 0) < entry.version);
      await forAllBounded(behind, this.deps.limits.catchUpConcurrency, async (entry) => {
        // Read consistently from the owner, copied with the version guard: the backfill never moves a copy back.
        const item = await this.deps.shards.get(ownerTable, entry.namespace, entry.key, { consistent: true });
        if (item && (await this.deps.shards.applyReplica(table, item, { nowSeconds: nowSecondsOf(this.deps.clock), listed: false })))
          copied += 1;
      });
    }
    for (;;) {
      const now = await readRingState(this.deps.rings);
      if (!(now.addedReplicas ?? []).some((replica) => replica.failover === by && !replica.ready)) break;
      if (await this.deps.rings.publishRing(withReadyReplicas(now, by))) break;
    }
    return { added: mine.map(({ end, shard }) => ({ end, shard })), copied, ready: true };
  }
}

function nowSecondsOf(clock: Pick<Clock, 'nowMs'>): number {
  return Math.floor(clock.nowMs() / 1000);
}
