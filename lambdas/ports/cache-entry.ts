// What the caches hold for a key: the L1 in each instance, the shared L2, and the ports between them.

/** What the caches hold for a key: a value at a version, or a tombstone (the key was deleted at that version). */
export interface CacheEntry {
  version: number;
  tombstone: boolean;
  contentType: string;
  /** Bytes of the value (0 for tombstones), also when the value itself is not cached (blob values). */
  size: number;
  sha256: string;
  /** The key's own TTL: a cached entry past it is never returned. */
  expiresAtSeconds?: number;
  /** Absent for tombstones and for values the cache holds only the version of. */
  value?: Uint8Array;
}
