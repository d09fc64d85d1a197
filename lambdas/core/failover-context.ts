// What a failover's parts share (docs/failover.md): the ports they act on and the limits they keep. Its own file so
// that the parts (failover-confirmation.ts, -fencing, -hand-over, -re-replication) and the service that composes
// them all depend on it, and not on each other.
import type {
  Clock,
  FailoverLog,
  FaultInjector,
  HintStore,
  RingStore,
  ShardCopies,
  ShardHealthStore,
  ShardIndexes,
  ShardItemReads,
  TxnRecordStore,
} from '../ports';

export interface FailoverDeps {
  rings: Pick<RingStore, 'readRing' | 'publishRing'>;
  shards: ShardItemReads & ShardCopies & ShardIndexes;
  hints: HintStore;
  /** Transactions with intents on the failed owner are settled from their records before the hand-over. */
  records: Pick<TxnRecordStore, 'dueBetween' | 'decide' | 'find'>;
  /** The failed shard is marked unavailable at the hand-over: it serves again only once it has rejoined. */
  health: ShardHealthStore;
  clock: Clock;
  log: FailoverLog;
  /** Waits on this process's clock (the lease wait, the pause between probes). */
  sleep: (ms: number) => Promise<void>;
  faults?: FaultInjector;
  limits: {
    catchUpConcurrency: number;
    hintPageSize: number;
    /** Probes in a row, none answered, that confirm a shard is down; one answer calls the failover off. */
    confirmProbes: number;
    confirmIntervalMs: number;
    /** What the fence step waits after publishing: the ring lease and its margin (ring-source). */
    leaseWaitMs: number;
    /**
     * The transactions settled are those whose deadline lies from this long before the shard was
     * marked down (or now) to `txnLookaheadMs` after now: an intent still unapplied on it was placed
     * before it failed, by a transaction the sweeper (which runs every minute) had not finished.
     */
    txnLookbackMs: number;
    txnLookaheadMs: number;
    txnPageSize: number;
  };
}
