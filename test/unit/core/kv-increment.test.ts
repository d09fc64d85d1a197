// Atomic increments in the core (lambdas/core/kv-increments.ts): a missing key starts at 0, the sum is one
// versioned write of decimal text, bad counters and sums are refused changing nothing, conditions hold as a PUT's,
// and concurrent increments never lose one (each round is guarded by the version read, and lost rounds retried).
import fc from 'fast-check';
import { PreconditionFailedError, RingstoreError } from '../../../lambdas/core/errors';
import { incrementAttemptsMax, incrementBackoffMsMax, KvIncrements } from '../../../lambdas/core/kv-increments';
import type { ItemWrite, ItemWriteOutcome, StoredItem } from '../../../lambdas/ports';
import { limits } from '../../../schemas/topology';
import { codeOf } from '../../support/errors';
import { text } from '../../support/bytes';
import { CountingIds, ManualClock, MemoryShardStore, memoryKv, memoryReplication, staticRing } from '../../support/memory-ports';

/** Yields to the event loop a random number of times: the interleavings of concurrent requests. */
const jitter = async (ms: number) => {
  for (let turn = Math.floor(Math.random() * 3); turn >= 0; turn -= 1) await new Promise((resolve) => setImmediate(resolve));
  return ms;
};

/** A store whose reads and writes take a while, as DynamoDB's do: concurrent requests interleave between them. */
class SlowShards extends MemoryShardStore {
  override async get(table: string, namespace: string, key: string): Promise<StoredItem | undefined> {
    await jitter(0);
    return super.get(table, namespace, key);
  }
  override async write(table: string, write: ItemWrite): Promise<ItemWriteOutcome> {
    await jitter(0);
    return super.write(table, write);
  }
}

function setup(options: { sleep?: (ms: number) => Promise<void> } = {}) {
  const shards = new SlowShards();
  const clock = new ManualClock();
  const { replication, health } = memoryReplication(shards, clock);
  const kv = memoryKv({ shards, ring: staticRing(4), clock, replication, health, ...options });
  const read = async (key: string) => {
    const got = await kv.get('ns', key, 'strong');
    return {
      version: got.item.version,
      contentType: got.item.contentType,
      text: got.kind === 'value' ? Buffer.from(got.value).toString() : '',
    };
  };
  return { kv, clock, read };
}

describe('KvService.increment', () => {
  it('starts a missing key at 0 and stores each sum as the next version, decimal text/plain', async () => {
    const { kv, read } = setup();

    const first = await kv.increment('ns', 'hits', { by: 1 });
    const second = await kv.increment('ns', 'hits', { by: 41 });
    const third = await kv.increment('ns', 'hits', { by: -50 });

    expect([first, second, third]).toEqual([
      { key: 'hits', version: 1, consistency: 'eventual', value: 1 },
      { key: 'hits', version: 2, consistency: 'eventual', value: 42 },
      { key: 'hits', version: 3, consistency: 'eventual', value: -8 },
    ]);
    expect(await read('hits')).toEqual({ version: 3, contentType: 'text/plain', text: '-8' });
  });

  it('counts from a decimal value a PUT stored (blanks around it allowed), after a delete from 0, and keeps the expiry', async () => {
    const { kv, clock } = setup();
    await kv.put('ns', 'n', { value: text(' 41\n'), contentType: 'application/octet-stream', ttlSeconds: 60 });
    await kv.put('ns', 'gone', { value: text('7'), contentType: 'text/plain' });
    await kv.delete('ns', 'gone', {});

    const n = await kv.increment('ns', 'n', { by: 1 });
    const gone = await kv.increment('ns', 'gone', { by: 1 });

    expect(n).toMatchObject({ version: 2, value: 42 });
    expect(gone).toMatchObject({ version: 3, value: 1 });
    clock.advanceSeconds(60);
    expect(await codeOf(kv.get('ns', 'n', 'strong'))).toBe('kv.notFound');
  });

  it.each([
    { what: 'text', stored: text('twelve') },
    { what: 'a decimal fraction', stored: text('1.5') },
    { what: 'an exponent', stored: text('1e3') },
    { what: 'an empty value', stored: text('') },
    { what: 'bytes that are not UTF-8', stored: new Uint8Array([0xff, 0x31]) },
    { what: 'a long value', stored: text('1'.repeat(40)) },
    { what: 'a value kept in S3', stored: new Uint8Array(limits.inlineValueBytesMax + 1).fill(0x31) },
  ])('refuses to increment $what with 409 kv.notAnInteger, changing nothing', async ({ stored }) => {
    const { kv } = setup();
    await kv.put('ns', 'k', { value: stored, contentType: 'text/plain' });

    const error = await kv.increment('ns', 'k', { by: 1 }).catch((caught: unknown) => caught);

    expect(error).toMatchObject({ code: 'kv.notAnInteger', details: { key: 'k', size: stored.byteLength } });
    expect((error as Error).message).toMatch(/not a decimal integer; nothing was written/);
    expect((await kv.head('ns', 'k', 'strong')).version).toBe(1);
  });

  it('refuses a sum outside the safe integers, and a stored integer past them, with 409 kv.outOfRange, changing nothing', async () => {
    const { kv, read } = setup();
    await kv.increment('ns', 'big', { by: Number.MAX_SAFE_INTEGER });
    await kv.put('ns', 'huge', { value: text('9007199254740993'), contentType: 'text/plain' });

    expect(await codeOf(kv.increment('ns', 'big', { by: 1 }))).toBe('kv.outOfRange');
    expect(await codeOf(kv.increment('ns', 'huge', { by: -1 }))).toBe('kv.outOfRange');
    expect(await kv.increment('ns', 'big', { by: -Number.MAX_SAFE_INTEGER })).toMatchObject({ value: 0, version: 2 });
    expect((await read('huge')).version).toBe(1);
  });

  it.each([1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1, Infinity])('refuses by = %p with 400 request.invalid naming by', async (by) => {
    const { kv } = setup();

    const error = await kv.increment('ns', 'k', { by }).catch((caught: unknown) => caught);

    expect(error).toMatchObject({ code: 'request.invalid', details: { field: 'by' } });
    expect(await codeOf(kv.head('ns', 'k', 'strong'))).toBe('kv.notFound');
  });

  it('holds If-Match and If-None-Match as a PUT does: 412 naming the header, nothing written', async () => {
    const { kv } = setup();
    await kv.increment('ns', 'c', { by: 1, ifNoneMatch: '*' });

    expect(await codeOf(kv.increment('ns', 'c', { by: 1, ifNoneMatch: '*' }))).toBe('kv.preconditionFailed');
    expect(await kv.increment('ns', 'c', { by: 1, ifMatch: [1] })).toMatchObject({ version: 2, value: 2 });
    const stale = await kv.increment('ns', 'c', { by: 1, ifMatch: [1] }).catch((caught: unknown) => caught);
    expect(stale).toMatchObject({ code: 'kv.preconditionFailed', details: { field: 'if-match' } });
    expect(await codeOf(kv.increment('ns', 'absent', { by: 1, ifMatch: '*' }))).toBe('kv.preconditionFailed');
    expect(await codeOf(kv.increment('ns', 'c', { by: 1, ifMatch: [] }))).toBe('kv.preconditionFailed');
    expect((await kv.head('ns', 'c', 'strong')).version).toBe(2);
    expect(await codeOf(kv.head('ns', 'absent', 'strong'))).toBe('kv.notFound');
  });

  it('is a strong write when asked: acknowledged with its copies on the replicas', async () => {
    const { kv } = setup();

    expect(await kv.increment('ns', 'c', { by: 3, consistency: 'strong' })).toEqual({
      key: 'c',
      version: 1,
      consistency: 'strong',
      copies: 3,
      value: 3,
    });
  });

  it('never loses an increment: concurrent ones end at the sum of those acknowledged, each answered with a distinct value', async () => {
    let lostRounds = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: -5, max: 5 }), { minLength: 1, maxLength: 24 }), async (amounts) => {
        // Prepare: a store whose requests interleave at random, and pauses between rounds that do too.
        const { kv, read } = setup({
          sleep: async (ms) => {
            lostRounds += 1;
            await jitter(ms);
          },
        });

        // Act: every increment at once.
        const outcomes = await Promise.all(
          amounts.map(async (by) => {
            await jitter(0);
            return kv.increment('ns', 'counter', { by }).then(
              (ack) => ({ by, ack }),
              (error: unknown) => ({ by, error }),
            );
          }),
        );

        // Assess: the only refusal is "written by others" (409, retryable); the counter is the sum of the rest.
        const acked = outcomes.flatMap((outcome) => ('ack' in outcome ? [outcome] : []));
        const refused = outcomes.flatMap((outcome) => ('error' in outcome ? [outcome.error] : []));
        for (const error of refused) expect(error).toMatchObject({ code: 'txn.conflict', retryable: true });
        const sum = acked.reduce((total, { by }) => total + by, 0);
        expect(Number((await read('counter')).text)).toBe(sum);
        expect((await read('counter')).version).toBe(acked.length);
        expect(new Set(acked.map(({ ack }) => ack.version)).size).toBe(acked.length);
      }),
      { numRuns: 40 },
    );
    // The runs did race: rounds were lost and made again.
    expect(lostRounds).toBeGreaterThan(0);
  });

  it(`answers 409 txn.conflict (retryable) after ${incrementAttemptsMax} lost rounds, pausing a jittered, bounded time between them`, async () => {
    // Prepare: a writer that always finds the key changed since it was read.
    const pauses: number[] = [];
    let writes = 0;
    const increments = new KvIncrements({
      reader: { readLive: async () => Promise.reject(new RingstoreError('kv.notFound', 'absent')) },
      writer: {
        writeContent: async () => {
          writes += 1;
          throw new PreconditionFailedError('the key changed');
        },
      },
      hooks: { assertWritable: async () => undefined },
      clock: new ManualClock(),
      ids: new CountingIds(),
      limits,
      sleep: async (ms) => void pauses.push(ms),
    });

    const error = await increments.increment('ns', 'hot', { by: 1 }).catch((caught: unknown) => caught);

    expect(error).toMatchObject({ code: 'txn.conflict', retryable: true, details: { key: 'hot', attempts: incrementAttemptsMax } });
    expect(writes).toBe(incrementAttemptsMax);
    expect(pauses).toHaveLength(incrementAttemptsMax - 1);
    pauses.forEach((ms, index) => {
      expect(ms).toBeGreaterThanOrEqual(1);
      expect(ms).toBeLessThanOrEqual(Math.min(incrementBackoffMsMax, 2 ** (index + 1)));
    });
  });
});
