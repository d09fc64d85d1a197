// The blob store that loads the S3 adapter on first use: one load however many calls race for it, every
// argument forwarded, and a failed load retried by the next call instead of failing the instance for good.
import { DeferredBlobStore } from '../../../lambdas/adapters/deferred-blob-store';
import type { BlobStore } from '../../../lambdas/ports';

function recordingStore(calls: unknown[][]): BlobStore {
  const record =
    <T>(name: string, answer: T) =>
    async (...args: unknown[]) => {
      calls.push([name, ...args]);
      return answer;
    };
  return {
    put: record('put', undefined),
    get: record('get', new Uint8Array([1, 2])),
    size: record('size', 2),
    sha256: record('sha256', 'ab'),
    copy: record('copy', undefined),
    delete: record('delete', undefined),
    presignPut: record('presignPut', { url: 'https://put', headers: { a: 'b' } }),
    presignGet: record('presignGet', 'https://get'),
  };
}

describe('DeferredBlobStore', () => {
  it('loads nothing until the first call, then loads once for calls that race', async () => {
    const calls: unknown[][] = [];
    const load = jest.fn(async () => recordingStore(calls));
    const store = new DeferredBlobStore(load);
    expect(load).not.toHaveBeenCalled();

    await Promise.all([store.size('a'), store.size('b'), store.get('c')]);
    expect(load).toHaveBeenCalledTimes(1);
    expect(calls).toEqual([
      ['size', 'a'],
      ['size', 'b'],
      ['get', 'c'],
    ]);
  });

  it('forwards every method with its arguments and answer', async () => {
    const calls: unknown[][] = [];
    const store = new DeferredBlobStore(async () => recordingStore(calls));
    const bytes = new Uint8Array([7]);

    await store.put('k', bytes, 'text/plain');
    expect(await store.get('k')).toEqual(new Uint8Array([1, 2]));
    expect(await store.size('k')).toBe(2);
    expect(await store.sha256('k')).toBe('ab');
    await store.copy('k', 'l');
    await store.delete('l');
    expect(await store.presignPut('k', { contentType: 'text/plain', expiresInSeconds: 5 })).toEqual({
      url: 'https://put',
      headers: { a: 'b' },
    });
    expect(await store.presignGet('k', { expiresInSeconds: 5 })).toBe('https://get');
    expect(calls).toEqual([
      ['put', 'k', bytes, 'text/plain'],
      ['get', 'k'],
      ['size', 'k'],
      ['sha256', 'k'],
      ['copy', 'k', 'l'],
      ['delete', 'l'],
      ['presignPut', 'k', { contentType: 'text/plain', expiresInSeconds: 5 }],
      ['presignGet', 'k', { expiresInSeconds: 5 }],
    ]);
  });

  it('fails the calls of a failed load and loads again on the next call', async () => {
    const calls: unknown[][] = [];
    const load = jest
      .fn<Promise<BlobStore>, []>()
      .mockRejectedValueOnce(new Error('module not found'))
      .mockResolvedValue(recordingStore(calls));
    const store = new DeferredBlobStore(load);

    await expect(store.size('a')).rejects.toThrow('module not found');
    expect(await store.size('a')).toBe(2);
    expect(load).toHaveBeenCalledTimes(2);
  });
});
