// What a shard table holds for one key, as the ports speak of it, independent of how DynamoDB stores it.

/** Where a value larger than the inline limit lives; the item keeps only this pointer. */
export interface BlobPointer {
  objectKey: string;
}

export interface StoredItem {
  namespace: string;
  key: string;
  /** Assigned by the owner; only grows, deletes included (tombstones keep their version). */
  version: number;
  token: number;
  contentType: string;
  size: number;
  sha256: string;
  tombstone: boolean;
  /** Epoch seconds after which the key no longer exists (DynamoDB TTL removes it later). */
  expiresAtSeconds?: number;
  /** Inline value (at most the inline limit). Absent for tombstones and blob values. */
  value?: Uint8Array;
  blob?: BlobPointer;
  /** When the owner stored this version (epoch ms); replicas keep it, so their lag can be measured. */
  modifiedAtMs?: number;
  /** A transaction's write waiting on this key (owner only; never replicated): the key is locked. */
  intent?: Intent;
  /**
   * The transaction that wrote this version, and how many keys it wrote (owner only; never replicated).
   * The DR shipper sends it with the key message so the backup region applies the transaction as a unit.
   */
  writtenBy?: TxnWriter;
  /**
   * Owner only: the id of a DR key-sync write's notice (docs/dr.md), stored by that write and left behind
   * by later writes without one, so the version carrying it is that write's or a newer one.
   */
  writeId?: string;
}

/** A transaction as the writer of some keys' versions. */
export interface TxnWriter {
  txid: string;
  /** How many keys the transaction wrote (puts and deletes). */
  writes: number;
}

/** What a transaction will make of a key if it commits; the item keeps its committed content meanwhile. */
export interface Intent {
  txid: string;
  kind: 'put' | 'delete';
  contentType: string;
  size: number;
  sha256: string;
  value?: Uint8Array;
  placedAtMs: number;
  /** How many keys the transaction writes; the committed version records it (StoredItem.writtenBy). */
  writes?: number;
}

/** The listing view of a key. */
export interface KeySummary {
  key: string;
  version: number;
  size: number;
  contentType: string;
  expiresAtSeconds?: number;
}
