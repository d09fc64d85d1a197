// The transaction table: one record per writing transaction, whose decision is one conditional write
// (docs/transactions.md).
import type { Intent } from './item';

export type TxnStatus = 'pending' | 'committed' | 'aborted';

/** A key a transaction writes, as its record lists it for recovery. */
export interface TxnKeyRef {
  table: string;
  namespace: string;
  key: string;
  kind: Intent['kind'];
}

/**
 * A committed transaction's write as its decision records it: the version the key takes and its
 * content. The intent on the owner holds the same; this copy lets a failover apply the write on a
 * new owner when the owner that held the intent fails before applying it (docs/failover.md).
 */
export interface TxnCommittedWrite {
  namespace: string;
  key: string;
  token: number;
  version: number;
  kind: Intent['kind'];
  contentType: string;
  size: number;
  sha256: string;
  value?: Uint8Array;
}

export interface TxnRecord {
  txid: string;
  status: TxnStatus;
  createdAtMs: number;
  /** After this a pending transaction may be aborted by anyone (its coordinator is presumed gone). */
  deadlineMs: number;
  keys: TxnKeyRef[];
  /** A committed transaction's writes, recorded with its decision. */
  writes?: TxnCommittedWrite[];
  reason?: string;
  conflictKey?: string;
}

/** The transaction table: one record per writing transaction; the decision is one conditional write. */
export interface TxnRecordStore {
  begin(record: TxnRecord): Promise<void>;
  find(txid: string): Promise<TxnRecord | undefined>;
  /** pending -> status; returns the record as it ends up (someone else's decision stands). */
  decide(
    txid: string,
    status: Exclude<TxnStatus, 'pending'>,
    details?: { reason?: string; conflictKey?: string; writes?: TxnCommittedWrite[] },
  ): Promise<TxnRecord | undefined>;
  /** Records whose deadline is in [fromMs, toMs), oldest first, at most `limit` (the recovery sweeper's walk). */
  dueBetween(fromMs: number, toMs: number, limit: number): Promise<TxnRecord[]>;
}
