// Per-namespace quotas as the ports speak of them: a request rate kept in a shared store, and the
// storage a namespace uses, charged with the write that changes it (docs/security.md, "Quotas").

/** A namespace's request rate: a steady rate and the burst it may take at once. */
export interface RateLimit {
  requestsPerSecond: number;
  burst: number;
}

/** A namespace's storage quota; a bound left out is not enforced. */
export interface StorageQuota {
  keysMax?: number;
  bytesMax?: number;
}

/** What a namespace stores: its live keys (tombstones excluded) and the bytes of their values. */
export interface StorageUsage {
  keys: number;
  bytes: number;
}

/**
 * A shared token bucket per namespace in the generic cell rate form: its whole state is one time, the
 * "theoretical arrival time" (TAT) of the next request. Taking `costMs` of it is allowed when
 * `max(tat, nowMs) + costMs - nowMs <= toleranceMs`, and moves the TAT there, in one atomic step, so
 * every instance of every handler shares one bucket.
 */
export interface RateLimitStore {
  take(namespace: string, request: { nowMs: number; costMs: number; toleranceMs: number }): Promise<RateTake>;
}

/** Granted, or refused with the TAT as it stands (the caller may retry once `tatMs - toleranceMs + costMs` has passed). */
export type RateTake = { granted: true } | { granted: false; tatMs: number };

/**
 * A write's change to its namespace's storage usage, made in the same atomic request as the owner's
 * write and only if the owner's item is still at `expectVersion` (absent: no item), so that two writers
 * of one key never both count the key they both saw absent.
 */
export interface StorageCharge {
  expectVersion: number | undefined;
  keysDelta: number;
  bytesDelta: number;
  quota: StorageQuota;
  /** The namespace whose usage changes, when not the write's own (a volume's record charges its namespace). */
  namespace?: string;
}

/**
 * How a write is charged when not by its value's size to its own namespace: a volume's record is charged the
 * volume's size, to the namespace the volume belongs to (docs/volumes.md, "Quotas"), and counts as no key.
 */
export interface StorageChargeRule {
  namespace: string;
  /** The bytes an item with this inline value counts for (undefined: no value). */
  bytesOf(value: Uint8Array | undefined): number;
}

/** The usage counter of each namespace with a storage quota. */
export interface NamespaceUsageStore {
  usageOf(namespace: string): Promise<StorageUsage | undefined>;
  /** Sets the counter to a counted usage (a quota set on a namespace without a counter). */
  seed(namespace: string, usage: StorageUsage): Promise<void>;
  /** Forgets the counter (the quota was removed; a later quota counts again from the data). */
  remove(namespace: string): Promise<void>;
}

/** Which limit refused a request. */
export type QuotaLimit = 'rate' | 'keys' | 'bytes';

/** Per-namespace observations, published as metrics with the namespace as a dimension. */
export interface QuotaMetrics {
  admitted(namespace: string): void;
  refused(namespace: string, limit: QuotaLimit): void;
}
