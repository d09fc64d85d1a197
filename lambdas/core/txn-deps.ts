// What the transaction service and its parts work with: their ports and limits, and what a participant saw.
import type { Abort, Clock, FaultInjector, IdSource, ShardItemReads, ShardTransactions, TxnRecordStore, ValueCache } from '../ports';
import type { ReplicationService } from './replication';
import type { RingSource } from './ring-source';
import type { TxnHooks } from './txn-hooks';
import type { TxnLimits } from './txn-plan';

export interface TxnServiceLimits extends TxnLimits {
  txnTimeoutMsDefault: number;
  /** Bytes of values a transaction may return (they travel through the state machine's state). */
  txnReadBytesMax: number;
  /** Attempts to place one intent while resolving other transactions' intents on the key. */
  intentAttemptsMax: number;
  /** Keys of a one-shard transaction committed by one atomic write; more use two-phase commit. */
  atomicKeysMax: number;
  /** Keys of one participant worked on at once (prepare, commit, abort). */
  intentConcurrencyMax: number;
}

export interface TxnDeps {
  shards: ShardItemReads & ShardTransactions;
  records: TxnRecordStore;
  ring: RingSource;
  clock: Clock;
  ids: IdSource;
  replication: ReplicationService;
  cache?: ValueCache;
  faults?: FaultInjector;
  limits: TxnServiceLimits;
  /** What a capability adds around a transaction (txn-hooks.ts; DR's in dr-hooks.ts); none by default. */
  hooks?: TxnHooks;
}

/** What a participant saw of a key when it locked or read it. */
export interface Observed {
  key: string;
  /** The live version (0: absent, deleted or expired). */
  version: number;
  /** The stored version, which a write continues from (a deleted key's tombstone keeps counting). */
  storedVersion: number;
  found: boolean;
  valueBase64?: string;
  contentType?: string;
}

export interface PrepareResult {
  table: string;
  abort?: Abort;
  observed: Observed[];
}

export interface Decision {
  status: 'committed' | 'aborted';
  abort?: Abort;
}
