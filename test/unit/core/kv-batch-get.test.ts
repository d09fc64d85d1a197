// Batch get in the core (lambdas/core/kv-batch-reads.ts): each key read as a single GET reads it, in request
// order, with the answer's value budget, the input rules, the rate quota's charge and the failures that fail it all.
import fc from 'fast-check';
import type { KvService } from '../../../lambdas/core/kv';
import { batchGetReadsInFlight, validateBatchKeys } from '../../../lambdas/core/kv-batch-reads';
import { tokenOf } from '../../../lambdas/core/ring';
import type { StoredItem } from '../../../lambdas/ports';
import { limits } from '../../../schemas/topology';
import { codeOf } from '../../support/errors';
import { text, decode } from '../../support/bytes';
import { ManualClock, MemoryBlobStore, MemoryShardStore, memoryKv, memoryReplication, staticRing } from '../../support/memory-ports';

/** Counts the shard reads, and how many ran at once at most. */
class CountingShards extends MemoryShardStore {
  reads = 0;
  inFlight = 0;
  inFlightMax = 0;
  override async get(table: string, namespace: string, key: string): Promise<StoredItem | undefined> {
    this.reads += 1;
    this.inFlight += 1;
    this.inFlightMax = Math.max(this.inFlightMax, this.inFlight);
    try {
      await new Promise((resolve) => setImmediate(resolve));
      return await super.get(table, namespace, key);
    } finally {
      this.inFlight -= 1;
    }
  }
}

function setup(overrides: Partial<typeof limits> = {}) {
  const shards = new CountingShards();
  const blobs = new MemoryBlobStore();
  const clock = new ManualClock();
  const ring = staticRing(4);
  const { replication, health } = memoryReplication(shards, clock);
  const kv = memoryKv({ shards, blobs, ring, clock, replication, health, limits: { ...limits, ...overrides } });
  const put = (key: string, value: string, options: { ttlSeconds?: number; namespace?: string } = {}) =>
    kv.put(options.namespace ?? 'ns', key, {
      value: text(value),
      contentType: 'text/plain',
      consistency: 'strong',
      ...(options.ttlSeconds === undefined ? {} : { ttlSeconds: options.ttlSeconds }),
    });
  return { kv, shards, blobs, clock, ring, put };
}

/** The entries as plain data: what a test compares. */
const plain = (entries: Awaited<ReturnType<KvService['batchGet']>>) =>
  entries.map((entry) =>
    !entry.found
      ? entry
      : {
          key: entry.key,
          version: entry.item.version,
          value: entry.value.kind === 'inline' ? decode(entry.value.value) : entry.value.kind,
        },
  );

describe('KvService.batchGet', () => {
  it('answers every key in request order: found with its version and value, absent, deleted or expired as not found', async () => {
    // Prepare: keys live, overwritten, deleted, expired, never written.
    const { kv, put, clock } = setup();
    await put('a', 'one');
    await put('b', 'two');
    await put('b', 'two again');
    await put('gone', 'x');
    await kv.delete('ns', 'gone', { consistency: 'strong' });
    await put('brief', 'x', { ttlSeconds: 5 });
    clock.advanceSeconds(5);

    // Act
    const entries = await kv.batchGet('ns', ['b', 'never', 'gone', 'a', 'brief'], { consistency: 'eventual' });

    // Assess
    expect(plain(entries)).toEqual([
      { key: 'b', version: 2, value: 'two again' },
      { key: 'never', found: false },
      { key: 'gone', found: false },
      { key: 'a', version: 1, value: 'one' },
      { key: 'brief', found: false },
    ]);
  });

  it('gives each key what a single get of it gives, at either consistency', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), { minLength: 1, maxLength: 6 }),
        fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c', 'd'), fc.boolean()), { maxLength: 12 }),
        fc.constantFrom('eventual' as const, 'strong' as const),
        async (keys, writes, consistency) => {
          // Prepare: a history of puts (true) and deletes (false).
          const { kv, put } = setup();
          for (const [key, isPut] of writes) {
            if (isPut) await put(key, `${key}${writes.length}`);
            else await kv.delete('ns', key, { consistency: 'strong' }).catch(() => undefined);
          }

          // Act
          const entries = await kv.batchGet('ns', keys, { consistency });

          // Assess: each entry is the single get's answer.
          const singles = await Promise.all(
            keys.map((key) =>
              kv.get('ns', key, consistency).then(
                (read) => ({ key, version: read.item.version, value: read.kind === 'value' ? decode(read.value) : 'url' }),
                () => ({ key, found: false }),
              ),
            ),
          );
          expect(plain(entries)).toEqual(singles);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("reads the caller's namespace only", async () => {
    const { kv, put } = setup();
    await put('shared-name', 'mine', { namespace: 'a' });
    await put('other', 'theirs', { namespace: 'b' });

    const entries = await kv.batchGet('b', ['shared-name', 'other'], { consistency: 'strong' });

    expect(plain(entries)).toEqual([
      { key: 'shared-name', found: false },
      { key: 'other', version: 1, value: 'theirs' },
    ]);
  });

  it.each([
    { what: 'no key', keys: [], code: 'request.invalid', message: /1 to 100 keys \(got 0\)/, details: { field: 'keys', limit: 100 } },
    {
      what: '101 keys',
      keys: Array.from({ length: 101 }, (_, n) => `k${n}`),
      code: 'request.invalid',
      message: /1 to 100 keys \(got 101\)/,
      details: { field: 'keys', limit: 100, count: 101 },
    },
    {
      what: 'keys named twice',
      keys: ['a', 'b', 'a', 'c', 'b'],
      code: 'request.invalid',
      message: /named more than once: "a", "b"/,
      details: { duplicates: ['a', 'b'] },
    },
    {
      what: 'an empty key',
      keys: ['a', ''],
      code: 'kv.keyInvalid',
      message: /keys\.1 "": key must not be empty/,
      details: { field: 'keys.1', key: '' },
    },
    {
      what: 'a key over 1024 bytes',
      keys: ['x'.repeat(1025)],
      code: 'kv.keyInvalid',
      message: /keys\.0 "x{64}…": key is 1025 bytes/,
      details: { field: 'keys.0', limit: 1024 },
    },
    {
      what: 'a lone surrogate',
      keys: ['ok', '\ud800'],
      code: 'kv.keyInvalid',
      message: /keys\.1 .*not well-formed/,
      details: { field: 'keys.1' },
    },
  ])('refuses $what with $code naming it, before admitting or reading any', async ({ keys, code, message, details }) => {
    const { kv, shards } = setup();
    const admit = jest.fn(async () => undefined);

    const error = await kv.batchGet('ns', keys, { consistency: 'eventual', admit }).catch((caught: unknown) => caught);

    expect(error).toMatchObject({ code, details });
    expect((error as Error).message).toMatch(message);
    expect(admit).not.toHaveBeenCalled();
    expect(shards.reads).toBe(0);
  });

  it('admits the batch as that many reads before it reads; a refusal reads nothing', async () => {
    const { kv, shards, put } = setup();
    await put('a', '1');
    const reads = shards.reads;
    const admitted: number[] = [];

    await kv.batchGet('ns', ['a', 'b', 'c'], { consistency: 'strong', admit: async (count) => void admitted.push(count) });
    const refused = kv.batchGet('ns', ['a'], {
      consistency: 'strong',
      admit: async () => Promise.reject(Object.assign(new Error('over the rate'), { code: 'quota.rate' })),
    });

    expect(admitted).toEqual([3]);
    await expect(refused).rejects.toThrow('over the rate');
    expect(shards.reads).toBe(reads + 3);
  });

  it('sends a value kept in S3 as a presigned URL, and leaves out inline values past the budget, in request order', async () => {
    // Prepare: a budget of 10 bytes; values of 4, 4, 4 and 1 bytes, and one over the inline limit.
    const { kv, put } = setup({ batchGetValueBytesMax: 10 });
    for (const key of ['a', 'b', 'c']) await put(key, 'four');
    await put('d', '1');
    const big = new Uint8Array(limits.inlineValueBytesMax + 1).fill(1);
    await kv.put('ns', 'big', { value: big, contentType: 'application/octet-stream' });

    // Act
    const entries = await kv.batchGet('ns', ['big', 'a', 'b', 'c', 'd'], { consistency: 'strong' });

    // Assess: a and b fill 8 of the 10 bytes, c does not fit, d does; big's URL costs no budget.
    expect(entries.map((entry) => (entry.found ? entry.value : undefined))).toEqual([
      { kind: 'url', url: expect.stringMatching(/^memory:\/\/get\/blobs\/ns\//) },
      { kind: 'inline', value: text('four') },
      { kind: 'inline', value: text('four') },
      { kind: 'omitted' },
      { kind: 'inline', value: text('1') },
    ]);
    expect(entries[0]).toMatchObject({ found: true, item: { size: big.byteLength, version: 1 } });
  });

  it('fails the whole batch, naming the key, when no copy of a key can answer; a missing key is no failure', async () => {
    // Prepare: a key whose owner is down (strong), and a key whose every replica is down (eventual).
    const { kv, shards, put, ring } = setup();
    await put('here', 'x');
    const replicas = (await ring.current()).replicasOf(tokenOf('ns', 'lost'));
    shards.down.add(replicas[0]!.table);

    // Act
    const strong = await kv.batchGet('ns', ['missing', 'lost'], { consistency: 'strong' }).catch((caught: unknown) => caught);
    for (const replica of replicas) shards.down.add(replica.table);
    const eventual = await kv.batchGet('ns', ['lost'], { consistency: 'eventual' }).catch((caught: unknown) => caught);

    // Assess: the answer a GET of the key has, with the key.
    expect(strong).toMatchObject({ code: 'shard.unavailable', retryable: true, details: { key: 'lost' } });
    expect(eventual).toMatchObject({ code: 'shard.unavailable', retryable: true, details: { key: 'lost' } });
    expect(await codeOf(kv.get('ns', 'lost', 'eventual'))).toBe('shard.unavailable');
  });

  it(`reads at most ${batchGetReadsInFlight} keys at once`, async () => {
    const { kv, shards } = setup();
    const keys = Array.from({ length: limits.batchGetKeysMax }, (_, n) => `k${n}`);

    const entries = await kv.batchGet('ns', keys, { consistency: 'strong' });

    expect(entries).toHaveLength(limits.batchGetKeysMax);
    expect(shards.inFlightMax).toBe(batchGetReadsInFlight);
  });
});

describe('validateBatchKeys', () => {
  it('takes 1 to the limit of distinct valid keys', () => {
    expect(() => validateBatchKeys(['a'], limits)).not.toThrow();
    expect(() =>
      validateBatchKeys(
        Array.from({ length: limits.batchGetKeysMax }, (_, n) => `k${n}`),
        limits,
      ),
    ).not.toThrow();
  });
});
