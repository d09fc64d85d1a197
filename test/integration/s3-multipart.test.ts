// Large DR values travel to the backup's bucket as multipart uploads (lib-storage's Upload): checked on
// the local S3 engine, with the object-created event the backup's value applier listens to.
import { createHash } from 'node:crypto';
import { S3BlobStore } from '../../lambdas/adapters/s3-blob-store';
import { useLocalS3 } from '../support/local-s3';

const mib = 1024 * 1024;
const bucket = 'multipart-test';
const engine = useLocalS3(bucket);

const valueOf = (size: number, seed: number) => Uint8Array.from({ length: size }, (_, index) => (index * 31 + seed) % 251);
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('a multipart put', () => {
  it('stores a value over the threshold whole, in parts, and the bucket announces it', async () => {
    const store = new S3BlobStore(engine.client, bucket, engine.client, { fromBytes: 6 * mib, partBytes: 5 * mib, concurrency: 2 });
    const events: string[] = [];
    const unsubscribe = engine.s3.onEvent((event) =>
      events.push(...event.Records.map((record) => `${record.eventName} ${record.s3.object.key}`)),
    );
    const large = valueOf(11 * mib + 7, 1);
    const small = valueOf(mib, 2);

    await store.put('dr/values/large', large, 'application/octet-stream');
    await store.put('dr/values/small', small, 'application/octet-stream');
    await new Promise((resolve) => setTimeout(resolve, 100));
    unsubscribe();

    expect(await store.size('dr/values/large')).toBe(large.length);
    expect(await store.sha256('dr/values/large')).toBe(sha256(large));
    expect(sha256(await store.get('dr/values/small'))).toBe(sha256(small));
    expect(events.sort()).toEqual(['ObjectCreated:Post dr/values/large', 'ObjectCreated:Put dr/values/small']);
  });
});
