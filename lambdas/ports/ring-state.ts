// The ring as the control table stores it: shards, replication factor, virtual nodes, the fencing epoch,
// and what failovers changed: ranges handed to another owner, and ranges fenced while one runs.

/**
 * `active`: on the ring. During a rebalance (docs/rebalancing.md) a shard being added is `joining` (its
 * ranges move to it one by one) and one being removed is `leaving` (its ranges move to their successors).
 */
export type ShardStatus = 'active' | 'joining' | 'leaving';

export interface RingShard {
  id: number;
  table: string;
  status: ShardStatus;
}

/**
 * A token range whose ownership a failover moved: the range ending at vnode token `end` is owned by
 * `owner`, one of the replicas the vnode walk gives it (the others stay its replicas, in walk order).
 */
export interface RangeOwner {
  end: number;
  owner: number;
}

/** What the control table stores under the ring record; the epoch fences every change. */
export interface RingState {
  epoch: number;
  replicationFactor: number;
  vnodesPerShard: number;
  shards: RingShard[];
  /** Ownership a failover moved away from the vnode walk's owner (none on a fresh ring). */
  owners?: RangeOwner[];
  /**
   * Ranges (by end token) whose owner is being replaced: no write or strong read is served for them
   * until the failover publishes the next ring (they answer a retryable 503).
   */
  fenced?: number[];
  /**
   * The epoch each fence was placed at (a fence lifted and placed again has a later one): a failover's
   * hand-over is published only under the fence its election saw (docs/failover.md, "Publication").
   */
  fencedAt?: RangeFence[];
  /** Who published this ring: a failover's id (a retried step recognises its own publication). */
  changedBy?: string;
  /**
   * Shards that lost ranges to a failover and have not rejoined: when such a shard answers again it is
   * reconciled with the ranges' new owners (its stray and unreplicated copies reported and replaced)
   * before it serves reads; the entry goes once that is done (docs/failover.md, "Return").
   */
  rejoining?: RejoinEntry[];
  /**
   * Replicas a failover added to bring a range back to the replication factor while its failed shard is
   * away (docs/failover.md, "Re-replication"). Each takes every write at once; it counts as a copy (acks,
   * reads, elections) only once `ready`, after its backfill. The failed shard's rejoin removes them.
   */
  addedReplicas?: AddedReplica[];
  /** The rebalance in progress (its id): set from its start to its finish, while any shard joins or leaves. */
  rebalance?: string;
  /**
   * The ranges of that rebalance whose move has begun, by end token on the ring of every shard (joining and
   * leaving ones included). A range that changes replicas and is not listed still has its previous ones.
   */
  moves?: RangeMove[];
}

/**
 * `copying`: the previous replicas serve the range and the new ones take every write while the range is
 * copied to them; `moved`: the new replicas serve it (the cut-over), the previous ones no longer take writes.
 */
export type MovePhase = 'copying' | 'moved';

export interface RangeMove {
  end: number;
  phase: MovePhase;
}

export interface RangeFence {
  end: number;
  epoch: number;
}

export interface AddedReplica {
  /** The range, by its end token. */
  end: number;
  shard: number;
  /** The failover that added it (its rejoin removes it). */
  failover: string;
  /** Backfilled: it counts as a copy. */
  ready: boolean;
}

export interface RejoinEntry {
  shard: number;
  /** The failover that took the ranges (its record receives the rejoin's report). */
  failover: string;
  /** The ranges it lost, by end token. */
  ends: number[];
}
