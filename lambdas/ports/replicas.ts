// Keeping replicas in line: the failure log of hinted handoff, each shard's health, and the replication
// observations published as metrics (docs/consistency.md).
import type { StoredItem } from './item';

/** A replica write that could not be made: replayed on the replica before it serves reads again. */
export interface Hint {
  /** The replica's table. */
  target: string;
  item: StoredItem;
  createdAtMs: number;
}

/** The failure log (the `hints` table). */
export interface HintStore {
  add(hint: Hint): Promise<void>;
  /** The oldest hints of a target in (key, version) order, at most `limit`. */
  list(target: string, limit: number): Promise<Hint[]>;
  remove(hint: Hint): Promise<void>;
  /** Hints waiting per target (bounded count, for status pages). */
  count(target: string): Promise<number>;
}

export type ShardHealthStatus = 'available' | 'unavailable' | 'recovering';

export interface ShardHealth {
  table: string;
  status: ShardHealthStatus;
  sinceMs: number;
  reason?: string;
}

/** Which shards may serve reads: a shard marked unavailable serves again only after its hints are replayed. */
export interface ShardHealthStore {
  /** Every shard with a health record; a shard without one is available. Adapters may cache briefly. */
  all(): Promise<Map<string, ShardHealth>>;
  markUnavailable(table: string, reason: string, nowMs: number): Promise<void>;
  /** unavailable -> recovering; false when the shard was not unavailable. */
  beginRecovery(table: string, nowMs: number): Promise<boolean>;
  /** recovering -> available; false when someone marked it unavailable again meanwhile. */
  completeRecovery(table: string, nowMs: number): Promise<boolean>;
}

/** Replication observations (lag, hints, repairs); adapters publish them as metrics. */
export interface ReplicationMetrics {
  replicaApplied(lagMs: number): void;
  hintWritten(target: string): void;
}
