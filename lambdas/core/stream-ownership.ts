// Which of a shard stream's writes are in their key's history (docs/rebalancing.md, "What the shard streams pass on"). A write
// normally comes from its range's owner. One from a table that has since lost the range (a rebalance's cut-over, a
// failover) may be a write that landed after the fenced catch-up read that table: it was refused to its client
// (ownerMovedAbort, a plain write's reroute) and stays behind, and the new owner may reuse its version with other
// contents. Every consumer of the streams (the replicator, the change feed, the DR shipper) weighs the writes it
// passes on here, so that such a write reaches no replica, no watcher and no backup region.
import type { Ring } from './ring';
import { cutoverFenceWaitMs, fencePollMs, type RingSource } from './ring-source';
import type { Clock, HeldVersion, ShardItemReads, StoredItem } from '../ports';

/** A write a shard's stream carried: the table it was made on and the item it left there. */
export interface TableWrite {
  sourceTable: string;
  item: StoredItem;
}

/**
 * Where a write stands in its key's history. `owner`: its range's owner made it. `carried`: a table that has since
 * lost the range made it and the range's owner holds it (the write is the key's). `notInEffect`: a table that no
 * longer owns the range made it and the owner never received it (refused to its client). `skipped`: the caller
 * asked not to weigh it (a copy, an intent).
 */
export type WriteStanding = 'owner' | 'carried' | 'notInEffect' | 'skipped';

/** The standings of a batch's writes, in its order, up to the first one that cannot be told yet. */
export interface OwnershipWeighing {
  /** The ring the writes were weighed by. */
  ring: Ring;
  /** One per write of the batch before `stoppedAt` (all of them when the weighing did not stop). */
  standings: readonly WriteStanding[];
  /**
   * The first write that could not be weighed, and why: its range is under a fence that did not lift in time
   * (`fence`, expected during every cut-over and failover), or the range's owner could not be read (`unreadable`).
   * The stream retries from it.
   */
  stoppedAt?: WeighingStop;
}

/** Where and why a weighing stopped (OwnershipWeighing.stoppedAt). */
export interface WeighingStop {
  index: number;
  cause: 'fence' | 'unreadable';
}

/** What a consumer reports for a weighing that stopped at `stop`: the record the stream retries from, and whether a fence holds it. */
export function retryFrom(stop: WeighingStop): { firstFailedIndex: number; awaitingFence?: true } {
  return { firstFailedIndex: stop.index, ...(stop.cause === 'fence' ? { awaitingFence: true as const } : {}) };
}

export interface StreamOwnershipDeps {
  /** The ring read under a lease, as a request is routed, and afresh while a fence is waited out. */
  ring: Pick<RingSource, 'lease' | 'fresh'>;
  shards: Pick<ShardItemReads, 'heldVersion'>;
  clock: Pick<Clock, 'monotonicMs'>;
  sleep: (ms: number) => Promise<void>;
}

/** Whether a standing puts the write in its key's history. */
export function inHistory(standing: WriteStanding): boolean {
  return standing === 'owner' || standing === 'carried';
}

/**
 * Whether the write of `item` a table that no longer owns the key's range made reached the owner: the owner holds
 * this very version (same version and modified time), or a later one with every version up to this one brought by
 * copies (a move's catch-up, the stream's replication). A version the owner wrote itself, or never received, is not
 * the table's write.
 */
export function ownerCarries(held: HeldVersion | undefined, item: StoredItem): boolean {
  if (!held) return false;
  if (held.version === item.version) return held.modifiedAtMs === item.modifiedAtMs;
  return held.version > item.version && (held.copiedVersion ?? 0) >= item.version;
}

/**
 * The standings by one ring, no table read: what is read from a range's owner (an initial sync's reads) is the owner's;
 * another table's write is `skipped`, not weighed further.
 */
export function standingsByRing(writes: readonly TableWrite[], ring: Ring): OwnershipWeighing {
  return { ring, standings: writes.map(({ item, sourceTable }) => (ring.ownerOf(item.token).table === sourceTable ? 'owner' : 'skipped')) };
}

/** Weighs a stream batch's writes by the ring under a lease and, for a former owner's write, by what the owner holds. */
export class StreamOwnership {
  constructor(private readonly deps: StreamOwnershipDeps) {}

  /**
   * The standing of each write of `writes` for which `weighed` holds (the others are `skipped`), in order. The ring is
   * read under a lease: a write that landed after a fence was published and waited out is weighed by a ring showing
   * that fence or what followed it. Under a fence nothing can be told (the catch-up may still carry the write), so
   * the write waits for the fence to lift, here rather than by the stream's retries (on AWS those follow at once and
   * are counted: ten, then the batch is set aside); past cutoverFenceWaitMs it stops there. A failed ring read throws.
   */
  async weigh<Write extends TableWrite>(
    writes: readonly Write[],
    weighed: (write: Write) => boolean = () => true,
  ): Promise<OwnershipWeighing> {
    let { ring } = await this.deps.ring.lease();
    const standings: WriteStanding[] = [];
    for (const [index, write] of writes.entries()) {
      if (!weighed(write)) {
        standings.push('skipped');
        continue;
      }
      if (ring.isFenced(write.item.token)) ring = await this.fenceLifted(write.item.token);
      if (ring.isFenced(write.item.token)) return { ring, standings, stoppedAt: { index, cause: 'fence' } };
      try {
        standings.push(await this.standingOf(ring, write));
      } catch {
        return { ring, standings, stoppedAt: { index, cause: 'unreadable' } };
      }
    }
    return { ring, standings };
  }

  /** The ring once the fence over `token` is lifted, read afresh every fencePollMs, or the last ring read when it is not lifted in time. */
  private async fenceLifted(token: number): Promise<Ring> {
    const { clock } = this.deps;
    const startedMs = clock.monotonicMs();
    for (;;) {
      await this.deps.sleep(fencePollMs);
      const { ring } = await this.deps.ring.fresh();
      if (!ring.isFenced(token) || clock.monotonicMs() - startedMs >= cutoverFenceWaitMs) return ring;
    }
  }

  private async standingOf(ring: Ring, { item, sourceTable }: TableWrite): Promise<WriteStanding> {
    const owner = ring.ownerOf(item.token).table;
    if (owner === sourceTable) return 'owner';
    const held = await this.deps.shards.heldVersion(owner, item.namespace, item.key);
    return ownerCarries(held, item) ? 'carried' : 'notInEffect';
  }
}
