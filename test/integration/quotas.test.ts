// Per-namespace quotas through real HTTP (docs/security.md, "Quotas"): a namespace over its rate is
// throttled without touching another's, and a storage quota holds exactly under concurrent writers.
import { adminKey, call, errorOf, freshNamespace, kvPath, sleep } from './support';

/** The suite's authorizer cache TTL is 1 s: settings reach requests after it. */
const settingsReachRequestsMs = 1500;

async function setNamespace(namespace: string, body: unknown): Promise<Response> {
  return call(`/v1/admin/namespaces/${namespace}`, {
    method: 'PUT',
    key: adminKey(),
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function usageOf(namespace: string): Promise<{ keys: number; bytes: number } | undefined> {
  const response = await call(`/v1/admin/namespaces/${namespace}`, { key: adminKey() });
  return ((await response.json()) as { usage?: { keys: number; bytes: number } }).usage;
}

const statusesOf = (responses: Response[]) => responses.map((response) => response.status);
const count = (statuses: number[], predicate: (status: number) => boolean) => statuses.filter(predicate).length;

describe('request rate per namespace', () => {
  it('throttles a namespace hammering the API with 429 quota.rate and Retry-After, and leaves another namespace untouched', async () => {
    // Prepare: a noisy namespace with a small rate, a quiet one with the default; a key each.
    const noisy = await freshNamespace('noisy');
    const quiet = await freshNamespace('quiet');
    expect((await setNamespace(noisy.namespace, { rate: { requestsPerSecond: 5, burst: 5 } })).status).toBe(200);
    for (const tenant of [noisy, quiet]) await call(kvPath('k'), { method: 'PUT', key: tenant.key, body: 'v' });
    await sleep(settingsReachRequestsMs);

    // Act: the noisy namespace sends 150 reads at once, in three waves, while the quiet one reads one at a time.
    const hammer = (async () => {
      const responses: Response[] = [];
      for (let wave = 0; wave < 3; wave += 1) {
        responses.push(...(await Promise.all(Array.from({ length: 50 }, () => call(kvPath('k'), { key: noisy.key })))));
      }
      return responses;
    })();
    const quietStatuses: number[] = [];
    const quietReads = (async () => {
      for (let read = 0; read < 30; read += 1) quietStatuses.push((await call(kvPath('k'), { key: quiet.key })).status);
    })();
    const [noisyResponses] = await Promise.all([hammer, quietReads]);

    // Assess: the noisy namespace is refused with 429 (never a 5xx), the quiet one never.
    const noisyStatuses = statusesOf(noisyResponses);
    expect(count(noisyStatuses, (status) => status >= 500)).toBe(0);
    expect(count(noisyStatuses, (status) => status === 429)).toBeGreaterThan(0);
    expect(count(noisyStatuses, (status) => status === 200)).toBeGreaterThan(0);
    expect(noisyStatuses.every((status) => status === 200 || status === 429)).toBe(true);
    const refused = noisyResponses.find((response) => response.status === 429)!;
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await errorOf(refused)).toMatchObject({ code: 'quota.rate', details: { limit: 'rate', requestsPerSecond: 5, burst: 5 } });
    expect(quietStatuses).toEqual(Array.from({ length: 30 }, () => 200));
  });

  it('shows the default rate, takes a namespace back to it with null, and refuses a bad rate changing nothing', async () => {
    const { namespace } = await freshNamespace('rate-settings');
    const before = (await (await call(`/v1/admin/namespaces/${namespace}`, { key: adminKey() })).json()) as { rate: unknown };
    expect(before.rate).toEqual({ requestsPerSecond: expect.any(Number), burst: expect.any(Number) });

    for (const rate of [{ requestsPerSecond: 0, burst: 1 }, { requestsPerSecond: 5 }, { requestsPerSecond: 5, burst: 1.5 }, 'fast']) {
      expect(await errorOf(await setNamespace(namespace, { rate }))).toMatchObject({ status: 400, code: 'request.invalid' });
    }
    expect(await (await call(`/v1/admin/namespaces/${namespace}`, { key: adminKey() })).json()).toEqual(before);

    // A change says when requests see it: the suite's authorizer cache TTL, 1 s (a read says nothing of the kind).
    expect(before).not.toHaveProperty('takesEffectWithinSeconds');
    expect(await (await setNamespace(namespace, { rate: { requestsPerSecond: 7, burst: 9 } })).json()).toMatchObject({
      rate: { requestsPerSecond: 7, burst: 9 },
      takesEffectWithinSeconds: 1,
    });
    expect(await (await setNamespace(namespace, { rate: null })).json()).toMatchObject({ rate: before.rate });
  });
});

describe('storage quota per namespace', () => {
  it('admits exactly keysMax new keys from concurrent writers, refusing the others with 429 quota.keys', async () => {
    // Prepare
    const tenant = await freshNamespace('keys-quota');
    expect(await (await setNamespace(tenant.namespace, { storage: { keysMax: 10 } })).json()).toMatchObject({
      storage: { keysMax: 10 },
      usage: { keys: 0, bytes: 0 },
    });
    await sleep(settingsReachRequestsMs);

    // Act: 40 writers of 40 new keys at once.
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, index) => call(kvPath(`key-${index}`), { method: 'PUT', key: tenant.key, body: 'abcd' })),
    );

    // Assess: ten stored, thirty refused, and the counter and the listing agree.
    const statuses = statusesOf(responses);
    expect(count(statuses, (status) => status === 200)).toBe(10);
    expect(count(statuses, (status) => status === 429)).toBe(30);
    const refusals = await Promise.all(responses.filter((response) => response.status === 429).map((response) => errorOf(response)));
    for (const refusal of refusals) expect(refusal).toMatchObject({ code: 'quota.keys', details: { limit: 'keys', keysMax: 10 } });
    expect(await usageOf(tenant.namespace)).toEqual({ keys: 10, bytes: 40 });
    const listed = (await (await call('/v1/kv?limit=100', { key: tenant.key })).json()) as { items: unknown[] };
    expect(listed.items).toHaveLength(10);

    // Overwrites of a stored key add no key; a delete frees one for a new key.
    const stored = responses.findIndex((response) => response.status === 200);
    const overwrites = await Promise.all(
      Array.from({ length: 8 }, () => call(kvPath(`key-${stored}`), { method: 'PUT', key: tenant.key, body: 'abcdef' })),
    );
    expect(statusesOf(overwrites)).toEqual(Array.from({ length: 8 }, () => 200));
    expect(await usageOf(tenant.namespace)).toEqual({ keys: 10, bytes: 42 });
    expect((await call(kvPath('one-more'), { method: 'PUT', key: tenant.key, body: 'x' })).status).toBe(429);
    expect((await call(kvPath(`key-${stored}`), { method: 'DELETE', key: tenant.key })).status).toBe(200);
    expect((await call(kvPath('one-more'), { method: 'PUT', key: tenant.key, body: 'x' })).status).toBe(200);
    expect(await usageOf(tenant.namespace)).toEqual({ keys: 10, bytes: 37 });
  });

  it('admits writes up to bytesMax exactly, refusing the rest with 429 quota.bytes', async () => {
    const tenant = await freshNamespace('bytes-quota');
    expect((await setNamespace(tenant.namespace, { storage: { bytesMax: 1000 } })).status).toBe(200);
    await sleep(settingsReachRequestsMs);

    const value = 'x'.repeat(100);
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, index) => call(kvPath(`blob-${index}`), { method: 'PUT', key: tenant.key, body: value })),
    );

    const statuses = statusesOf(responses);
    expect(count(statuses, (status) => status === 200)).toBe(10);
    expect(count(statuses, (status) => status === 429)).toBe(20);
    const refusals = await Promise.all(responses.filter((response) => response.status === 429).map((response) => errorOf(response)));
    for (const refusal of refusals) expect(refusal).toMatchObject({ code: 'quota.bytes', details: { limit: 'bytes', bytesMax: 1000 } });
    expect(await usageOf(tenant.namespace)).toEqual({ keys: 10, bytes: 1000 });
  });

  it('counts what a namespace already stores when its quota is set, and refuses a quota it is already over', async () => {
    const tenant = await freshNamespace('seeded-quota');
    for (const key of ['a', 'b', 'c']) await call(kvPath(key), { method: 'PUT', key: tenant.key, body: '12345' });

    expect(await errorOf(await setNamespace(tenant.namespace, { storage: { keysMax: 2 } }))).toMatchObject({
      status: 400,
      code: 'request.invalid',
      details: { field: 'storage', usage: { keys: 3, bytes: 15 } },
    });
    expect(await usageOf(tenant.namespace)).toBeUndefined();
    expect(await errorOf(await setNamespace(tenant.namespace, { storage: {} }))).toMatchObject({ status: 400 });

    expect(await (await setNamespace(tenant.namespace, { storage: { keysMax: 4 } })).json()).toMatchObject({
      usage: { keys: 3, bytes: 15 },
    });
    expect(await (await setNamespace(tenant.namespace, { storage: null })).json()).not.toHaveProperty('storage');
  });

  describe('block volumes', () => {
    const mib = 1024 * 1024;
    const volumeCall = (tenant: { key: string }, path: string, method: string, body?: unknown) =>
      call(`/v1/volumes${path}`, {
        method,
        key: tenant.key,
        ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
    const volumeNames = async (tenant: { key: string }) =>
      ((await (await volumeCall(tenant, '', 'GET')).json()) as { volumes: Array<{ name: string; sizeBytes: number }> }).volumes;

    it('counts a volume for its whole size from its creation: a create or grow past bytesMax changes nothing, a delete frees it', async () => {
      // Prepare: a namespace of 3 MiB.
      const tenant = await freshNamespace('volume-quota');
      expect((await setNamespace(tenant.namespace, { storage: { bytesMax: 3 * mib } })).status).toBe(200);
      await sleep(settingsReachRequestsMs);

      // A 2 MiB volume takes 2 MiB, unwritten; a second one does not fit and is not created.
      expect((await volumeCall(tenant, '', 'POST', { name: 'a', sizeBytes: 2 * mib })).status).toBe(201);
      expect(await usageOf(tenant.namespace)).toEqual({ keys: 0, bytes: 2 * mib });
      expect(await errorOf(await volumeCall(tenant, '', 'POST', { name: 'b', sizeBytes: 2 * mib }))).toMatchObject({
        status: 429,
        code: 'quota.bytes',
        details: { limit: 'bytes', bytesMax: 3 * mib },
      });
      expect(await volumeNames(tenant)).toEqual([expect.objectContaining({ name: 'a', sizeBytes: 2 * mib })]);

      // Keys and volumes share the bound: with a key stored, the grow to 3 MiB no longer fits.
      expect((await call(kvPath('k'), { method: 'PUT', key: tenant.key, body: 'x'.repeat(100) })).status).toBe(200);
      expect(await errorOf(await volumeCall(tenant, '/a/resize', 'POST', { sizeBytes: 3 * mib }))).toMatchObject({
        status: 429,
        code: 'quota.bytes',
      });
      expect(await (await volumeCall(tenant, '/a', 'GET')).json()).toMatchObject({ sizeBytes: 2 * mib });
      expect(await usageOf(tenant.namespace)).toEqual({ keys: 1, bytes: 2 * mib + 100 });

      // A shrink frees room, a delete all of it.
      expect((await volumeCall(tenant, '/a/resize', 'POST', { sizeBytes: mib })).status).toBe(200);
      expect(await usageOf(tenant.namespace)).toEqual({ keys: 1, bytes: mib + 100 });
      expect((await volumeCall(tenant, '/a', 'DELETE')).status).toBe(200);
      expect(await usageOf(tenant.namespace)).toEqual({ keys: 1, bytes: 100 });
      expect((await volumeCall(tenant, '', 'POST', { name: 'b', sizeBytes: 2 * mib })).status).toBe(201);
    });

    it('counts the volumes a namespace already has when its quota is set', async () => {
      const tenant = await freshNamespace('volume-seeded-quota');
      expect((await volumeCall(tenant, '', 'POST', { name: 'disk', sizeBytes: mib })).status).toBe(201);
      await call(kvPath('k'), { method: 'PUT', key: tenant.key, body: '12345' });

      expect(await errorOf(await setNamespace(tenant.namespace, { storage: { bytesMax: mib } }))).toMatchObject({
        status: 400,
        details: { field: 'storage', usage: { keys: 1, bytes: mib + 5 } },
      });
      expect(await (await setNamespace(tenant.namespace, { storage: { bytesMax: 2 * mib } })).json()).toMatchObject({
        usage: { keys: 1, bytes: mib + 5 },
      });
    });
  });

  it('refuses write transactions in a namespace with a storage quota (409 quota.unsupported) and runs read-only ones', async () => {
    const tenant = await freshNamespace('txn-quota');
    await call(kvPath('seen'), { method: 'PUT', key: tenant.key, body: 'v' });
    expect((await setNamespace(tenant.namespace, { storage: { keysMax: 100 } })).status).toBe(200);
    await sleep(settingsReachRequestsMs);

    const transact = (ops: unknown[]) =>
      call('/v1/txn', { method: 'POST', key: tenant.key, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ops }) });
    expect(await errorOf(await transact([{ op: 'put', key: 'a', value: '1' }]))).toMatchObject({ status: 409, code: 'quota.unsupported' });
    expect((await call(kvPath('a'), { key: tenant.key })).status).toBe(404);
    const readOnly = await transact([{ op: 'get', key: 'seen' }]);
    expect(readOnly.status).toBe(200);
  });
});
