// Large values: the presigned upload flow above 4 MiB (checked by the fake server's sha256), the
// 303 download that must not carry the API key to S3, and the 10 MiB client-side limit.

import { createHash } from 'node:crypto';
import {
  DIRECT_BODY_BYTES_MAX,
  PayloadTooLargeError,
  PreconditionFailedError,
  RingstoreClient,
  VALUE_BYTES_MAX,
  ValidationError,
} from '../src';
import { FakeRingstore, sendJson, startServer } from './support/fake-server';

function pattern(size: number, seed = 7): Uint8Array {
  const bytes = new Uint8Array(size);
  let state = seed;
  for (let i = 0; i < size; i++) {
    state = (state * 1103515245 + 12345) >>> 0;
    bytes[i] = state >>> 24;
  }
  return bytes;
}

describe('large values', () => {
  let fake: FakeRingstore;
  let client: RingstoreClient;

  beforeEach(async () => {
    fake = await new FakeRingstore().start();
    client = new RingstoreClient({ endpoint: fake.url, apiKey: 'admin-key', sleep: async () => {} });
  });

  afterEach(async () => {
    await fake.close();
  });

  it('uploads a 5 MiB value through S3 and commits it with the sha256 of the bytes', async () => {
    const value = pattern(5 * 1024 * 1024);

    const result = await client.put('videos/clip.bin', value, { contentType: 'video/mp4', ttlSeconds: 600, ifNoneMatch: '*' });

    expect(result).toEqual({ key: 'videos/clip.bin', version: 1, consistency: 'eventual' });
    const [create, transfer, commit, ...rest] = fake.requests;
    expect(rest).toHaveLength(0);
    expect(create?.method).toBe('POST');
    expect(create?.rawUrl).toBe('/v1/kv/videos%2Fclip.bin/uploads');
    expect(JSON.parse(create?.body.toString('utf8') ?? '')).toEqual({ size: value.byteLength, contentType: 'video/mp4' });
    expect(transfer?.method).toBe('PUT');
    expect(transfer?.pathname).toMatch(/^\/s3\/uploads\//);
    expect(transfer?.headers['x-api-key']).toBeUndefined();
    expect(transfer?.headers['x-amz-meta-upload']).toBeDefined(); // the presigned headers were sent
    expect(transfer?.headers['content-type']).toBe('video/mp4');
    expect(Buffer.compare(transfer?.body ?? Buffer.alloc(0), Buffer.from(value))).toBe(0);
    expect(commit?.method).toBe('POST');
    expect(commit?.pathname).toMatch(/^\/v1\/kv\/videos%2Fclip\.bin\/uploads\/[^/]+\/commit$/);
    expect(commit?.headers['if-none-match']).toBe('*');
    expect(commit?.headers['x-api-key']).toBe('admin-key');
    expect(JSON.parse(commit?.body.toString('utf8') ?? '')).toEqual({
      sha256: createHash('sha256').update(value).digest('hex'),
      contentType: 'video/mp4',
      ttlSeconds: 600,
    });
    expect(fake.store.get('test#videos/clip.bin')?.value.equals(Buffer.from(value))).toBe(true);
  });

  it('surfaces a checksum mismatch when the bytes S3 received differ', async () => {
    fake.corruptUploads = true;

    const error = await client.put('k', pattern(5 * 1024 * 1024)).catch((err: unknown) => err);

    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ code: 'kv.checksumMismatch', status: 400 });
    expect(fake.store.has('test#k')).toBe(false);
  });

  it('sends If-Match on the commit and maps its 412', async () => {
    await client.put('k', 'small');

    await expect(client.put('k', pattern(DIRECT_BODY_BYTES_MAX + 1), { ifMatch: 5 })).rejects.toBeInstanceOf(PreconditionFailedError);

    expect(fake.requests.at(-1)?.headers['if-match']).toBe('"5"');
  });

  it('sends exactly 4 MiB directly and 4 MiB + 1 through the upload flow', async () => {
    await client.put('at-limit', pattern(DIRECT_BODY_BYTES_MAX));
    const direct = fake.requests.length;
    await client.put('over-limit', pattern(DIRECT_BODY_BYTES_MAX + 1));

    expect(direct).toBe(1);
    expect(fake.requests[0]?.method).toBe('PUT');
    expect(fake.requests[0]?.body.byteLength).toBe(DIRECT_BODY_BYTES_MAX);
    expect(fake.requests.slice(1).map((r) => r.method)).toEqual(['POST', 'PUT', 'POST']);
  });

  it('accepts exactly 10 MiB and refuses 10 MiB + 1 before any request', async () => {
    await client.put('max', pattern(VALUE_BYTES_MAX));
    const before = fake.requests.length;

    const error = await client.put('too-big', new Uint8Array(VALUE_BYTES_MAX + 1)).catch((err: unknown) => err);

    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect(error).toMatchObject({ code: 'client.valueTooLarge', status: 0, retryable: false });
    expect(fake.requests.length).toBe(before);
    expect(fake.store.get('test#max')?.value.byteLength).toBe(VALUE_BYTES_MAX);
  });

  it('follows the 303 of a large value to S3 without sending the API key', async () => {
    const value = pattern(5 * 1024 * 1024, 99);
    await client.put('big', value, { contentType: 'application/x-big' });
    fake.requests.length = 0;

    const got = await client.get('big');

    expect(got.version).toBe(1);
    expect(got.contentType).toBe('application/x-big');
    expect(Buffer.from(got.value).equals(Buffer.from(value))).toBe(true);
    const [api, s3] = fake.requests;
    expect(api?.headers['x-api-key']).toBe('admin-key');
    expect(s3?.pathname).toMatch(/^\/s3\/objects\//);
    expect(s3?.headers['x-api-key']).toBeUndefined();
    expect(fake.requests).toHaveLength(2);
  });

  it('resolves a relative Location and maps S3 errors to blob.* codes', async () => {
    const server = await startServer((req, res) => {
      if (req.pathname === '/v1/kv/k') {
        res.writeHead(303, { location: '/bucket/object?sig=1', 'x-ringstore-version': '4', 'content-type': 'text/plain' });
        res.end();
      } else if (req.pathname === '/bucket/object') {
        res.writeHead(403, { 'content-type': 'application/xml' });
        res.end('<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>');
      } else {
        sendJson(res, 404, {});
      }
    });
    try {
      const error = await new RingstoreClient({ endpoint: server.url, apiKey: 'k' }).get('k').catch((err: unknown) => err);

      expect(error).toMatchObject({ code: 'blob.accessDenied', status: 403 });
      expect(server.requests.map((r) => r.rawUrl)).toEqual(['/v1/kv/k', '/bucket/object?sig=1']);
      expect(server.requests[1]?.headers['x-api-key']).toBeUndefined();
    } finally {
      await server.close();
    }
  });

  it('retries a failed transfer to S3', async () => {
    let s3Calls = 0;
    const server = await startServer((req, res) => {
      if (req.pathname.endsWith('/uploads')) {
        sendJson(res, 201, {
          uploadId: 'u 1',
          url: `http://127.0.0.1:${new URL(`http://${req.headers.host}`).port}/s3?sig=1`,
          method: 'PUT',
          headers: {},
        });
        return;
      }
      if (req.pathname === '/s3') {
        s3Calls += 1;
        res.writeHead(s3Calls === 1 ? 503 : 200, { 'content-type': 'application/xml' });
        res.end(s3Calls === 1 ? '<Error><Code>SlowDown</Code></Error>' : '');
        return;
      }
      sendJson(res, 200, { key: 'k', version: 2 });
    });
    try {
      const result = await new RingstoreClient({ endpoint: server.url, apiKey: 'k', sleep: async () => {} }).put(
        'k',
        pattern(DIRECT_BODY_BYTES_MAX + 10),
      );

      expect(result).toEqual({ key: 'k', version: 2, consistency: 'eventual' });
      expect(s3Calls).toBe(2);
      expect(server.requests.at(-1)?.pathname).toBe('/v1/kv/k/uploads/u%201/commit');
    } finally {
      await server.close();
    }
  });
});
