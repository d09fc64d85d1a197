// POST /v1/batch/get through real HTTP on the shared local cloud: keys in request order, found or not, each as a
// GET of it answers; values kept in S3 by URL; the caller's namespace only; bad input refused whole with a 400
// naming what was wrong; the namespace's rate counting a batch as that many reads.
import { adminKey, call, errorOf, freshNamespace, kvPath, randomBytes, sleep } from './support';

interface Found {
  key: string;
  found: true;
  version: number;
  contentType: string;
  size: number;
  expiresAt?: string;
  value?: string;
  url?: string;
  valueOmitted?: true;
}
type Item = Found | { key: string; found: false };

const batchGet = (body: unknown, options: { key?: string; query?: string } = {}) =>
  call(`/v1/batch/get${options.query ?? ''}`, {
    method: 'POST',
    ...(options.key === undefined ? {} : { key: options.key }),
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

async function itemsOf(response: Response): Promise<Item[]> {
  expect(response.status).toBe(200);
  return ((await response.json()) as { items: Item[] }).items;
}

const put = async (tenant: string, key: string, value: string | Uint8Array, headers: Record<string, string> = {}) => {
  const response = await call(kvPath(key), {
    method: 'PUT',
    key: tenant,
    body: value,
    headers: { 'content-type': 'text/plain', ...headers },
  });
  expect(response.status).toBe(200);
};

const base64 = (text: string) => Buffer.from(text).toString('base64');

describe('POST /v1/batch/get', () => {
  it('answers each key in request order, found with its value (base64) and metadata, or not found', async () => {
    // Prepare: a fresh namespace with keys live, overwritten, deleted, expiring and never written.
    const { key: tenant } = await freshNamespace('batch');
    await put(tenant, 'a/1', 'one');
    await put(tenant, 'b', 'two');
    await put(tenant, 'b', '{"n":2}', { 'content-type': 'application/json' });
    await put(tenant, 'gone', 'x');
    expect((await call(kvPath('gone'), { method: 'DELETE', key: tenant })).status).toBe(200);
    const ttl = await call(`${kvPath('brief')}?ttlSeconds=600`, {
      method: 'PUT',
      key: tenant,
      body: 'soon',
      headers: { 'content-type': 'text/plain' },
    });
    expect(ttl.status).toBe(200);

    // Act: eventual (the default) and strong.
    const keys = ['b', 'never', 'a/1', 'gone', 'brief'];
    const [eventual, strong] = await Promise.all([
      batchGet({ keys }, { key: tenant }).then(itemsOf),
      batchGet({ keys }, { key: tenant, query: '?consistency=strong' }).then(itemsOf),
    ]);

    // Assess
    const expected = [
      { key: 'b', found: true, version: 2, contentType: 'application/json', size: 7, value: base64('{"n":2}') },
      { key: 'never', found: false },
      { key: 'a/1', found: true, version: 1, contentType: 'text/plain', size: 3, value: base64('one') },
      { key: 'gone', found: false },
      { key: 'brief', found: true, version: 1, contentType: 'text/plain', size: 4, value: base64('soon'), expiresAt: expect.any(String) },
    ];
    expect(strong).toEqual(expected);
    expect(eventual).toEqual(expected);
    const single = await call(kvPath('brief'), { key: tenant });
    expect((strong[4] as Found).expiresAt).toBe(single.headers.get('x-ringstore-expires-at'));
  });

  it("reads the caller's namespace only: another namespace's key of the same name is not found", async () => {
    const mine = await freshNamespace('batch-mine');
    const theirs = await freshNamespace('batch-theirs');
    await put(theirs.key, 'shared', 'secret');
    await put(mine.key, 'own', 'mine');

    const items = await itemsOf(await batchGet({ keys: ['shared', 'own'] }, { key: mine.key }));

    expect(items).toEqual([
      { key: 'shared', found: false },
      { key: 'own', found: true, version: 1, contentType: 'text/plain', size: 4, value: base64('mine') },
    ]);
  });

  it('sends a value kept in S3 as a presigned URL that serves its bytes', async () => {
    const { key: tenant } = await freshNamespace('batch-large');
    const large = randomBytes(400 * 1000, 7);
    await put(tenant, 'large', large, { 'content-type': 'application/octet-stream' });
    await put(tenant, 'small', 's');

    const [item, small] = await itemsOf(await batchGet({ keys: ['large', 'small'] }, { key: tenant }));

    expect(item).toMatchObject({ key: 'large', found: true, version: 1, size: large.byteLength, url: expect.any(String) });
    expect(item).not.toHaveProperty('value');
    const object = await fetch((item as Found).url!);
    expect(object.status).toBe(200);
    expect(new Uint8Array(await object.arrayBuffer())).toEqual(large);
    expect(small).toMatchObject({ key: 'small', value: base64('s') });
  });

  it('reads 100 keys in one request', async () => {
    const { key: tenant } = await freshNamespace('batch-hundred');
    const keys = Array.from({ length: 100 }, (_, n) => `k${String(n).padStart(3, '0')}`);
    for (const key of keys.filter((_, n) => n % 10 === 0)) await put(tenant, key, key);

    const items = await itemsOf(await batchGet({ keys }, { key: tenant }));

    expect(items.map((item) => item.key)).toEqual(keys);
    expect(items.filter((item) => item.found).map((item) => item.value)).toEqual(keys.filter((_, n) => n % 10 === 0).map(base64));
  });

  it.each([
    { what: 'no keys', body: { keys: [] }, code: 'request.invalid', field: 'keys', message: /1 to 100 keys/ },
    {
      what: '101 keys',
      body: { keys: Array.from({ length: 101 }, (_, n) => `k${n}`) },
      code: 'request.invalid',
      field: 'keys',
      message: /1 to 100 keys/,
    },
    { what: 'a key twice', body: { keys: ['a', 'b', 'a'] }, code: 'request.invalid', field: 'keys', message: /more than once: "a"/ },
    {
      what: 'an empty key',
      body: { keys: ['a', ''] },
      code: 'kv.keyInvalid',
      field: 'keys.1',
      message: /keys\.1 "": key must not be empty/,
    },
    { what: 'a key over 1024 bytes', body: { keys: ['é'.repeat(513)] }, code: 'kv.keyInvalid', field: 'keys.0', message: /1026 bytes/ },
    { what: 'a key that is no string', body: { keys: ['a', 7] }, code: 'request.invalid', field: 'keys.1', message: /must be a string/ },
    { what: 'no keys field', body: {}, code: 'request.invalid', field: 'keys', message: /body keys/ },
    { what: 'an unknown field', body: { keys: ['a'], key: 'b' }, code: 'request.invalid', field: 'key', message: /unknown field key/ },
    { what: 'a body that is not JSON', body: '{"keys": [', code: 'request.invalid', field: undefined, message: /not valid JSON/ },
  ])('refuses $what with 400 $code naming it', async ({ body, code, field, message }) => {
    const response = await batchGet(body);

    const error = await errorOf(response);
    expect(error).toMatchObject({ status: 400, code });
    expect(error.message).toMatch(message);
    if (field !== undefined) expect(error.details).toMatchObject({ field });
  });

  it('refuses a bad consistency and an unknown query parameter, as GET does', async () => {
    const bad = await errorOf(await batchGet({ keys: ['a'] }, { query: '?consistency=linear' }));
    const unknown = await errorOf(await batchGet({ keys: ['a'] }, { query: '?consistent=strong' }));

    expect(bad).toMatchObject({ status: 400, code: 'request.invalid', details: { field: 'consistency', in: 'query' } });
    expect(unknown).toMatchObject({ status: 400, code: 'request.invalid', details: { field: 'consistent', suggestion: 'consistency' } });
  });

  it("counts a batch of n keys as n requests against the namespace's rate", async () => {
    // Prepare: a namespace with a burst of 10 and a rate that refills one token a minute, written first.
    const { namespace, key: tenant } = await freshNamespace('batch-rate');
    await put(tenant, 'k0', 'v');
    const settings = await call(`/v1/admin/namespaces/${namespace}`, {
      method: 'PUT',
      key: adminKey(),
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rate: { requestsPerSecond: 1 / 60, burst: 10 } }),
    });
    expect(settings.status).toBe(200);
    await sleep(1500); // the suite's authorizer cache TTL: settings reach requests after it

    // Act: a batch of 10 keys takes the whole burst; then a single GET.
    const keys = Array.from({ length: 10 }, (_, n) => `k${n}`);
    const batch = await batchGet({ keys }, { key: tenant });
    const after = await call(kvPath('k0'), { key: tenant });

    // Assess
    expect((await itemsOf(batch))[0]).toMatchObject({ key: 'k0', found: true });
    expect(await errorOf(after)).toMatchObject({ status: 429, code: 'quota.rate' });
  });
});
