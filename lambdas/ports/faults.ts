// The fault-injection vocabulary: named crash points and deliberately broken modes, and the injector the
// core asks at each point. An injector exists only in test runs; production bundles refuse to arm one.

/** Where a crash can be injected in the write and replication paths. */
export const replicationCrashPoints = [
  /** A write is about to reach the owner: nothing is stored yet. */
  'write.beforeOwner',
  /** The owner holds the new version; no replica does yet (strong writes). */
  'write.afterOwner',
  /** One replica answered; the others are still in flight (strong writes). */
  'write.afterFirstReplica',
  /** A replica was unreachable and its hint is about to be written. */
  'write.beforeHint',
  /** Hint replay applied a hint but has not removed it from the failure log. */
  'hints.duringReplay',
  /** The replicator is about to apply a stream record to a replica. */
  'replicator.beforeApply',
  /** The replicator applied a stream record to a replica and has not acknowledged the batch. */
  'replicator.afterApply',
] as const;

/** Where a crash can be injected in a transaction: the coordinator's state boundaries and a participant around its intent. */
export const transactionCrashPoints = [
  /** The coordinator wrote the pending transaction record; no intent is placed yet. */
  'txn.afterBegin',
  /** A participant is about to place an intent (or read a key). */
  'txn.beforeIntent',
  /** A participant placed an intent and has not reported it. */
  'txn.afterIntent',
  /** Every participant prepared; nothing is decided. */
  'txn.afterPrepare',
  /** The decision is written; no intent is applied or cleared yet. */
  'txn.afterDecide',
  /** A one-shard transaction's atomic write is done; the caches and a strong request's replicas are not. */
  'txn.afterAtomicCommit',
] as const;

/** Where a crash can be injected in a failover's steps (docs/failover.md). */
export const failoverCrashPoints = [
  /** The failure is confirmed and recorded; nothing is fenced yet. */
  'failover.afterConfirm',
  /** The failed shard's ranges are fenced; the lease wait has not begun. */
  'failover.afterFence',
  /** A range's new owner is elected; nothing is copied to it yet. */
  'failover.afterElection',
  /** A range's new owner is caught up; the hand-over step has not returned. */
  'failover.afterHandOver',
  /** The next ring is published; the failover is not yet reported. */
  'failover.afterPublish',
] as const;

/** Where a crash can be injected in cross-region disaster recovery (docs/dr.md). */
export const drCrashPoints = [
  /** The shipper sent a batch's key messages; none of its values has left. */
  'dr.afterKeys',
  /** The shipper uploaded one value to the backup bucket. */
  'dr.afterValue',
  /** The backup's key applier recorded a key as pending and has not looked for its value. */
  'dr.afterPending',
  /** The backup stored a value on its shards and has not cleared the key's pending entry. */
  'dr.afterApply',
  /** The backup stored one write of a transaction; the others and every pending entry are not done yet. */
  'dr.afterTransactionWrite',
] as const;

/** Where a crash can be injected in a rebalance's steps (docs/rebalancing.md). */
export const rebalanceCrashPoints = [
  /** A range is marked copying; its copy has not begun. */
  'rebalance.afterCopying',
  /** A page of a range is copied; the job's cursor has not moved past it. */
  'rebalance.afterPage',
  /** A range whose owner changes is fenced; the lease wait has not begun. */
  'rebalance.afterFence',
  /** A range is cut over to its new replicas; the job does not record it yet. */
  'rebalance.afterCutover',
  /** Every range has moved and the ring is finished; nothing is cleaned yet. */
  'rebalance.afterFinish',
  /** Some copies a moved range left behind are removed; the job does not record it yet. */
  'rebalance.afterCleanupPage',
] as const;

/** Where a crash can be injected in a volume snapshot's creation (docs/volumes.md, "Snapshots"). */
export const volumeCrashPoints = [
  /** The record holds the snapshot (creating) and its new generation; no placement group's fence holds it yet. */
  'volume.afterSnapshotRecord',
  /** Every fence holds the snapshot's generation; the record does not mark it ready yet. */
  'volume.afterSnapshotFences',
] as const;

export const crashPoints = [
  ...replicationCrashPoints,
  ...transactionCrashPoints,
  ...failoverCrashPoints,
  ...drCrashPoints,
  ...rebalanceCrashPoints,
  ...volumeCrashPoints,
] as const;

export type CrashPoint = (typeof crashPoints)[number];

/** Deliberately wrong behaviours that the proof tests must catch (so the checkers are known to work). */
export const brokenModes = [
  /** Strong reads go to a replica instead of the owner: not linearizable during replication lag. */
  'strongReadFromReplica',
  /** Transactions skip read-set validation: reads are no longer checked at the commit point (write skew). */
  'txnSkipValidation',
  /**
   * Writes keep routing by the first ring this instance leased and skip the check after the write (no
   * fencing): after a failover they are acknowledged on the old owner, which strong reads no longer see.
   */
  'staleRingWrites',
  /** The backup region serves reads without checking the pending set: stale values after a disaster. */
  'drServeWithoutPendingCheck',
  /** The backup applies each write of a transaction on its own: after a disaster, part of a transaction is served. */
  'drApplyTransactionsPerKey',
  /** A rebalance cuts each range over as soon as it starts, with no copy and no verification: moved keys vanish. */
  'rebalanceCutoverBeforeCopy',
] as const;

export type BrokenMode = (typeof brokenModes)[number];

/** What the core asks at each crash point; absent in production. */
export interface FaultInjector {
  /** Throws CrashInjectedError when the point is armed. */
  reach(point: CrashPoint): void;
  isBroken(mode: BrokenMode): boolean;
}
