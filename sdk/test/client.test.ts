// The client against an in-memory Ringstore over real HTTP: commands, convenience methods,
// key encoding, conditional writes, listing, ring and admin calls.

import {
  DeleteCommand,
  ForbiddenError,
  GetCommand,
  HeadCommand,
  ListCommand,
  NotFoundError,
  PreconditionFailedError,
  PutCommand,
  RingCommand,
  RingstoreClient,
  ValidationError,
  type ListItem,
} from '../src';
import { FAKE_RING, FakeRingstore, sendJson, startServer } from './support/fake-server';

describe('RingstoreClient', () => {
  let fake: FakeRingstore;
  let client: RingstoreClient;

  beforeEach(async () => {
    fake = await new FakeRingstore().start();
    client = new RingstoreClient({ endpoint: fake.url, apiKey: 'admin-key', sleep: async () => {} });
  });

  afterEach(async () => {
    await fake.close();
  });

  it('puts and gets a string value through commands', async () => {
    // Act
    const put = await client.send(new PutCommand({ key: 'greeting', value: 'héllo' }));
    const got = await client.send(new GetCommand({ key: 'greeting' }));

    // Assess
    expect(put).toEqual({ key: 'greeting', version: 1, consistency: 'eventual' });
    expect(got.key).toBe('greeting');
    expect(got.version).toBe(1);
    expect(got.contentType).toBe('text/plain; charset=utf-8');
    expect(got.text()).toBe('héllo');
    expect(Array.from(got.value)).toEqual(Array.from(Buffer.from('héllo', 'utf8')));
    const request = fake.requests[0];
    expect(request?.method).toBe('PUT');
    expect(request?.headers['x-api-key']).toBe('admin-key');
    expect(request?.body.toString('utf8')).toBe('héllo');
  });

  it('stores bytes as application/octet-stream unless told otherwise', async () => {
    const bytes = new Uint8Array([0, 1, 2, 255]);

    await client.put('raw', bytes);
    await client.put('doc', '{"a":1}', { contentType: 'application/json' });

    const raw = await client.get('raw');
    expect(raw.contentType).toBe('application/octet-stream');
    expect(Array.from(raw.value)).toEqual([0, 1, 2, 255]);
    const doc = await client.get('doc');
    expect(doc.contentType).toBe('application/json');
    expect(doc.json<{ a: number }>().a).toBe(1);
  });

  it('sends ttlSeconds and consistency as query parameters and reports expiresAt', async () => {
    await client.put('session', 'x', { ttlSeconds: 60, consistency: 'strong' });
    const got = await client.get('session', { consistency: 'strong' });

    expect(fake.requests[0]?.query.get('ttlSeconds')).toBe('60');
    expect(fake.requests[0]?.query.get('consistency')).toBe('strong');
    expect(fake.requests[1]?.query.get('consistency')).toBe('strong');
    expect(got.expiresAt).toBe('2030-01-01T00:01:00.000Z');
  });

  it.each([
    ['a/b/c', 'a%2Fb%2Fc'],
    ['with space', 'with%20space'],
    ['ünï©ødé ✓', encodeURIComponent('ünï©ødé ✓')],
    ['100%?#&=+', '100%25%3F%23%26%3D%2B'],
  ])('encodes key %j as one path segment', async (key, encoded) => {
    await client.put(key, 'v');
    const got = await client.get(key);
    await client.head(key);
    await client.delete(key);

    expect(fake.requests.map((r) => r.rawUrl.split('?')[0])).toEqual([
      `/v1/kv/${encoded}`,
      `/v1/kv/${encoded}`,
      `/v1/kv/${encoded}`,
      `/v1/kv/${encoded}`,
    ]);
    expect(got.key).toBe(key);
    expect(fake.store.has(`test#${key}`)).toBe(false);
  });

  it('accepts a 1024-byte key and refuses a 1025-byte key before any request', async () => {
    const longest = 'é'.repeat(512); // 2 bytes each
    await client.put(longest, 'v');

    const tooLong = `${longest}x`;
    await expect(client.put(tooLong, 'v')).rejects.toMatchObject({ name: 'ValidationError', code: 'client.invalidKey' });
    await expect(client.get('')).rejects.toBeInstanceOf(ValidationError);
    await expect(client.get('\ud800')).rejects.toBeInstanceOf(ValidationError);
    expect(fake.requests).toHaveLength(1);
  });

  it('sends If-Match as a quoted version and If-None-Match as *', async () => {
    const first = await client.put('counter', '1', { ifNoneMatch: '*' });
    const second = await client.put('counter', '2', { ifMatch: first.version });

    expect(fake.requests[0]?.headers['if-none-match']).toBe('*');
    expect(fake.requests[1]?.headers['if-match']).toBe('"1"');
    expect(second.version).toBe(2);
    await expect(client.put('counter', '3', { ifMatch: 1 })).rejects.toMatchObject({
      name: 'PreconditionFailedError',
      code: 'kv.preconditionFailed',
      status: 412,
      retryable: false,
    });
    await expect(client.put('counter', '3', { ifNoneMatch: '*' })).rejects.toBeInstanceOf(PreconditionFailedError);
    await expect(client.send(new DeleteCommand({ key: 'counter', ifMatch: 1 }))).rejects.toBeInstanceOf(PreconditionFailedError);
    expect(fake.requests[4]?.headers['if-match']).toBe('"1"');
  });

  it('refuses invalid input client-side', async () => {
    await expect(client.put('k', 'v', { ttlSeconds: 0 })).rejects.toMatchObject({ code: 'client.invalidInput' });
    await expect(client.put('k', 'v', { ttlSeconds: 1.5 })).rejects.toBeInstanceOf(ValidationError);
    await expect(client.put('k', 'v', { ifMatch: -1 })).rejects.toBeInstanceOf(ValidationError);
    await expect(client.list({ limit: 1001 })).rejects.toBeInstanceOf(ValidationError);
    await expect(client.list({ limit: 0 })).rejects.toBeInstanceOf(ValidationError);
    await expect(client.put('k', 'v', { contentType: 'text/plain\r\nx-evil: 1' })).rejects.toBeInstanceOf(ValidationError);
    await expect(client.put('k', 'v', { ifNoneMatch: 'x' as '*' })).rejects.toBeInstanceOf(ValidationError);
    expect(fake.requests).toHaveLength(0);
  });

  it('reports metadata with head, and NotFoundError (kv.notFound) for a missing key', async () => {
    await client.put('meta', 'twelve bytes', { contentType: 'text/plain' });

    const meta = await client.send(new HeadCommand({ key: 'meta' }));

    expect(meta).toEqual({ key: 'meta', contentType: 'text/plain', version: 1, size: 12 });
    await expect(client.head('missing')).rejects.toMatchObject({ name: 'NotFoundError', code: 'kv.notFound', status: 404 });
    await expect(client.get('missing')).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.delete('missing')).rejects.toMatchObject({ code: 'kv.notFound' });
  });

  it('deletes a key and returns the tombstone version', async () => {
    await client.put('gone', 'v');

    const deleted = await client.delete('gone');

    expect(deleted).toEqual({ key: 'gone', version: 2, consistency: 'eventual' });
    await expect(client.get('gone')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('lists one page with a cursor, and walks every page with listAll', async () => {
    for (let i = 0; i < 7; i++) await client.put(`user/${i}`, `v${i}`);
    await client.put('other', 'x');

    const first = await client.send(new ListCommand({ prefix: 'user/', limit: 3 }));
    const pages: ListItem[][] = [];
    for await (const page of client.listAll({ prefix: 'user/', limit: 3 })) pages.push(page.items);

    expect(first.items.map((i) => i.key)).toEqual(['user/0', 'user/1', 'user/2']);
    expect(first.cursor).toEqual(expect.any(String));
    expect(first.items[0]).toEqual({ key: 'user/0', version: 1, size: 2, contentType: 'text/plain; charset=utf-8' });
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(pages.flat().map((i) => i.key)).toEqual(['user/0', 'user/1', 'user/2', 'user/3', 'user/4', 'user/5', 'user/6']);
    const listRequests = fake.requests.filter((r) => r.pathname === '/v1/kv');
    expect(listRequests.map((r) => r.query.get('cursor'))).toEqual([null, null, first.cursor, expect.any(String)]);
  });

  it('stops listAll when the server repeats a cursor', async () => {
    fake.failNext = [
      { status: 200, body: { items: [], cursor: 'same' } },
      { status: 200, body: { items: [], cursor: 'same' } },
    ];
    const walk = async (): Promise<void> => {
      for await (const _page of client.listAll()) {
        // walking
      }
    };

    await expect(walk()).rejects.toMatchObject({ code: 'response.invalid' });
    expect(fake.requests).toHaveLength(2);
  });

  it('describes the ring', async () => {
    const ring = await client.send(new RingCommand());

    expect(ring).toEqual(FAKE_RING);
    expect(await client.ring()).toEqual(FAKE_RING);
  });

  it('creates, lists and revokes API keys with an admin key', async () => {
    const created = await client.createApiKey({ namespace: 'team-a', role: 'user', description: 'ci' });
    const listed = await client.listApiKeys();
    const revoked = await client.revokeApiKey(created.keyId);

    expect(created).toEqual({
      keyId: expect.any(String),
      apiKey: expect.any(String),
      namespace: 'team-a',
      role: 'user',
      createdAt: expect.any(String),
    });
    expect(JSON.parse(fake.requests[0]?.body.toString('utf8') ?? '')).toEqual({ namespace: 'team-a', role: 'user', description: 'ci' });
    expect(listed.keys.map((k) => k.keyId)).toContain(created.keyId);
    expect(listed.keys.find((k) => k.keyId === created.keyId)?.description).toBe('ci');
    expect(revoked).toEqual({ keyId: created.keyId, revokedAt: expect.any(String) });
    const newClient = new RingstoreClient({ endpoint: fake.url, apiKey: created.apiKey });
    await expect(newClient.get('x')).rejects.toMatchObject({ name: 'AuthenticationError', status: 401 });
  });

  it('maps a user key on admin routes to ForbiddenError', async () => {
    const user = new RingstoreClient({ endpoint: fake.url, apiKey: 'user-key' });

    await expect(user.listApiKeys()).rejects.toBeInstanceOf(ForbiddenError);
    await expect(user.createApiKey({ namespace: 'x' })).rejects.toMatchObject({ code: 'auth.forbidden', status: 403 });
    expect(fake.requests).toHaveLength(2); // 403 is never retried
  });

  it('keeps the base path of an endpoint and drops its trailing slash', async () => {
    const server = await startServer((_req, res) => sendJson(res, 200, { key: 'k', version: 1 }));
    try {
      const staged = new RingstoreClient({ endpoint: `${server.url}/prod/`, apiKey: 'admin-key' });

      await staged.put('a/b', 'v');

      expect(server.requests[0]?.rawUrl).toBe('/prod/v1/kv/a%2Fb');
      expect(staged.endpoint).toBe(`${server.url}/prod`);
    } finally {
      await server.close();
    }
  });

  it('validates its configuration', () => {
    expect(() => new RingstoreClient({ endpoint: 'not a url', apiKey: 'k' })).toThrow(ValidationError);
    expect(() => new RingstoreClient({ endpoint: 'ftp://x', apiKey: 'k' })).toThrow(/http/);
    expect(() => new RingstoreClient({ endpoint: 'http://x', apiKey: '' })).toThrow(/apiKey/);
    expect(() => new RingstoreClient({ endpoint: 'http://x', apiKey: 'k', maxAttempts: 0 })).toThrow(/maxAttempts/);
    expect(() => new RingstoreClient({ endpoint: 'http://x', apiKey: 'k', maxAttempts: 11 })).toThrow(/maxAttempts/);
  });

  it('rejects a success response that breaks the contract', async () => {
    fake.failNext = [
      { status: 200, body: { key: 'k' } },
      { status: 200, body: 'not json' },
    ];

    await expect(client.put('k', 'v')).rejects.toMatchObject({ code: 'response.invalid' });
    await expect(client.ring()).rejects.toMatchObject({ code: 'response.invalid' });
  });
});
