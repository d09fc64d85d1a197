// L1 cache: each policy's victim, the bounds, the version guard, both TTLs, and a model-based
// property test that replays random operations against a naive O(n) model of all three policies.
import fc from 'fast-check';
import { isRingstoreError } from '../../../lambdas/core/errors';
import {
  cacheKeyOf,
  entryBytesOf,
  entryOverheadBytes,
  type EvictionPolicy,
  evictionPolicies,
  L1Cache,
  type L1CacheOptions,
} from '../../../lambdas/core/l1-cache';
import { type CacheEntry } from '../../../lambdas/ports';
import { ManualClock } from '../../support/memory-ports';

const policies = evictionPolicies;

function valueEntry(version: number, size = 10, extra: Partial<CacheEntry> = {}): CacheEntry {
  return { version, tombstone: false, contentType: 'b', size, sha256: 's', value: new Uint8Array(size).fill(version % 256), ...extra };
}

function tombstone(version: number): CacheEntry {
  return { version, tombstone: true, contentType: '', size: 0, sha256: '' };
}

function setup(options: Partial<Omit<L1CacheOptions, 'clock'>> = {}) {
  const clock = new ManualClock();
  const cache = new L1Cache({ policy: 'lru', entriesMax: 100, bytesMax: 1_000_000, ttlMs: 1_000, clock, ...options });
  return { cache, clock };
}

/** The keys held, in the order given, for asserting who survived an eviction. */
const heldOf = (cache: L1Cache, keys: string[]) => keys.filter((key) => cache.peek(key) !== undefined);

describe('cacheKeyOf', () => {
  it('joins namespace and key so that no two pairs collide', () => {
    // Prepare
    const pairs: Array<[string, string]> = [
      ['ab', 'c'],
      ['a', 'bc'],
      ['a', '\u0000bc'],
      ['a', 'b\u0000c'],
      ['a', ''],
    ];
    // Act
    const keys = pairs.map(([namespace, key]) => cacheKeyOf(namespace, key));
    // Assess
    expect(new Set(keys).size).toBe(pairs.length);
    expect(cacheKeyOf('ns', 'k')).toBe('ns\u0000k');
  });

  it('refuses a namespace containing the separator', () => {
    expect(() => cacheKeyOf('a\u0000b', 'c')).toThrow(/NUL/);
  });
});

describe('entryBytesOf', () => {
  it('charges value bytes, the fixed overhead and the strings held', () => {
    expect(entryOverheadBytes).toBe(64);
    expect(entryBytesOf('ns\u0000k', tombstone(1))).toBe(64 + 4);
    expect(entryBytesOf('ns\u0000k', valueEntry(1, 100, { contentType: 'text/plain', sha256: 'a'.repeat(64) }))).toBe(
      100 + 64 + 4 + 10 + 64,
    );
    // A blob value's cache entry holds only its version: its size is not charged.
    expect(entryBytesOf('k', { version: 1, tombstone: false, contentType: '', size: 5_000_000, sha256: '' })).toBe(64 + 1);
  });
});

describe('L1Cache eviction policies', () => {
  it('lru evicts the least recently used; get and put both count as use', () => {
    // Prepare
    const { cache } = setup({ policy: 'lru', entriesMax: 3 });
    for (const key of ['a', 'b', 'c']) cache.put(key, valueEntry(1));
    cache.get('a');
    // Act
    cache.put('d', valueEntry(1));
    // Assess: b went, as a was read after it
    expect(heldOf(cache, ['a', 'b', 'c', 'd'])).toEqual(['a', 'c', 'd']);
    // Act
    cache.put('c', valueEntry(2));
    cache.put('e', valueEntry(1));
    // Assess: a went, as c was rewritten after a's read
    expect(heldOf(cache, ['a', 'c', 'd', 'e'])).toEqual(['c', 'd', 'e']);
    expect(cache.stats.evictions).toBe(2);
  });

  it('fifo evicts the oldest stored; a read does not move it, a replacement moves it to the back', () => {
    // Prepare
    const { cache } = setup({ policy: 'fifo', entriesMax: 3 });
    for (const key of ['a', 'b', 'c']) cache.put(key, valueEntry(1));
    cache.get('a');
    cache.put('b', valueEntry(2));
    // Act
    cache.put('d', valueEntry(1));
    // Assess: a went although it was read last; the queue is now c, b, d
    expect(heldOf(cache, ['a', 'b', 'c', 'd'])).toEqual(['b', 'c', 'd']);
    // Act
    cache.put('e', valueEntry(1));
    // Assess: c went, not b: b's replacement moved it behind c
    expect(heldOf(cache, ['b', 'c', 'd', 'e'])).toEqual(['b', 'd', 'e']);
    expect(cache.stats.evictions).toBe(2);
  });

  it('lfu evicts the least frequently used, ties broken by least recently used', () => {
    // Prepare: uses a=3, b=2, c=2, with c used after b
    const { cache } = setup({ policy: 'lfu', entriesMax: 3 });
    for (const key of ['a', 'b', 'c']) cache.put(key, valueEntry(1));
    cache.get('a');
    cache.get('b');
    cache.get('c');
    cache.get('a');
    // Act
    cache.put('d', valueEntry(1));
    // Assess: b (2 uses, older than c's) went, not d, the newcomer with 1 use
    expect(heldOf(cache, ['a', 'b', 'c', 'd'])).toEqual(['a', 'c', 'd']);
    // Act: now d (1 use) is the least frequent
    cache.put('e', valueEntry(1));
    // Assess
    expect(heldOf(cache, ['a', 'c', 'd', 'e'])).toEqual(['a', 'c', 'e']);
    expect(cache.stats.evictions).toBe(2);
  });

  it('lfu keeps the use count of a key across a version replacement', () => {
    // Prepare: a used twice then replaced (3 uses), b used twice
    const { cache } = setup({ policy: 'lfu', entriesMax: 2 });
    cache.put('a', valueEntry(1));
    cache.put('b', valueEntry(1));
    cache.get('b');
    cache.get('a');
    cache.put('a', valueEntry(2));
    // Act
    cache.put('c', valueEntry(1));
    // Assess
    expect(heldOf(cache, ['a', 'b', 'c'])).toEqual(['a', 'c']);
  });

  it('lfu evicts an expired entry before a live one, however often it was used', () => {
    // Prepare: a is hot but expires; b is fresh with one use
    const { cache, clock } = setup({ policy: 'lfu', entriesMax: 2, ttlMs: 1_000 });
    cache.put('a', valueEntry(1));
    for (let i = 0; i < 5; i += 1) cache.get('a');
    clock.now += 1_000;
    cache.put('b', valueEntry(1));
    // Act
    cache.put('c', valueEntry(1));
    // Assess
    expect(heldOf(cache, ['a', 'b', 'c'])).toEqual(['b', 'c']);
    expect(cache.stats.evictions).toBe(1);
  });

  it.each(policies)('%s holds the byte bound by evicting as many entries as the newcomer needs', (policy) => {
    // Prepare: room for three 100-byte values
    const perEntry = entryBytesOf('a', valueEntry(1, 100));
    const { cache } = setup({ policy, bytesMax: 3 * perEntry });
    for (const key of ['a', 'b', 'c']) cache.put(key, valueEntry(1, 100));
    // Act: a 250-byte value needs two of them gone
    const stored = cache.put('d', valueEntry(1, 250));
    // Assess
    expect(stored).toBe(true);
    expect(heldOf(cache, ['a', 'b', 'c', 'd'])).toEqual(['c', 'd']);
    expect(cache.stats).toMatchObject({ entries: 2, evictions: 2, bytes: perEntry + entryBytesOf('d', valueEntry(1, 250)) });
  });
});

describe('L1Cache version guard', () => {
  it.each(policies)('%s never replaces a version with an older one, and keeps the held one on an equal version', (policy) => {
    // Prepare
    const { cache } = setup({ policy });
    cache.put('k', valueEntry(5, 10, { contentType: 'first' }));
    // Act
    const older = cache.put('k', valueEntry(4));
    const equal = cache.put('k', valueEntry(5, 10, { contentType: 'second' }));
    // Assess
    expect([older, equal]).toEqual([false, false]);
    expect(cache.get('k')).toMatchObject({ version: 5, contentType: 'first' });
    // Act
    const newer = cache.put('k', valueEntry(6));
    // Assess
    expect(newer).toBe(true);
    expect(cache.get('k')?.version).toBe(6);
  });

  it('stores and returns tombstones, so a delayed older put cannot resurrect a deleted key', () => {
    // Prepare
    const { cache } = setup();
    cache.put('k', valueEntry(3));
    cache.put('k', tombstone(4));
    // Act: a reader that fetched version 3 before the delete populates late
    const resurrected = cache.put('k', valueEntry(3));
    // Assess
    expect(resurrected).toBe(false);
    expect(cache.get('k')).toEqual(tombstone(4));
  });

  it('lets an expired entry guard against older versions while an equal version refreshes it', () => {
    // Prepare
    const { cache, clock } = setup({ ttlMs: 1_000 });
    cache.put('k', valueEntry(5));
    clock.now += 1_000;
    // Act
    const older = cache.put('k', valueEntry(4));
    const refresh = cache.put('k', valueEntry(5));
    // Assess
    expect([older, refresh]).toEqual([false, true]);
    expect(cache.get('k')?.version).toBe(5);
  });

  it('forgets the version on delete, so any version may be stored afterwards', () => {
    // Prepare
    const { cache } = setup();
    cache.put('k', valueEntry(5));
    // Act
    cache.delete('k');
    const stored = cache.put('k', valueEntry(1));
    // Assess
    expect(stored).toBe(true);
    expect(cache.stats).toMatchObject({ entries: 1, evictions: 0 });
  });

  it('stores a frozen copy, so neither the writer nor a reader can change what others are served', () => {
    // Prepare
    const { cache } = setup();
    const written = valueEntry(1, 10, { contentType: 'text/plain' });
    cache.put('k', written);
    // Act
    written.contentType = 'changed';
    const read = cache.get('k');
    // Assess
    expect(read?.contentType).toBe('text/plain');
    expect(Object.isFrozen(read)).toBe(true);
  });
});

describe('L1Cache expiry', () => {
  it('serves an entry for ttlMs after it was stored, then misses and drops it', () => {
    // Prepare
    const { cache, clock } = setup({ ttlMs: 1_000 });
    cache.put('k', valueEntry(1));
    // Act
    clock.now += 999;
    const fresh = cache.get('k');
    clock.now += 1;
    const stale = cache.get('k');
    // Assess
    expect(fresh?.version).toBe(1);
    expect(stale).toBeUndefined();
    expect(cache.peek('k')).toBeUndefined();
    expect(cache.stats).toMatchObject({ hits: 1, misses: 1, entries: 0, bytes: 0, evictions: 0 });
  });

  it("does not serve an entry past the key's own expiresAtSeconds", () => {
    // Prepare: the key expires at second 1_700_000_010; L1's TTL would allow a minute
    const { cache, clock } = setup({ ttlMs: 60_000 });
    const expiresAtSeconds = 1_700_000_010;
    clock.now = expiresAtSeconds * 1000 - 5_000;
    cache.put('k', valueEntry(1, 10, { expiresAtSeconds }));
    // Act
    clock.now = expiresAtSeconds * 1000 - 1;
    const before = cache.get('k');
    clock.now = expiresAtSeconds * 1000;
    const at = cache.get('k');
    // Assess: the store's isLive rule (expiresAtSeconds > now in whole seconds)
    expect(before?.version).toBe(1);
    expect(at).toBeUndefined();
    expect(cache.stats).toMatchObject({ hits: 1, misses: 1, entries: 0 });
  });

  it('treats an entry as stale when the clock went backwards', () => {
    // Prepare
    const { cache, clock } = setup({ ttlMs: 1_000 });
    cache.put('k', valueEntry(1));
    // Act
    clock.now -= 1;
    // Assess
    expect(cache.get('k')).toBeUndefined();
  });

  it('serves nothing with ttlMs 0', () => {
    const { cache } = setup({ ttlMs: 0 });
    expect(cache.put('k', valueEntry(1))).toBe(true);
    expect(cache.get('k')).toBeUndefined();
  });
});

describe('L1Cache limits and stats', () => {
  it.each(policies)('%s refuses an entry larger than bytesMax and drops the older version it would have replaced', (policy) => {
    // Prepare: room for exactly one 100-byte value under key k
    const bytesMax = entryBytesOf('k', valueEntry(1, 100));
    const { cache } = setup({ policy, bytesMax });
    cache.put('k', valueEntry(1, 100));
    // Act
    const stored = cache.put('k', valueEntry(2, 101));
    // Assess
    expect(stored).toBe(false);
    expect(cache.peek('k')).toBeUndefined();
    expect(cache.stats).toMatchObject({ entries: 0, bytes: 0, evictions: 0 });
    // Act: a newer held version stays, since the oversize one is older
    cache.put('k', valueEntry(5, 100));
    const olderOversize = cache.put('k', valueEntry(4, 500));
    // Assess
    expect(olderOversize).toBe(false);
    expect(cache.peek('k')?.version).toBe(5);
  });

  it('counts hits, misses, evictions, entries and bytes', () => {
    // Prepare
    const { cache, clock } = setup({ entriesMax: 2 });
    // Act
    cache.put('a', valueEntry(1, 10));
    cache.put('b', tombstone(1));
    cache.get('a'); // hit
    cache.get('b'); // hit: a tombstone is an answer
    cache.get('zz'); // miss
    cache.put('c', valueEntry(1, 20)); // evicts a, the least recently used
    clock.now += 1_000;
    cache.get('b'); // miss: expired, so dropped (not an eviction)
    cache.put('a', valueEntry(1, 10)); // room for it without evicting
    // Assess
    expect(cache.stats).toEqual({
      hits: 2,
      misses: 2,
      evictions: 1,
      entries: 2,
      bytes: entryBytesOf('c', valueEntry(1, 20)) + entryBytesOf('a', valueEntry(1, 10)),
    });
    expect(heldOf(cache, ['a', 'b', 'c'])).toEqual(['a', 'c']);
  });

  it('rejects malformed entries and options', () => {
    // Prepare
    const { cache } = setup();
    const codeOf = (action: () => unknown) => {
      try {
        action();
        return undefined;
      } catch (error) {
        return isRingstoreError(error) ? error.code : 'unexpected';
      }
    };
    // Act + Assess
    expect(codeOf(() => cache.put('k', { ...tombstone(1), value: new Uint8Array(1), size: 1 }))).toBe('internal');
    expect(codeOf(() => cache.put('k', valueEntry(1, 10, { size: 11 })))).toBe('internal');
    expect(codeOf(() => cache.put('k', valueEntry(1.5)))).toBe('internal');
    expect(codeOf(() => setup({ entriesMax: 0 }))).toBe('internal');
    expect(codeOf(() => setup({ bytesMax: 0 }))).toBe('internal');
    expect(codeOf(() => setup({ ttlMs: -1 }))).toBe('internal');
    expect(codeOf(() => setup({ policy: 'mru' as EvictionPolicy }))).toBe('internal');
    expect(cache.stats.entries).toBe(0);
    // A value the cache holds only the version of (a blob) is well formed
    expect(cache.put('blob', { version: 1, tombstone: false, contentType: 'b', size: 10_000_000, sha256: 's' })).toBe(true);
  });
});

/** A naive model: every entry with the counters each policy orders by; victims found by scanning. */
interface ModelEntry {
  entry: CacheEntry;
  storedAtMs: number;
  bytes: number;
  storedTick: number;
  usedTick: number;
  uses: number;
}

class Model {
  readonly held = new Map<string, ModelEntry>();
  readonly stats = { hits: 0, misses: 0, evictions: 0 };
  private tick = 0;

  constructor(private readonly options: Omit<L1CacheOptions, 'clock'>) {}

  get(key: string, nowMs: number): CacheEntry | undefined {
    const held = this.held.get(key);
    if (held && this.servable(held, nowMs)) {
      this.stats.hits += 1;
      held.uses += 1;
      held.usedTick = ++this.tick;
      return held.entry;
    }
    this.held.delete(key);
    this.stats.misses += 1;
    return undefined;
  }

  put(key: string, entry: CacheEntry, nowMs: number): boolean {
    const held = this.held.get(key);
    if (held && (held.entry.version > entry.version || (held.entry.version === entry.version && this.servable(held, nowMs)))) return false;
    const bytes = entryBytesOf(key, entry);
    if (bytes > this.options.bytesMax) {
      this.held.delete(key);
      return false;
    }
    const tick = ++this.tick;
    this.held.set(key, { entry, storedAtMs: nowMs, bytes, storedTick: tick, usedTick: tick, uses: (held?.uses ?? 0) + 1 });
    while (this.held.size > this.options.entriesMax || this.bytes() > this.options.bytesMax) {
      this.held.delete(this.victim(key, nowMs));
      this.stats.evictions += 1;
    }
    return true;
  }

  private servable(held: ModelEntry, nowMs: number): boolean {
    const age = nowMs - held.storedAtMs;
    const expires = held.entry.expiresAtSeconds;
    return age >= 0 && age < this.options.ttlMs && (expires === undefined || expires * 1000 > nowMs - (nowMs % 1000));
  }

  bytes(): number {
    return [...this.held.values()].reduce((sum, held) => sum + held.bytes, 0);
  }

  private victim(keep: string, nowMs: number): string {
    const others = [...this.held.entries()].filter(([key]) => key !== keep);
    const minBy = (score: (held: ModelEntry) => number[]) =>
      others.reduce((best, candidate) => (compare(score(candidate[1]), score(best[1])) < 0 ? candidate : best))[0];
    switch (this.options.policy) {
      case 'lru':
        return minBy((held) => [held.usedTick]);
      case 'fifo':
        return minBy((held) => [held.storedTick]);
      case 'lfu': {
        const oldest = minBy((held) => [held.storedTick]);
        if (!this.servable(this.held.get(oldest)!, nowMs)) return oldest;
        return minBy((held) => [held.uses, held.usedTick]);
      }
    }
  }
}

function compare(a: number[], b: number[]): number {
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

type PutOp = {
  kind: 'put';
  key: number;
  version: number;
  valueBytes: number;
  shape: 'value' | 'tombstone' | 'blob';
  expiresAfterSeconds?: number;
};
type Op = PutOp | { kind: 'get'; key: number } | { kind: 'delete'; key: number } | { kind: 'advance'; ms: number };

const keyArb = fc.integer({ min: 0, max: 5 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record(
      {
        kind: fc.constant('put' as const),
        key: keyArb,
        version: fc.integer({ min: 0, max: 8 }),
        valueBytes: fc.integer({ min: 0, max: 150 }),
        shape: fc.constantFrom('value' as const, 'value' as const, 'tombstone' as const, 'blob' as const),
        expiresAfterSeconds: fc.integer({ min: 0, max: 3 }),
      },
      { requiredKeys: ['kind', 'key', 'version', 'valueBytes', 'shape'] },
    ),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('get' as const), key: keyArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), key: keyArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 800 }) }) },
);

function entryOfOp(op: PutOp, nowMs: number): CacheEntry {
  const expires = op.expiresAfterSeconds === undefined ? {} : { expiresAtSeconds: Math.floor(nowMs / 1000) + op.expiresAfterSeconds };
  if (op.shape === 'tombstone') return { ...tombstone(op.version), ...expires };
  if (op.shape === 'blob')
    return { version: op.version, tombstone: false, contentType: 'b', size: op.valueBytes * 1000, sha256: 's', ...expires };
  return { ...valueEntry(op.version, op.valueBytes), ...expires };
}

/** A put's boolean, or every field of an entry but its value bytes (they follow the version). */
const describeResult = (result: unknown) => {
  if (typeof result !== 'object' || result === null) return String(result);
  const entry = result as CacheEntry;
  return `v${entry.version} ${entry.tombstone ? 'tomb' : 'value'} ${entry.size}B${entry.value ? '' : ' no-value'} exp=${entry.expiresAtSeconds}`;
};

describe('L1Cache under random operations (model-based)', () => {
  const keys = [0, 1, 2, 3, 4, 5].map((i) => cacheKeyOf('ns', `key-${i}`));

  it.each(policies)('%s keeps its bounds and version guard, and agrees with a naive model on every result and victim', (policy) => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 80, max: 500 }),
        fc.integer({ min: 1, max: 1_500 }),
        fc.array(opArb, { minLength: 5, maxLength: 100, size: 'max' }),
        (entriesMax, bytesMax, ttlMs, ops) => {
          // Prepare
          const clock = new ManualClock(1_700_000_000_500);
          const options = { policy, entriesMax, bytesMax, ttlMs };
          const cache = new L1Cache({ ...options, clock });
          const model = new Model(options);
          for (const op of ops) {
            const before = new Map(keys.map((key) => [key, cache.peek(key)]));
            // Act
            let result: unknown;
            let expected: unknown;
            if (op.kind === 'advance') {
              clock.now += op.ms;
            } else if (op.kind === 'delete') {
              cache.delete(keys[op.key]!);
              model.held.delete(keys[op.key]!);
            } else if (op.kind === 'get') {
              result = cache.get(keys[op.key]!);
              expected = model.get(keys[op.key]!, clock.now);
            } else {
              const entry = entryOfOp(op, clock.now);
              result = cache.put(keys[op.key]!, entry);
              expected = model.put(keys[op.key]!, entry, clock.now);
            }
            // Assess: invariants stated without the model (expect only on a mismatch: it is slow)
            const stats = cache.stats;
            const held = keys.flatMap((key) => {
              const entry = cache.peek(key);
              return entry ? [{ key, entry }] : [];
            });
            const heldBytes = held.reduce((sum, { key, entry }) => sum + entryBytesOf(key, entry), 0);
            if (stats.entries > entriesMax || stats.bytes > bytesMax || stats.entries !== held.length || stats.bytes !== heldBytes) {
              expect({ ...stats, heldEntries: held.length, heldBytes }).toEqual({ entriesMax, bytesMax });
            }
            // put never replaces a higher version with a lower one
            for (const { key, entry } of held)
              if (entry.version < (before.get(key)?.version ?? -1)) expect({ key, entry }).toBe('never older');
            // a refused put evicts nothing; at most it drops its own key's older version
            if (op.kind === 'put' && result === false) {
              for (const key of keys) if (key !== keys[op.key] && cache.peek(key) !== before.get(key)) expect(key).toBe('untouched');
            }
            // Assess: against the model, results and who is held (so every victim)
            const [actual, modelled] = [describeResult(result), describeResult(expected)];
            if (actual !== modelled) expect(actual).toBe(modelled);
            const [heldNow, heldModel] = [
              keys.map((key) => describeResult(cache.peek(key))),
              keys.map((key) => describeResult(model.held.get(key)?.entry)),
            ];
            if (heldNow.join() !== heldModel.join()) expect(heldNow).toEqual(heldModel);
            const modelStats = { ...model.stats, entries: model.held.size, bytes: model.bytes() };
            if (JSON.stringify(stats) !== JSON.stringify(modelStats)) expect(stats).toEqual(modelStats);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
