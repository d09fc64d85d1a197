// The change feed (docs/watch.md): entries the stream consumer appends, read back by position per feed partition.

/** What happened to a key: a write, a delete (a tombstone), or its TTL passing (where the store can tell). */
export type FeedOperation = 'put' | 'delete' | 'expire';

/** One change of one key, as the feed keeps it. */
export interface FeedEntry {
  namespace: string;
  /** The feed partition of the key (watch.ts, bucketOfKey). */
  bucket: number;
  /** Where the entry sits in its namespace's feed: an ordered, unique string (watch.ts, FeedClock). */
  position: string;
  key: string;
  version: number;
  operation: FeedOperation;
  contentType: string;
  size: number;
  /** The value, when at most the feed's inline limit; else the change says it was left out. */
  value?: Uint8Array;
  /** The transaction that wrote this version. */
  txid?: string;
  /** When the owner stored the version (epoch ms). */
  modifiedAtMs?: number;
  /** The key's TTL (epoch seconds), when it has one. */
  expiresAtSeconds?: number;
}

/** A read of one feed partition: the entries after `after`, up to and including `upTo`, whose keys start with `keyPrefix`. */
export interface FeedQuery {
  namespace: string;
  bucket: number;
  after: string;
  upTo: string;
  keyPrefix: string;
  limit: number;
}

export interface FeedPage {
  /** In position order, at most the query's limit. */
  entries: FeedEntry[];
  /**
   * The position up to which the partition has been read in full: `upTo` when nothing more lies before it, else the
   * last position read (a page of entries filtered out by the key prefix ends a read early, bounded).
   */
  readTo: string;
}

export interface FeedStore {
  /** Stores the entries (each once per position: appending the same entry again is harmless). Kept for `retentionSeconds`. */
  append(entries: readonly FeedEntry[], retentionSeconds: number): Promise<void>;
  /** Reads one partition strongly: every entry appended before the read began, within the query, is seen. */
  read(query: FeedQuery): Promise<FeedPage>;
}
