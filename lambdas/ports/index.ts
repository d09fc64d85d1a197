// The ground floor: the few methods the core needs from the outside world, and the data types they
// speak in. Adapters implement these; the core imports them; nothing here imports the core.

export type { CacheEntry } from './cache-entry';
export type { Consistency } from './consistency';
export * from './faults';
export type { BlobPointer, Intent, KeySummary, StoredItem, TxnWriter } from './item';
export type * from './orchestrator';
export type * from './quotas';
export type * from './audit';
export type * from './dr';
export type * from './rebalance';
export type {
  AddedReplica,
  MovePhase,
  RangeFence,
  RangeMove,
  RangeOwner,
  RejoinEntry,
  RingShard,
  RingState,
  ShardStatus,
} from './ring-state';
export type * from './runtime';
export type * from './shard';
export type * from './transactions';
export type * from './replicas';
export type * from './namespace-settings';
export type * from './failover';
export type * from './blob';
export type * from './ring-store';
export type * from './access';
export type * from './cache';
export type * from './job-state';
export type * from './watch';
