// The KV routes through real HTTP: values, versions, conditions, TTL, sizes.
import { createHash } from 'node:crypto';
import { call, errorOf, freshNamespace, kvPath, randomBytes, sleep } from './support';

let key: string;

beforeAll(async () => {
  ({ key } = await freshNamespace('kv'));
});

const put = (k: string, body: string | Uint8Array, headers: Record<string, string> = {}, query = '') =>
  call(`${kvPath(k)}${query}`, { method: 'PUT', key, body, headers });
const get = (k: string, query = '') => call(`${kvPath(k)}${query}`, { key });

describe('PUT/GET/HEAD/DELETE', () => {
  it('stores bytes with their content type and returns the version as ETag', async () => {
    const written = await put('greeting', 'hello', { 'content-type': 'text/plain; charset=utf-8' });
    expect(written.status).toBe(200);
    expect(await written.json()).toEqual({ key: 'greeting', version: 1, consistency: 'eventual' });
    expect(written.headers.get('etag')).toBe('"1"');

    const read = await get('greeting');
    expect(read.status).toBe(200);
    expect(read.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(read.headers.get('etag')).toBe('"1"');
    expect(await read.text()).toBe('hello');

    const head = await call(kvPath('greeting'), { method: 'HEAD', key });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('5');
    expect(head.headers.get('x-ringstore-version')).toBe('1');
  });

  it('round-trips arbitrary binary and keys with slashes, spaces and unicode', async () => {
    const bytes = randomBytes(4096, 7);
    const odd = 'dir/sub dir/ключ/🙂?&#%';
    expect((await put(odd, bytes)).status).toBe(200);
    const read = await get(odd);
    expect(read.headers.get('content-type')).toBe('application/octet-stream');
    expect(Buffer.from(await read.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
  });

  it('deletes with a new version; reads and deletes of a missing key answer 404', async () => {
    await put('doomed', 'x');
    const deleted = await call(kvPath('doomed'), { method: 'DELETE', key });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ key: 'doomed', version: 2, consistency: 'eventual' });
    expect(await errorOf(await get('doomed'))).toMatchObject({ status: 404, code: 'kv.notFound' });
    expect((await call(kvPath('doomed'), { method: 'HEAD', key })).status).toBe(404);
    expect(await errorOf(await call(kvPath('doomed'), { method: 'DELETE', key }))).toMatchObject({ status: 404, code: 'kv.notFound' });
    // The version keeps growing across the delete.
    expect(await (await put('doomed', 'again')).json()).toEqual({ key: 'doomed', version: 3, consistency: 'eventual' });
  });

  it('reads strongly and eventually', async () => {
    await put('both', 'v');
    expect(await (await get('both', '?consistency=strong')).text()).toBe('v');
    expect(await (await get('both', '?consistency=eventual')).text()).toBe('v');
    expect(await errorOf(await get('both', '?consistency=sometimes'))).toMatchObject({ status: 400, code: 'request.invalid' });
  });
});

describe('conditional writes', () => {
  it('If-None-Match: * creates only once; If-Match writes only at the expected version', async () => {
    expect((await put('cond', 'a', { 'if-none-match': '*' })).status).toBe(200);
    expect(await errorOf(await put('cond', 'b', { 'if-none-match': '*' }))).toMatchObject({ status: 412, code: 'kv.preconditionFailed' });
    expect(await errorOf(await put('cond', 'b', { 'if-match': '"9"' }))).toMatchObject({ status: 412 });
    expect((await put('cond', 'b', { 'if-match': '"1"' })).status).toBe(200);
    expect(await errorOf(await call(kvPath('cond'), { method: 'DELETE', key, headers: { 'if-match': '"1"' } }))).toMatchObject({
      status: 412,
    });
    expect(await (await get('cond')).text()).toBe('b');
    expect(await errorOf(await put('cond', 'c', { 'if-match': 'yesterday' }))).toMatchObject({ status: 400, code: 'request.invalid' });
    // If-None-Match with entity tags: "1" is not the current version (2), so the write happens.
    expect(await (await put('cond', 'c', { 'if-none-match': '"1"' })).json()).toMatchObject({ version: 3 });
  });

  it('lets exactly one of two racing If-Match writers win, and exactly one of many creators', async () => {
    await put('race', 'v1');
    const results = await Promise.all(['left', 'right'].map((value) => put('race', value, { 'if-match': '"1"' })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 412]);
    const winner = results[0]!.status === 200 ? 'left' : 'right';
    expect(await (await get('race', '?consistency=strong')).text()).toBe(winner);

    const creators = await Promise.all(Array.from({ length: 8 }, (_, i) => put('created-once', `writer-${i}`, { 'if-none-match': '*' })));
    expect(creators.filter((r) => r.status === 200)).toHaveLength(1);
    expect(creators.filter((r) => r.status === 412)).toHaveLength(7);
  });
});

describe('Content-Type', () => {
  it.each(['0', 'text', 'a/b/c', 'text/ plain', 'text/plain; charset'])(
    'PUT with %j is a 400 naming content-type, and stores nothing',
    async (type) => {
      expect(await errorOf(await put('typed', 'x', { 'content-type': type }))).toMatchObject({
        status: 400,
        code: 'request.invalid',
        details: { field: 'content-type' },
      });
      expect((await get('typed', '?consistency=strong')).status).toBe(404);
    },
  );

  it('stores a media type with parameters as sent', async () => {
    expect((await put('typed-ok', 'x', { 'content-type': 'application/vnd.api+json; charset="utf-8"' })).status).toBe(200);
    expect((await get('typed-ok', '?consistency=strong')).headers.get('content-type')).toBe('application/vnd.api+json; charset="utf-8"');
  });

  it('uploads: the create and the commit bodies follow the same rule', async () => {
    const created = await call(`${kvPath('typed-upload')}/uploads`, {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contentType: 'text' }),
    });
    expect(await errorOf(created)).toMatchObject({ status: 400, code: 'request.invalid', details: { field: 'contentType' } });
    const committed = await call(`${kvPath('typed-upload')}/uploads/00000000-0000-4000-8000-000000000001/commit`, {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sha256: '0'.repeat(64), contentType: 'a/b/c' }),
    });
    expect(await errorOf(committed)).toMatchObject({ status: 400, code: 'request.invalid', details: { field: 'contentType' } });
  });
});

describe('TTL', () => {
  it('hides an expired key before DynamoDB removes it, and reports the expiry', async () => {
    const written = await put('ephemeral', 'soon gone', {}, '?ttlSeconds=1');
    expect(written.status).toBe(200);
    const read = await get('ephemeral');
    expect(read.status).toBe(200);
    expect(Date.parse(read.headers.get('x-ringstore-expires-at')!)).toBeGreaterThan(Date.now() - 2000);
    await sleep(2100);
    expect((await get('ephemeral')).status).toBe(404);
    expect(await (await call('/v1/kv?prefix=ephemeral', { key })).json()).toEqual({ items: [] });
  });

  it('rejects a bad TTL with kv.ttlInvalid and writes nothing', async () => {
    for (const ttl of ['0', '-5', 'abc', '1.5', String(11 * 365 * 24 * 3600)]) {
      expect(await errorOf(await put('bad-ttl', 'x', {}, `?ttlSeconds=${ttl}`))).toMatchObject({ status: 400, code: 'kv.ttlInvalid' });
    }
    expect((await get('bad-ttl')).status).toBe(404);
  });
});

describe('sizes', () => {
  it('round-trips a 3 MiB value through a direct PUT (stored in S3 behind the item)', async () => {
    const bytes = randomBytes(3 * 1024 * 1024, 3);
    expect((await put('three-mib', bytes)).status).toBe(200);
    const read = await get('three-mib');
    expect(read.status).toBe(200);
    const body = Buffer.from(await read.arrayBuffer());
    expect(createHash('sha256').update(body).digest('hex')).toBe(createHash('sha256').update(bytes).digest('hex'));
  });

  it('refuses a 5 MiB direct PUT with 413 pointing to the upload flow, and writes nothing', async () => {
    const refused = await put('five-mib', randomBytes(5 * 1024 * 1024, 5));
    const error = await errorOf(refused);
    expect(error.status).toBe(413);
    expect(error.message).toMatch(/uploads/);
    expect((await get('five-mib')).status).toBe(404);
  });

  it('uploads a large value in two steps and serves it by a 303 to S3', async () => {
    const bytes = randomBytes(5 * 1024 * 1024 + 3, 11);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const ticketResponse = await call(`${kvPath('big-upload')}/uploads`, {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ size: bytes.length, contentType: 'application/x-test' }),
    });
    expect(ticketResponse.status).toBe(201);
    const ticket = (await ticketResponse.json()) as { uploadId: string; url: string; headers: Record<string, string> };
    expect((await fetch(ticket.url, { method: 'PUT', headers: ticket.headers, body: bytes })).ok).toBe(true);

    const commitPath = `${kvPath('big-upload')}/uploads/${ticket.uploadId}/commit`;
    const wrong = await call(commitPath, {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sha256: '0'.repeat(64) }),
    });
    expect(await errorOf(wrong)).toMatchObject({ status: 400, code: 'kv.checksumMismatch' });
    const committed = await call(commitPath, {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sha256, contentType: 'application/x-test' }),
    });
    expect(committed.status).toBe(200);
    expect(await committed.json()).toEqual({ key: 'big-upload', version: 1, consistency: 'eventual' });

    const read = await get('big-upload');
    expect(read.status).toBe(303);
    expect(read.headers.get('etag')).toBe('"1"');
    const location = read.headers.get('location')!;
    const object = await fetch(location);
    expect(object.status).toBe(200);
    expect(
      createHash('sha256')
        .update(Buffer.from(await object.arrayBuffer()))
        .digest('hex'),
    ).toBe(sha256);
  });

  it('refuses to commit uploaded bytes over 10 MiB, even when the size was not declared', async () => {
    const ticketResponse = await call(`${kvPath('sneaky')}/uploads`, { method: 'POST', key, body: '{}' });
    const ticket = (await ticketResponse.json()) as { uploadId: string; url: string; headers: Record<string, string> };
    const bytes = randomBytes(10 * 1024 * 1024 + 1, 13);
    expect((await fetch(ticket.url, { method: 'PUT', headers: ticket.headers, body: bytes })).ok).toBe(true);
    const committed = await call(`${kvPath('sneaky')}/uploads/${ticket.uploadId}/commit`, {
      method: 'POST',
      key,
      body: JSON.stringify({ sha256: createHash('sha256').update(bytes).digest('hex') }),
    });
    expect(await errorOf(committed)).toMatchObject({ status: 413, code: 'kv.valueTooLarge' });
    expect((await get('sneaky')).status).toBe(404);
  });

  it('refuses an upload declared over 10 MiB', async () => {
    const response = await call(`${kvPath('too-big')}/uploads`, {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ size: 10 * 1024 * 1024 + 1 }),
    });
    expect(await errorOf(response)).toMatchObject({ status: 413, code: 'kv.valueTooLarge' });
  });
});
