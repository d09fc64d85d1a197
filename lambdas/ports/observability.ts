// What the core reports for operators beyond replication, failover and DR (docs/operations.md, "Metrics"):
// the value cache's lookups and the hints waiting per shard. Adapters publish them as CloudWatch metrics.

/** The cache level that answered an eventual read. */
export type CacheLevel = 'l1' | 'l2';

export interface CacheMetrics {
  /** An eventual read looked in the caches: the level that held the key, or `miss` (the read goes to a shard). */
  lookedUp(result: CacheLevel | 'miss'): void;
}

export interface HintBacklogMetrics {
  /** Hints waiting for `target` (a shard table) after a maintenance run's replay: the failure log's backlog. */
  hintsPending(target: string, count: number): void;
}
