// L1: the bounded, short-lived, version-guarded cache in one Lambda instance's memory (docs/architecture.md, "Cache").
// Bounded by entry count and bytes; an entry is served for at most `ttlMs` after it was stored.
//
// `lru` and `fifo` are the `lru-cache` package: a read-through `get` makes it LRU, a `peek` (no
// recency update) makes it FIFO in store order. `lfu` is written here because lru-cache has no LFU:
// O(1) frequency buckets (Shah, Mitra and Matani, "An O(1) algorithm for implementing the LFU
// cache eviction scheme", 2010). lru-cache's own TTL is not used: it reads `performance.now()`
// and caches it, while the core takes time only from the injected Clock.
import type { CacheEntry, Clock } from '../ports';
import { LRUCache } from 'lru-cache';
import { invariant } from './errors';

/** Which entry goes when a bound is reached. */
export type EvictionPolicy = 'lru' | 'lfu' | 'fifo';

export const evictionPolicies: readonly EvictionPolicy[] = ['lru', 'lfu', 'fifo'];

export interface L1CacheOptions {
  policy: EvictionPolicy;
  /** Bound by count. lru-cache preallocates arrays of this length for `lru` and `fifo`. */
  entriesMax: number;
  /** Bound by the sum of {@link entryBytesOf} over the held entries. */
  bytesMax: number;
  /** How long an entry may be served after it was stored: bounds staleness across instances. 0 serves nothing. */
  ttlMs: number;
  clock: Clock;
}

export interface L1CacheStats {
  hits: number;
  misses: number;
  /** Entries removed to respect a bound (not those removed as expired by `get`, nor by `delete`). */
  evictions: number;
  entries: number;
  bytes: number;
}

/**
 * Fixed bytes charged per entry on top of its value and strings: the entry and slot objects, the
 * Map slot and the list links. An estimate; what matters is that an empty or tombstone entry is not free.
 */
export const entryOverheadBytes = 64;

/**
 * What an entry costs against `bytesMax`: the value bytes held, the fixed overhead, and one byte
 * per character of the strings the entry keeps (cache key, content type, sha256).
 *
 * @example
 * entryBytesOf(cacheKeyOf('ns', 'k'), { version: 1, tombstone: true, contentType: '', size: 0, sha256: '' }); // 68
 */
export function entryBytesOf(cacheKey: string, entry: CacheEntry): number {
  return (entry.value?.byteLength ?? 0) + entryOverheadBytes + cacheKey.length + entry.contentType.length + entry.sha256.length;
}

/**
 * The cache key of a key in a namespace. Namespaces cannot contain NUL (validation's
 * `namespacePattern`), so the first NUL separates the two: ('a', 'b\0c') and ('a\0b', 'c') differ.
 *
 * @example
 * l1.get(cacheKeyOf('orders', 'order-42'));
 */
export function cacheKeyOf(namespace: string, key: string): string {
  invariant(!namespace.includes('\u0000'), 'a namespace never contains NUL');
  return `${namespace}\u0000${key}`;
}

/** An entry as held: frozen, with the time it was stored and what it is charged. */
interface Slot {
  readonly entry: CacheEntry;
  readonly storedAtMs: number;
  readonly bytes: number;
}

/** The policy-specific store under L1Cache: it keeps the bounds, L1Cache keeps the rules. */
interface Engine {
  readonly size: number;
  readonly bytes: number;
  /** The held slot, without counting as a use. */
  peek(key: string): Slot | undefined;
  /** Counts a hit as a use. */
  touch(key: string): void;
  /** Inserts or replaces (a use), then evicts other entries until both bounds hold. */
  set(key: string, slot: Slot): void;
  delete(key: string): void;
}

/**
 * The L1 cache of one Lambda instance. Version-guarded: an entry is only ever replaced by a newer
 * version, so population by slow readers cannot undo a write or resurrect a deleted key (tombstones
 * are cached and returned like values). Synchronous and single-threaded, like a Lambda instance.
 *
 * Rules beyond the obvious:
 * - `put` counts as a use (`lru`, `lfu`) only when it stores; a rejected `put` changes nothing.
 * - `fifo` orders by store time: a replacement goes to the back. With one `ttlMs` for all entries,
 *   queue order is then expiry order, so the victim is always the entry closest to going stale.
 * - `lfu` evicts the least frequently used, ties broken by least recently used; but first, if
 *   the oldest stored entry can no longer be served, that one goes: otherwise an entry that was
 *   hot once would keep its slot long after it expired (LFU's cache pollution).
 * - A held entry that can no longer be served still guards against older versions (its version
 *   is a fact about the key); an equal version refreshes it.
 * - An entry larger than `bytesMax` is refused; a held older version is then dropped, as it is
 *   known to be stale.
 *
 * @example
 * const l1 = new L1Cache({ policy: 'lru', entriesMax: 10_000, bytesMax: 64 * 2 ** 20, ttlMs: 1_000, clock });
 * const cacheKey = cacheKeyOf('orders', 'order-42');
 * l1.put(cacheKey, { version: 7, tombstone: false, contentType: 'text/plain', size: 2, sha256, value });
 * l1.get(cacheKey)?.version; // 7, for one second
 */
export class L1Cache {
  private readonly engine: Engine;
  private readonly clock: Clock;
  private readonly ttlMs: number;
  private readonly entriesMax: number;
  private readonly bytesMax: number;
  private hits = 0;
  private misses = 0;
  private evictions = 0;

  constructor(options: L1CacheOptions) {
    const { policy, entriesMax, bytesMax, ttlMs, clock } = options;
    invariant(evictionPolicies.includes(policy), `unknown eviction policy ${policy}`);
    invariant(Number.isSafeInteger(entriesMax) && entriesMax >= 1, 'entriesMax must be a positive integer');
    invariant(Number.isSafeInteger(bytesMax) && bytesMax >= 1, 'bytesMax must be a positive integer');
    invariant(Number.isFinite(ttlMs) && ttlMs >= 0, 'ttlMs must be a finite number >= 0');
    this.clock = clock;
    this.ttlMs = ttlMs;
    this.entriesMax = entriesMax;
    this.bytesMax = bytesMax;
    const onEvict = () => {
      this.evictions += 1;
    };
    this.engine =
      policy === 'lfu'
        ? new LfuEngine(entriesMax, bytesMax, (slot) => this.isServable(slot, this.clock.nowMs()), onEvict)
        : new LruCacheEngine(entriesMax, bytesMax, policy === 'lru', onEvict);
  }

  /** The entry for a key; undefined (a miss) when absent, stored `ttlMs` or more ago, or past the key's TTL. */
  get(cacheKey: string): CacheEntry | undefined {
    const slot = this.engine.peek(cacheKey);
    if (slot && this.isServable(slot, this.clock.nowMs())) {
      this.engine.touch(cacheKey);
      this.hits += 1;
      return slot.entry;
    }
    if (slot) this.engine.delete(cacheKey);
    this.misses += 1;
    return undefined;
  }

  /**
   * Stores `entry` unless the cache holds a higher version, or the same version still servable.
   * Returns whether it stored. The entry is copied and frozen; its value bytes are not copied.
   */
  put(cacheKey: string, entry: CacheEntry): boolean {
    assertWellFormed(entry);
    const nowMs = this.clock.nowMs();
    const held = this.engine.peek(cacheKey);
    if (held && (held.entry.version > entry.version || (held.entry.version === entry.version && this.isServable(held, nowMs)))) {
      return false;
    }
    const bytes = entryBytesOf(cacheKey, entry);
    if (bytes > this.bytesMax) {
      // A newer version exists: serving the held one would break read-your-writes in this instance.
      if (held) this.engine.delete(cacheKey);
      return false;
    }
    this.engine.set(cacheKey, { entry: Object.freeze({ ...entry }), storedAtMs: nowMs, bytes });
    invariant(this.engine.size <= this.entriesMax && this.engine.bytes <= this.bytesMax, 'L1 bounds hold after a put');
    return true;
  }

  /** Forgets the key, version included. To record a delete, put a tombstone instead. */
  delete(cacheKey: string): void {
    this.engine.delete(cacheKey);
  }

  /**
   * The entry held for a key even if it can no longer be served, without counting as a use, a hit
   * or a miss. For version comparisons (which version this instance already knows), diagnostics
   * and tests: never serve it.
   */
  peek(cacheKey: string): CacheEntry | undefined {
    return this.engine.peek(cacheKey)?.entry;
  }

  /** A snapshot of the counters; `hits / (hits + misses)` is the hit ratio metric. */
  get stats(): L1CacheStats {
    return { hits: this.hits, misses: this.misses, evictions: this.evictions, entries: this.engine.size, bytes: this.engine.bytes };
  }

  private isServable(slot: Slot, nowMs: number): boolean {
    const ageMs = nowMs - slot.storedAtMs;
    // A clock that went backwards makes the age unknown: treat the entry as stale.
    if (ageMs < 0 || ageMs >= this.ttlMs) return false;
    const { expiresAtSeconds } = slot.entry;
    // The same rule as item.ts `isLive`: the key exists while expiresAtSeconds > now in whole seconds.
    return expiresAtSeconds === undefined || expiresAtSeconds > Math.floor(nowMs / 1000);
  }
}

function assertWellFormed(entry: CacheEntry): void {
  invariant(
    Number.isSafeInteger(entry.version) && entry.version >= 0,
    `cache entry version ${entry.version} is not a non-negative integer`,
  );
  if (entry.tombstone) invariant(entry.value === undefined && entry.size === 0, 'a tombstone has no value and size 0');
  if (entry.value !== undefined)
    invariant(entry.value.byteLength === entry.size, `cache entry size ${entry.size} is not its value's length`);
}

/** `lru` (a hit moves the entry to the front) and `fifo` (a hit does not) on lru-cache. */
class LruCacheEngine implements Engine {
  private readonly cache: LRUCache<string, Slot>;

  constructor(
    entriesMax: number,
    bytesMax: number,
    private readonly hitIsUse: boolean,
    onEvict: () => void,
  ) {
    this.cache = new LRUCache<string, Slot>({
      max: entriesMax,
      maxSize: bytesMax,
      // Replacements ('set') and deletes ('delete') are not evictions.
      dispose: (_slot, _key, reason) => {
        if (reason === 'evict') onEvict();
      },
    });
  }

  get size(): number {
    return this.cache.size;
  }

  get bytes(): number {
    return this.cache.calculatedSize;
  }

  peek(key: string): Slot | undefined {
    return this.cache.peek(key);
  }

  touch(key: string): void {
    if (this.hitIsUse) this.cache.get(key);
  }

  set(key: string, slot: Slot): void {
    // L1Cache refuses entries over bytesMax first: lru-cache would silently drop them.
    this.cache.set(key, slot, { size: slot.bytes });
  }

  delete(key: string): void {
    this.cache.delete(key);
  }
}

/** A link of an intrusive doubly linked list. */
interface Link<T> {
  readonly value: T;
  prev: Link<T> | undefined;
  next: Link<T> | undefined;
}

class List<T> {
  first: Link<T> | undefined;
  last: Link<T> | undefined;

  push(value: T): Link<T> {
    return this.insertAfter(this.last, value);
  }

  /** Inserts after `prev`, or at the front when `prev` is undefined. */
  insertAfter(prev: Link<T> | undefined, value: T): Link<T> {
    const next = prev ? prev.next : this.first;
    const link: Link<T> = { value, prev, next };
    if (prev) prev.next = link;
    else this.first = link;
    if (next) next.prev = link;
    else this.last = link;
    return link;
  }

  remove(link: Link<T>): void {
    if (link.prev) link.prev.next = link.next;
    else this.first = link.next;
    if (link.next) link.next.prev = link.prev;
    else this.last = link.prev;
    link.prev = undefined;
    link.next = undefined;
  }

  get isEmpty(): boolean {
    return this.first === undefined;
  }
}

/** The entries used exactly `frequency` times, least recently used first. */
interface FrequencyBucket {
  readonly frequency: number;
  readonly members: List<LfuNode>;
}

interface LfuNode {
  readonly key: string;
  slot: Slot;
  bucket: Link<FrequencyBucket>;
  inBucket: Link<LfuNode>;
  inAge: Link<LfuNode>;
}

/**
 * LFU in O(1): buckets of equal frequency in ascending order, each a recency list. A use moves an
 * entry to the back of the next bucket, so within a bucket the order is the order of last use.
 * A second list orders entries by store time, for evicting an unservable entry first.
 */
class LfuEngine implements Engine {
  private readonly nodes = new Map<string, LfuNode>();
  private readonly buckets = new List<FrequencyBucket>();
  private readonly byAge = new List<LfuNode>();
  private heldBytes = 0;

  constructor(
    private readonly entriesMax: number,
    private readonly bytesMax: number,
    private readonly isServable: (slot: Slot) => boolean,
    private readonly onEvict: () => void,
  ) {}

  get size(): number {
    return this.nodes.size;
  }

  get bytes(): number {
    return this.heldBytes;
  }

  peek(key: string): Slot | undefined {
    return this.nodes.get(key)?.slot;
  }

  touch(key: string): void {
    const node = this.nodes.get(key);
    if (node) this.promote(node);
  }

  set(key: string, slot: Slot): void {
    let node = this.nodes.get(key);
    if (node) {
      this.heldBytes += slot.bytes - node.slot.bytes;
      node.slot = slot;
      this.byAge.remove(node.inAge);
      node.inAge = this.byAge.push(node);
      this.promote(node);
    } else {
      node = this.insert(key, slot);
    }
    while (this.nodes.size > this.entriesMax || this.heldBytes > this.bytesMax) this.evictOne(node);
  }

  delete(key: string): void {
    const node = this.nodes.get(key);
    if (node) this.unlink(node);
  }

  private insert(key: string, slot: Slot): LfuNode {
    const lowest = this.buckets.first;
    const bucket = lowest?.value.frequency === 1 ? lowest : this.buckets.insertAfter(undefined, { frequency: 1, members: new List() });
    const node = { key, slot, bucket } as LfuNode;
    node.inBucket = bucket.value.members.push(node);
    node.inAge = this.byAge.push(node);
    this.nodes.set(key, node);
    this.heldBytes += slot.bytes;
    return node;
  }

  private promote(node: LfuNode): void {
    const current = node.bucket;
    const frequency = current.value.frequency + 1;
    const target =
      current.next?.value.frequency === frequency ? current.next : this.buckets.insertAfter(current, { frequency, members: new List() });
    current.value.members.remove(node.inBucket);
    if (current.value.members.isEmpty) this.buckets.remove(current);
    node.inBucket = target.value.members.push(node);
    node.bucket = target;
  }

  private unlink(node: LfuNode): void {
    node.bucket.value.members.remove(node.inBucket);
    if (node.bucket.value.members.isEmpty) this.buckets.remove(node.bucket);
    this.byAge.remove(node.inAge);
    this.nodes.delete(node.key);
    this.heldBytes -= node.slot.bytes;
  }

  /** Evicts one entry other than `keep` (the one just stored, always last in its bucket and by age). */
  private evictOne(keep: LfuNode): void {
    const oldest = this.byAge.first?.value;
    let victim = oldest && oldest !== keep && !this.isServable(oldest.slot) ? oldest : undefined;
    if (!victim) {
      const lowest = this.buckets.first;
      const candidate = lowest?.value.members.first?.value;
      // `keep` is first in its bucket only when alone in it.
      victim = candidate === keep ? lowest?.next?.value.members.first?.value : candidate;
    }
    invariant(victim && victim !== keep, 'an entry fitting the bounds alone never needs to evict itself');
    this.unlink(victim);
    this.onEvict();
  }
}
