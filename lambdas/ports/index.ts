// The few methods the core needs from the outside world (conventions §2). Adapters implement them.
import type { KeySummary, StoredItem } from '../core/item';
import type { CacheEntry } from '../core/l1-cache';
import type { Ring } from '../core/ring';

export interface Clock {
  nowMs(): number;
}

export interface IdSource {
  /** A fresh random identifier (UUID v4 in production). */
  newId(): string;
  /** A fresh secret with at least 256 bits of entropy, URL-safe. */
  newSecret(): string;
}

/** What must hold for a write to happen; the store evaluates it atomically with the write. */
export type WritePrecondition =
  | { kind: 'none' }
  /** The key is live with exactly this version (If-Match). */
  | { kind: 'versionIs'; version: number }
  /** The key has no live value: never written, deleted, or expired (If-None-Match: *). */
  | { kind: 'absent' }
  /** The key has a live value (deletes). */
  | { kind: 'live' };

export interface ItemWrite {
  namespace: string;
  key: string;
  token: number;
  /** A tombstone when absent. */
  content?: {
    contentType: string;
    size: number;
    sha256: string;
    expiresAtSeconds?: number;
    value?: Uint8Array;
    blob?: { objectKey: string };
  };
  precondition: WritePrecondition;
  /** Evaluation time of `absent`/`live` (expired keys count as absent). */
  nowSeconds: number;
}

export interface WriteResult {
  version: number;
  previous?: StoredItem;
}

export interface ListQuery {
  namespace: string;
  prefix: string;
  /** Return keys strictly after this one. */
  afterKey?: string;
  limit: number;
  nowSeconds: number;
}

export type ListPage =
  | { items: KeySummary[]; more: false }
  /** The shard stopped early: it may hold more matching keys after `resumeAfter` (the last key it examined). */
  | { items: KeySummary[]; more: true; resumeAfter: string };

/** One DynamoDB shard table per call; the table name routes the request. */
export interface ShardStore {
  get(table: string, namespace: string, key: string, options: { consistent: boolean }): Promise<StoredItem | undefined>;
  /** Writes atomically with the next version; throws PreconditionFailedError carrying the current item. */
  write(table: string, write: ItemWrite): Promise<WriteResult>;
  list(table: string, query: ListQuery): Promise<ListPage>;
}

export interface BlobStore {
  put(objectKey: string, bytes: Uint8Array, contentType: string): Promise<void>;
  get(objectKey: string): Promise<Uint8Array>;
  /** Size of an object, or undefined when it does not exist. */
  size(objectKey: string): Promise<number | undefined>;
  /** Lowercase hex sha256 of an object's bytes, computed by streaming. */
  sha256(objectKey: string): Promise<string>;
  copy(fromKey: string, toKey: string): Promise<void>;
  delete(objectKey: string): Promise<void>;
  presignPut(objectKey: string, options: { contentType: string; expiresInSeconds: number }): Promise<{ url: string; headers: Record<string, string> }>;
  presignGet(objectKey: string, options: { expiresInSeconds: number }): Promise<string>;
}

/** The current ring, cached by the adapter and refreshed when its epoch may have moved. */
export interface RingSource {
  current(): Promise<Ring>;
}

export type Role = 'user' | 'admin';

export interface ApiKeyRecord {
  keyId: string;
  /** Lowercase hex sha256 of the secret; the secret itself is never stored. */
  secretHash: string;
  namespace: string;
  role: Role;
  createdAt: string;
  revokedAt?: string;
  description?: string;
}

export interface ApiKeyStore {
  find(keyId: string): Promise<ApiKeyRecord | undefined>;
  create(record: ApiKeyRecord): Promise<void>;
  /** Marks the key revoked; returns the updated record, or undefined when the key does not exist. */
  revoke(keyId: string, revokedAt: string): Promise<ApiKeyRecord | undefined>;
  list(): Promise<ApiKeyRecord[]>;
}

/** The shared cache (L2: Redis/ElastiCache). Implementations never throw: a failure is a miss. */
export interface RemoteCache {
  get(cacheKey: string): Promise<CacheEntry | undefined>;
  /** Version-guarded: stores only if the cache holds no version >= entry.version. */
  put(cacheKey: string, entry: CacheEntry, ttlMs: number): Promise<boolean>;
}

/** The read cache the KV service consults for eventual reads and writes through on every write. */
export interface ValueCache {
  get(namespace: string, key: string): Promise<CacheEntry | undefined>;
  /** Write-through of a write: always reaches every level. */
  put(namespace: string, key: string, entry: CacheEntry): Promise<void>;
  /** Population by a read; may skip levels that already hold this version. */
  refresh(namespace: string, key: string, entry: CacheEntry): Promise<void>;
}
