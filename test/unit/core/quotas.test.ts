// Per-namespace quotas in the core: the shared rate bucket's bound across instances, and what a write
// charges to its namespace's storage usage.
import fc from 'fast-check';
import { isRingstoreError, RingstoreError } from '../../../lambdas/core/errors';
import {
  leaseTokensOf,
  NamespaceRateLimiter,
  rateLeaseLifetimeMs,
  StorageChargingWriter,
  storageChargeOf,
  storageQuotaExceeded,
} from '../../../lambdas/core/quotas';
import type { ItemWrite, RateLimitStore, RateTake, StoredItem } from '../../../lambdas/ports';
import { ManualClock } from '../../support/memory-ports';

/** The store's contract (ports/quotas.ts) on one process: the GCRA step, atomically. */
class MemoryRateBuckets implements RateLimitStore {
  readonly tat = new Map<string, number>();
  takes = 0;

  async take(namespace: string, request: { nowMs: number; costMs: number; toleranceMs: number }): Promise<RateTake> {
    this.takes += 1;
    const tat = Math.max(this.tat.get(namespace) ?? request.nowMs, request.nowMs);
    if (tat + request.costMs - request.nowMs > request.toleranceMs) return { granted: false, tatMs: tat };
    this.tat.set(namespace, tat + request.costMs);
    return { granted: true };
  }
}

async function admitted(limiter: NamespaceRateLimiter, namespace: string, rate: { requestsPerSecond: number; burst: number }) {
  try {
    await limiter.admit(namespace, rate);
    return true;
  } catch (error) {
    if (isRingstoreError(error, 'quota.rate')) return false;
    throw error;
  }
}

describe('NamespaceRateLimiter', () => {
  it('never admits more than burst + rate × elapsed across any number of instances sharing the bucket', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2000 }),
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.tuple(fc.nat({ max: 5 }), fc.integer({ min: 0, max: 300 })), { minLength: 1, maxLength: 300 }),
        async (requestsPerSecond, burst, instanceCount, steps) => {
          // Prepare: instances of the limiter (Lambda instances) on one bucket and one clock.
          const clock = new ManualClock();
          const store = new MemoryRateBuckets();
          const instances = Array.from({ length: instanceCount }, () => new NamespaceRateLimiter({ store, clock }));
          const rate = { requestsPerSecond, burst };
          const start = clock.now;
          let granted = 0;
          // Act: each step, one instance gets a request, after some milliseconds.
          for (const [instance, waitMs] of steps) {
            clock.now += waitMs;
            if (await admitted(instances[instance % instanceCount]!, 'ns', rate)) granted += 1;
          }
          // Assess: the bucket's bound holds for what every instance admitted together.
          expect(granted).toBeLessThanOrEqual(burst + (requestsPerSecond * (clock.now - start)) / 1000 + 1e-9);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('refuses with quota.rate, the limit and a whole number of seconds to wait, and asks the store nothing while refused', async () => {
    const clock = new ManualClock();
    const store = new MemoryRateBuckets();
    const limiter = new NamespaceRateLimiter({ store, clock });
    const rate = { requestsPerSecond: 2, burst: 3 };
    for (let request = 0; request < 3; request += 1) await limiter.admit('ns', rate);

    const refusal = await limiter.admit('ns', rate).catch((error: unknown) => error);
    expect(refusal).toMatchObject({
      code: 'quota.rate',
      retryable: true,
      details: { limit: 'rate', requestsPerSecond: 2, burst: 3, retryAfterSeconds: 1 },
    });
    const takes = store.takes;
    for (let request = 0; request < 20; request += 1) expect(await admitted(limiter, 'ns', rate)).toBe(false);
    expect(store.takes).toBe(takes);

    clock.now += 500; // one token's worth at 2/s
    expect(await admitted(limiter, 'ns', rate)).toBe(true);
  });

  it('keeps namespaces apart: one over its rate does not refuse another', async () => {
    const clock = new ManualClock();
    const limiter = new NamespaceRateLimiter({ store: new MemoryRateBuckets(), clock });
    const rate = { requestsPerSecond: 1, burst: 1 };
    expect(await admitted(limiter, 'noisy', rate)).toBe(true);
    expect(await admitted(limiter, 'noisy', rate)).toBe(false);
    expect(await admitted(limiter, 'quiet', rate)).toBe(true);
  });

  it('admits when the bucket table does not answer (an outage of the limiter store is not one of the API), and still fails on a bug', async () => {
    const clock = new ManualClock();
    const rate = { requestsPerSecond: 1, burst: 1 };
    const down: RateLimitStore = {
      take: () => Promise.reject(new RingstoreError('shard.unavailable', 'rate bucket write failed: ECONNREFUSED', { retryable: true })),
    };
    expect(await admitted(new NamespaceRateLimiter({ store: down, clock }), 'ns', rate)).toBe(true);
    const broken: RateLimitStore = { take: () => Promise.reject(new TypeError('not a bucket')) };
    await expect(new NamespaceRateLimiter({ store: broken, clock }).admit('ns', rate)).rejects.toThrow(TypeError);
  });

  it('takes a lease of tokens per store request, and drops what is left of it after its lifetime', async () => {
    const clock = new ManualClock();
    const store = new MemoryRateBuckets();
    const limiter = new NamespaceRateLimiter({ store, clock });
    const rate = { requestsPerSecond: 1000, burst: 2000 };
    expect(leaseTokensOf(rate)).toBe(50);
    for (let request = 0; request < 50; request += 1) await limiter.admit('ns', rate);
    expect(store.takes).toBe(1);
    await limiter.admit('ns', rate);
    expect(store.takes).toBe(2);
    clock.now += rateLeaseLifetimeMs;
    await limiter.admit('ns', rate);
    expect(store.takes).toBe(3);
  });

  it('shares one store request among concurrent requests of one instance', async () => {
    const clock = new ManualClock();
    const store = new MemoryRateBuckets();
    const limiter = new NamespaceRateLimiter({ store, clock });
    const rate = { requestsPerSecond: 200, burst: 400 };
    await Promise.all(Array.from({ length: leaseTokensOf(rate) }, () => limiter.admit('ns', rate)));
    expect(store.takes).toBe(1);
  });

  it('admits a count of requests as that many single ones (a batch get of n keys): n tokens, refused past the bucket', async () => {
    // Prepare: two limiters on one bucket each, a burst of 10.
    const clock = new ManualClock();
    const rate = { requestsPerSecond: 1, burst: 10 };
    const counted = new NamespaceRateLimiter({ store: new MemoryRateBuckets(), clock });
    const single = new NamespaceRateLimiter({ store: new MemoryRateBuckets(), clock });

    // Act: 7 at once, then 3 one by one; then one more of each.
    await counted.admit('ns', rate, 7);
    for (let request = 0; request < 3; request += 1) await counted.admit('ns', rate);
    for (let request = 0; request < 10; request += 1) await single.admit('ns', rate);

    // Assess: the counted limiter is as empty as the one that took 10 single requests.
    expect(await admitted(counted, 'ns', rate)).toBe(false);
    expect(await admitted(single, 'ns', rate)).toBe(false);
    clock.now += 1000;
    await expect(counted.admit('ns', rate, 2)).rejects.toMatchObject({ code: 'quota.rate' });
  });

  it('sizes a lease from the rate, at least one token and never more than the burst', () => {
    expect(leaseTokensOf({ requestsPerSecond: 1, burst: 1 })).toBe(1);
    expect(leaseTokensOf({ requestsPerSecond: 10_000, burst: 20_000 })).toBe(100);
    expect(leaseTokensOf({ requestsPerSecond: 1000, burst: 3 })).toBe(3);
  });
});

describe('storageChargeOf', () => {
  const item = (size: number, tombstone = false): StoredItem => ({
    namespace: 'ns',
    key: 'k',
    version: 4,
    token: 1,
    contentType: 'text/plain',
    size,
    sha256: '',
    tombstone,
  });
  const content = (size: number) => ({ contentType: 'text/plain', size, sha256: '' });
  const quota = { keysMax: 10 };

  it('counts a new key, a replaced value by its size change, a delete as a key and its bytes freed', () => {
    expect(storageChargeOf(undefined, content(7), quota)).toEqual({ expectVersion: undefined, keysDelta: 1, bytesDelta: 7, quota });
    expect(storageChargeOf(item(5), content(7), quota)).toEqual({ expectVersion: 4, keysDelta: 0, bytesDelta: 2, quota });
    expect(storageChargeOf(item(5), undefined, quota)).toEqual({ expectVersion: 4, keysDelta: -1, bytesDelta: -5, quota });
  });

  it('counts nothing for a tombstone: writing over one adds a key, deleting it again frees none', () => {
    expect(storageChargeOf(item(0, true), content(3), quota)).toMatchObject({ keysDelta: 1, bytesDelta: 3 });
    expect(storageChargeOf(item(0, true), undefined, quota)).toMatchObject({ keysDelta: 0, bytesDelta: 0 });
  });

  it("charges a rule's bytes to the rule's namespace and counts no key (a volume's record: its size)", () => {
    const rule = { namespace: 'owner', bytesOf: (value: Uint8Array | undefined) => (value ? value.length * 1000 : 0) };
    const stored = (size: number): StoredItem => ({ ...item(size), value: new Uint8Array(size) });
    const withValue = (size: number) => ({ ...content(size), value: new Uint8Array(size) });

    expect(storageChargeOf(undefined, withValue(2), quota, rule)).toEqual({
      expectVersion: undefined,
      keysDelta: 0,
      bytesDelta: 2000,
      quota,
      namespace: 'owner',
    });
    expect(storageChargeOf(stored(3), withValue(5), quota, rule)).toMatchObject({ keysDelta: 0, bytesDelta: 2000, namespace: 'owner' });
    expect(storageChargeOf(stored(3), undefined, quota, rule)).toMatchObject({ keysDelta: 0, bytesDelta: -3000 });
    expect(storageChargeOf(item(0, true), withValue(1), quota, rule)).toMatchObject({ keysDelta: 0, bytesDelta: 1000 });
  });

  it('keeps the usage equal to the live keys and bytes, whatever sequence of writes one key sees', () => {
    fc.assert(
      fc.property(fc.array(fc.option(fc.nat({ max: 1000 }), { nil: undefined })), (sizes) => {
        let stored: StoredItem | undefined;
        const usage = { keys: 0, bytes: 0 };
        for (const size of sizes) {
          const charge = storageChargeOf(stored, size === undefined ? undefined : content(size), quota);
          usage.keys += charge.keysDelta;
          usage.bytes += charge.bytesDelta;
          stored = size === undefined ? { ...item(0, true), version: (stored?.version ?? 0) + 1 } : { ...item(size), version: 1 };
        }
        const live = stored !== undefined && !stored.tombstone;
        expect(usage).toEqual({ keys: live ? 1 : 0, bytes: live ? stored!.size : 0 });
      }),
    );
  });
});

describe('storageQuotaExceeded', () => {
  it.each(['keys', 'bytes'] as const)('refuses a write over the %s bound as not retryable: only a delete frees room', (limit) => {
    const refusal = storageQuotaExceeded('ns', limit, { keysMax: 10, bytesMax: 1000 });

    expect(refusal).toMatchObject({ code: `quota.${limit}`, retryable: false, details: { limit } });
  });
});

describe('StorageChargingWriter', () => {
  it('answers a counted write with the item it replaced, which the transaction does not return: its value object is then deleted', async () => {
    const replaced: StoredItem = {
      namespace: 'ns',
      key: 'k',
      version: 4,
      token: 1,
      contentType: 'application/octet-stream',
      size: 9_000_000,
      sha256: '',
      tombstone: false,
      blob: { objectKey: 'values/ns/k/4' },
    };
    // As DynamoDB's TransactWriteItems answers a counted write: the version written and no old image.
    const shards = {
      get: async () => replaced,
      write: async () => ({ outcome: 'written' as const, version: 5 }),
    };
    const writer = new StorageChargingWriter({ shards });
    const write: ItemWrite = {
      namespace: 'ns',
      key: 'k',
      token: 1,
      content: { contentType: 'text/plain', size: 3, sha256: '', value: new Uint8Array(3) },
      precondition: { kind: 'none' },
      nowSeconds: 0,
      modifiedAtMs: 0,
    };

    const outcome = await writer.write('t', write, { storageQuota: { bytesMax: 10_000_000 } });

    expect(outcome).toEqual({ outcome: 'written', version: 5, previous: replaced });
  });
});
