// Authentication, namespaces and the admin API through real HTTP.
import { adminKey, apiKey, call, errorOf, freshNamespace, kvPath, sleep } from './support';

describe('authentication', () => {
  it('answers 401 without a key and 403 with an unknown one, on every authorized route', async () => {
    for (const path of ['/v1/kv/x', '/v1/kv', '/v1/ring', '/v1/admin/keys']) {
      expect(await errorOf(await call(path, { key: null }))).toMatchObject({ status: 401, code: 'auth.missingKey' });
      expect(await errorOf(await call(path, { key: 'rs_000000000000_' + 'x'.repeat(43) }))).toMatchObject({
        status: 403,
        code: 'auth.invalidKey',
      });
      expect(await errorOf(await call(path, { key: 'garbage' }))).toMatchObject({ status: 403 });
    }
  });

  it('keeps the admin API for admin keys', async () => {
    expect(await errorOf(await call('/v1/admin/keys', { key: apiKey() }))).toMatchObject({ status: 403, code: 'auth.forbidden' });
    const listed = await call('/v1/admin/keys', { key: adminKey() });
    expect(listed.status).toBe(200);
    const { keys } = (await listed.json()) as { keys: Array<Record<string, unknown>> };
    expect(keys.length).toBeGreaterThanOrEqual(2);
    for (const record of keys) expect(record).not.toHaveProperty('secretHash');
  });

  it('validates new keys and revokes keys (effective after the authorizer cache TTL)', async () => {
    const bad = await call('/v1/admin/keys', { method: 'POST', key: adminKey(), body: JSON.stringify({ namespace: 'has#hash' }) });
    expect(await errorOf(bad)).toMatchObject({ status: 400, code: 'request.invalid' });
    const extra = await call('/v1/admin/keys', { method: 'POST', key: adminKey(), body: JSON.stringify({ namespace: 'n', role: 'root' }) });
    expect(extra.status).toBe(400);
    const notJson = await call('/v1/admin/keys', { method: 'POST', key: adminKey(), body: '{nope' });
    expect(await errorOf(notJson)).toMatchObject({ status: 400, code: 'request.invalid' });

    const { key, keyId } = await freshNamespace('revoke');
    expect((await call('/v1/ring', { key })).status).toBe(200);
    const revoked = await call(`/v1/admin/keys/${keyId}`, { method: 'DELETE', key: adminKey() });
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toMatchObject({ keyId });
    await sleep(1500); // the suite's authorizer cache TTL is 1 s
    expect(await errorOf(await call('/v1/ring', { key }))).toMatchObject({ status: 403, code: 'auth.invalidKey' });
    expect(await errorOf(await call('/v1/admin/keys/000000000000', { method: 'DELETE', key: adminKey() }))).toMatchObject({
      status: 404,
      code: 'admin.keyNotFound',
    });
  });
});

describe('namespaces', () => {
  it("never lets one namespace read, list, overwrite or delete another namespace's keys", async () => {
    const alice = await freshNamespace('alice');
    const bob = await freshNamespace('bob');
    await call(kvPath('shared-name'), { method: 'PUT', key: alice.key, body: 'alice' });
    expect((await call(kvPath('shared-name'), { key: bob.key })).status).toBe(404);
    expect(await (await call('/v1/kv', { key: bob.key })).json()).toEqual({ items: [] });
    expect((await call(kvPath('shared-name'), { method: 'DELETE', key: bob.key })).status).toBe(404);
    await call(kvPath('shared-name'), { method: 'PUT', key: bob.key, body: 'bob' });
    expect(await (await call(kvPath('shared-name'), { key: alice.key })).text()).toBe('alice');
    expect(await (await call(kvPath('shared-name'), { key: bob.key })).text()).toBe('bob');
  });
});
