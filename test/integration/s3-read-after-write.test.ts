// The local S3 engine is read-after-write consistent, as S3 is: an object read once its PUT was answered,
// or from its object-created event, is the whole object; an object overwritten while it is read is
// read whole, old or new, never cut. s3rver alone answered before its file was written (the DR
// appliers read empty values and took them for corrupt ones).
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { useLocalS3 } from '../support/local-s3';

const bucket = 'read-after-write';
const engine = useLocalS3(bucket);

const valueOf = (size: number, seed: number) => new Uint8Array(size).fill(seed % 251);

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function read(key: string): Promise<{ sha256: string; length: number }> {
  const { Body } = await engine.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  const bytes = await Body!.transformToByteArray();
  return { sha256: sha256(bytes), length: bytes.length };
}

describe('the local S3 engine', () => {
  it('serves a whole object to the readers of its object-created events, while the same upload is retried', async () => {
    // As DR's shipper does when a link drops an answer: the same value is PUT again while the backup's
    // appliers read it from the first PUT's event.
    const values = Array.from({ length: 24 }, (_, index) => ({ key: `raw/${index}`, value: valueOf(200_000 + index * 50_000, index) }));
    const expected = new Map(values.map(({ key, value }) => [key, sha256(value)]));
    const fromEvents: Array<Promise<{ key: string; sha256: string }>> = [];
    const unsubscribe = engine.s3.onEvent((event) => {
      for (const record of event.Records) {
        const key = decodeURIComponent(record.s3.object.key);
        fromEvents.push(read(key).then((found) => ({ key, sha256: found.sha256 })));
      }
    });

    const afterPut = await Promise.all(
      values.map(async ({ key, value }) => {
        for (let attempt = 0; attempt < 3; attempt += 1)
          await engine.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: value }));
        const head = await engine.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return { key, sha256: (await read(key)).sha256, length: head.ContentLength };
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    unsubscribe();
    const evented = await Promise.all(fromEvents);

    expect(evented).toHaveLength(values.length * 3);
    expect(evented.filter(({ key, sha256: found }) => found !== expected.get(key)).map(({ key }) => key)).toEqual([]);
    expect(afterPut.filter(({ key, sha256: found }) => found !== expected.get(key)).map(({ key }) => key)).toEqual([]);
    expect(afterPut.map(({ length }) => length)).toEqual(values.map(({ value }) => value.length));
  });

  it('serves an object overwritten while it is read whole, old or new; no temporary file is left', async () => {
    const key = 'raw/overwritten';
    const versions = Array.from({ length: 8 }, (_, index) => valueOf(100_000 * (index + 1), index + 1));
    const known = new Set(versions.map(sha256));
    await engine.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: versions[0] }));
    let writing = true;
    const reads: string[] = [];
    const readers = Array.from({ length: 3 }, async () => {
      while (writing) reads.push((await read(key)).sha256);
    });

    for (const value of versions.slice(1)) await engine.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: value }));
    writing = false;
    await Promise.all(readers);

    expect(reads.length).toBeGreaterThan(0);
    expect(reads.filter((found) => !known.has(found))).toEqual([]);
    expect((await read(key)).sha256).toBe(sha256(versions.at(-1)!));
    expect(readdirSync(join(engine.dataDir, bucket, 'raw')).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('creates no object, and announces none, from an upload cut midway', async () => {
    const events: string[] = [];
    const unsubscribe = engine.s3.onEvent((event) => events.push(...event.Records.map((record) => record.s3.object.key)));
    /** A raw PUT that promises 100,000 bytes and sends `sent` of them, then drops its connection (a link cut). */
    const put = async (key: string, sent: number) => {
      const url = new URL(await getSignedUrl(engine.client, new PutObjectCommand({ Bucket: bucket, Key: key }), { expiresIn: 60 }));
      return new Promise<number | undefined>((resolve) => {
        const request = httpRequest({
          host: url.hostname,
          port: url.port,
          path: `${url.pathname}${url.search}`,
          method: 'PUT',
          headers: { 'content-length': '100000' },
        });
        request.on('response', (response) => {
          response.resume();
          resolve(response.statusCode);
        });
        request.on('error', () => resolve(undefined));
        if (sent === 100_000) request.end(Buffer.alloc(sent, 7));
        else
          request.write(Buffer.alloc(sent, 7), () =>
            setTimeout(() => {
              request.destroy();
              resolve(undefined);
            }, 100),
          );
      });
    };

    const whole = await put('raw/whole', 100_000);
    await put('raw/cut', 1_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    unsubscribe();

    // The same request sent whole is taken: the cut one was refused for being cut, not for its form.
    expect(whole).toBe(200);
    expect(events).toEqual(['raw/whole']);
    const head = await engine.client
      .send(new HeadObjectCommand({ Bucket: bucket, Key: 'raw/cut' }))
      .catch((error: unknown) => (error as { name?: string }).name);
    expect(head).toBe('NotFound');
    expect(readdirSync(join(engine.dataDir, bucket, 'raw')).filter((name) => name.startsWith('cut'))).toEqual([]);
  });
});
