import fc from 'fast-check';
import { isRingstoreError } from '../../../lambdas/core/errors';
import { sha256Hex } from '../../../lambdas/core/digest';
import { uploadKey } from '../../../lambdas/core/kv-uploads';
import { limits } from '../../../schemas/topology';
import { ManualClock, MemoryBlobStore, MemoryShardStore, memoryReplication, staticRing, memoryKv } from '../../support/memory-ports';
import { codeOf } from '../../support/errors';
import { text } from '../../support/bytes';

function setup(examineMax?: number) {
  const shards = new MemoryShardStore(examineMax);
  const blobs = new MemoryBlobStore();
  const clock = new ManualClock();
  const { replication, health } = memoryReplication(shards, clock);
  const kv = memoryKv({ shards, blobs, ring: staticRing(4), clock, limits, replication, health });
  return { kv, shards, blobs, clock };
}

describe('KvService writes and reads', () => {
  it('versions every write, deletes included, and reads back what was written', async () => {
    const { kv } = setup();
    expect(await kv.put('ns', 'k', { value: text('a'), contentType: 'text/plain' })).toEqual({
      key: 'k',
      version: 1,
      consistency: 'eventual',
    });
    expect(await kv.put('ns', 'k', { value: text('b'), contentType: 'text/plain' })).toEqual({
      key: 'k',
      version: 2,
      consistency: 'eventual',
    });
    const read = await kv.get('ns', 'k', 'strong');
    expect(read.kind === 'value' && Buffer.from(read.value).toString()).toBe('b');
    expect(read.item.contentType).toBe('text/plain');
    expect(await kv.delete('ns', 'k', {})).toEqual({ key: 'k', version: 3, consistency: 'eventual' });
    expect(await codeOf(kv.get('ns', 'k', 'strong'))).toBe('kv.notFound');
    expect(await kv.put('ns', 'k', { value: text('c'), contentType: 'text/plain' })).toEqual({
      key: 'k',
      version: 4,
      consistency: 'eventual',
    });
  });

  it('keeps namespaces apart', async () => {
    const { kv } = setup();
    await kv.put('a', 'k', { value: text('secret'), contentType: 'text/plain' });
    expect(await codeOf(kv.get('b', 'k', 'eventual'))).toBe('kv.notFound');
    expect((await kv.list('b', { prefix: '', limit: 10 })).items).toEqual([]);
  });

  it('enforces If-Match and If-None-Match and changes nothing when they fail', async () => {
    const { kv } = setup();
    await kv.put('ns', 'k', { value: text('v1'), contentType: 'text/plain', ifNoneMatch: '*' });
    expect(await codeOf(kv.put('ns', 'k', { value: text('x'), contentType: 'text/plain', ifNoneMatch: '*' }))).toBe(
      'kv.preconditionFailed',
    );
    expect(await codeOf(kv.put('ns', 'k', { value: text('x'), contentType: 'text/plain', ifMatch: [7] }))).toBe('kv.preconditionFailed');
    expect(await codeOf(kv.delete('ns', 'k', { ifMatch: [7] }))).toBe('kv.preconditionFailed');
    expect(await kv.put('ns', 'k', { value: text('v2'), contentType: 'text/plain', ifMatch: [1] })).toEqual({
      key: 'k',
      version: 2,
      consistency: 'eventual',
    });
    const read = await kv.get('ns', 'k', 'strong');
    expect(read.kind === 'value' && Buffer.from(read.value).toString()).toBe('v2');
    // Both headers together are allowed now; these two can never hold at once.
    expect(await codeOf(kv.put('ns', 'k', { value: text('x'), contentType: 'a', ifMatch: [2], ifNoneMatch: '*' }))).toBe(
      'kv.preconditionFailed',
    );
    expect((await kv.head('ns', 'k', 'strong')).version).toBe(2);
  });

  it('answers 404 for deleting a missing key and If-Match on a missing key fails', async () => {
    const { kv } = setup();
    expect(await codeOf(kv.delete('ns', 'nope', {}))).toBe('kv.notFound');
    expect(await codeOf(kv.put('ns', 'nope', { value: text('x'), contentType: 'a', ifMatch: [1] }))).toBe('kv.preconditionFailed');
  });

  it('expires keys at their TTL even before the store removes them, and then allows If-None-Match', async () => {
    const { kv, clock } = setup();
    await kv.put('ns', 'k', { value: text('x'), contentType: 'a', ttlSeconds: 10 });
    clock.advanceSeconds(9);
    expect((await kv.head('ns', 'k', 'eventual')).version).toBe(1);
    clock.advanceSeconds(1);
    expect(await codeOf(kv.get('ns', 'k', 'eventual'))).toBe('kv.notFound');
    expect((await kv.list('ns', { prefix: '', limit: 10 })).items).toEqual([]);
    expect(await kv.put('ns', 'k', { value: text('y'), contentType: 'a', ifNoneMatch: '*' })).toEqual({
      key: 'k',
      version: 2,
      consistency: 'eventual',
    });
    expect(await codeOf(kv.put('ns', 'k', { value: text('y'), contentType: 'a', ttlSeconds: 0 }))).toBe('kv.ttlInvalid');
  });

  it('keeps values over the inline limit in the blob store, and removes the old blob on overwrite', async () => {
    const { kv, blobs } = setup();
    const big = new Uint8Array(limits.inlineValueBytesMax + 1).fill(7);
    await kv.put('ns', 'big', { value: big, contentType: 'application/octet-stream' });
    expect(blobs.objects.size).toBe(1);
    const read = await kv.get('ns', 'big', 'strong');
    expect(read.kind === 'value' && sha256Hex(read.value)).toBe(sha256Hex(big));
    await kv.put('ns', 'big', { value: text('small now'), contentType: 'text/plain' });
    expect(blobs.objects.size).toBe(0);
  });

  it('refuses a direct body over 4 MiB with a pointer to the upload flow', async () => {
    const { kv } = setup();
    const error = await kv
      .put('ns', 'k', { value: new Uint8Array(limits.directBodyBytesMax + 1), contentType: 'a' })
      .catch((e: unknown) => e);
    expect(isRingstoreError(error, 'kv.valueTooLarge')).toBe(true);
    expect((error as Error).message).toMatch(/uploads/);
  });
});

describe('KvService uploads', () => {
  it('commits uploaded bytes after checking the sha256, and redirects reads of values over 4 MiB', async () => {
    const { kv, blobs } = setup();
    const ticket = await kv.createUpload('ns', 'huge', { contentType: 'application/octet-stream', size: 5 * 1024 * 1024 });
    const bytes = new Uint8Array(5 * 1024 * 1024).fill(1);
    await blobs.put(uploadKey('ns', 'huge', ticket.uploadId), bytes);
    expect(await codeOf(kv.commitUpload('ns', 'huge', ticket.uploadId, { sha256: '0'.repeat(64), contentType: 'a' }))).toBe(
      'kv.checksumMismatch',
    );
    expect(await kv.commitUpload('ns', 'huge', ticket.uploadId, { sha256: sha256Hex(bytes), contentType: 'a' })).toEqual({
      key: 'huge',
      version: 1,
      consistency: 'eventual',
    });
    const read = await kv.get('ns', 'huge', 'eventual');
    expect(read.kind).toBe('redirect');
    expect([...blobs.objects.keys()].every((key) => key.startsWith('blobs/'))).toBe(true);
  });

  it('binds an upload to its namespace and key', async () => {
    const { kv, blobs } = setup();
    const ticket = await kv.createUpload('a', 'k', { contentType: 'x' });
    await blobs.put(uploadKey('a', 'k', ticket.uploadId), text('x'));
    expect(await codeOf(kv.commitUpload('b', 'k', ticket.uploadId, { sha256: sha256Hex('x'), contentType: 'x' }))).toBe(
      'kv.uploadNotFound',
    );
    expect(await codeOf(kv.commitUpload('a', 'other', ticket.uploadId, { sha256: sha256Hex('x'), contentType: 'x' }))).toBe(
      'kv.uploadNotFound',
    );
    expect(await codeOf(kv.commitUpload('a', 'k', '../../etc', { sha256: sha256Hex('x'), contentType: 'x' }))).toBe('kv.uploadNotFound');
  });
});

describe('KvService.list', () => {
  it('pages through every live key exactly once, in order, whatever the page size and shard page bounds', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6 }), { minLength: 0, maxLength: 60 }),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.boolean(), { minLength: 60, maxLength: 60 }),
        async (keys, limit, examineMax, deleted) => {
          const { kv } = setup(examineMax);
          for (const key of keys) await kv.put('ns', key, { value: text(key), contentType: 'text/plain' });
          const live = keys.filter((_, i) => !deleted[i]);
          for (const [i, key] of keys.entries()) if (deleted[i]) await kv.delete('ns', key, {});
          const seen: string[] = [];
          let cursor: string | undefined;
          for (let pages = 0; pages < 500; pages += 1) {
            const page = await kv.list('ns', { prefix: '', limit, ...(cursor ? { cursor } : {}) });
            expect(page.items.length).toBeLessThanOrEqual(limit);
            seen.push(...page.items.map((item) => item.key));
            cursor = page.cursor;
            if (!cursor) break;
          }
          const expected = [...live].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
          expect(seen).toEqual(expected);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('filters by prefix and validates the limit', async () => {
    const { kv } = setup();
    for (const key of ['a/1', 'a/2', 'b/1']) await kv.put('ns', key, { value: text(key), contentType: 'text/plain' });
    expect((await kv.list('ns', { prefix: 'a/', limit: 10 })).items.map((i) => i.key)).toEqual(['a/1', 'a/2']);
    expect(await codeOf(kv.list('ns', { prefix: '', limit: 0 }))).toBe('request.invalid');
  });
});
