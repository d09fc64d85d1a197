// API key rotation, expiry and last use through real HTTP (docs/security.md, "Key rotation and expiry").
import { adminKey, call, errorOf, freshNamespace, sleep } from './support';

/** The suite's authorizer cache TTL is 1 s: a refusal shows once the gateway forgets the last answer. */
const authorizerCacheMs = 1000;

const adminJson = (path: string, method: string, body: unknown) =>
  call(path, { method, key: adminKey(), headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function listed(keyId: string): Promise<Record<string, unknown>> {
  const { keys } = (await (await call('/v1/admin/keys', { key: adminKey() })).json()) as { keys: Array<Record<string, unknown>> };
  return keys.find((key) => key.keyId === keyId)!;
}

describe('API key rotation', () => {
  it('keeps the old secret working beside the new one for the grace period, then only the new one', async () => {
    // Prepare
    const tenant = await freshNamespace('rotate');
    expect((await call('/v1/ring', { key: tenant.key })).status).toBe(200);

    // Act
    const rotated = await adminJson(`/v1/admin/keys/${tenant.keyId}/rotate`, 'POST', { graceSeconds: 2 });

    // Assess: one key id, a new secret; both work, and the listing shows the rotation and the last use, no hash.
    expect(rotated.status).toBe(200);
    const { apiKey: fresh, ...info } = (await rotated.json()) as { apiKey: string } & Record<string, unknown>;
    expect(info).toMatchObject({ keyId: tenant.keyId, namespace: tenant.namespace, rotatedAt: expect.any(String) });
    expect(fresh.startsWith(`rs_${tenant.keyId}_`)).toBe(true);
    expect(fresh).not.toBe(tenant.key);
    expect((await call('/v1/ring', { key: fresh })).status).toBe(200);
    expect((await call('/v1/ring', { key: tenant.key })).status).toBe(200);
    const shown = await listed(tenant.keyId);
    expect(shown).toMatchObject({ lastUsedAt: expect.any(String), previousSecretExpiresAt: info.previousSecretExpiresAt });
    expect(JSON.stringify(shown)).not.toMatch(/secretHash|previousSecretHash/);

    await sleep(2000 + authorizerCacheMs + 500);
    expect(await errorOf(await call('/v1/ring', { key: tenant.key }))).toMatchObject({ status: 403, code: 'auth.invalidKey' });
    expect((await call('/v1/ring', { key: fresh })).status).toBe(200);
  });

  it('refuses a rotation of an unknown or revoked key, bad input, and a user key, changing nothing', async () => {
    const tenant = await freshNamespace('rotate-refused');
    expect(await errorOf(await adminJson('/v1/admin/keys/000000000000/rotate', 'POST', {}))).toMatchObject({
      status: 404,
      code: 'admin.keyNotFound',
    });
    for (const body of [{ graceSeconds: -1 }, { graceSeconds: 1.5 }, { expiresAt: 'tomorrow' }, { grace: 5 }]) {
      expect(await errorOf(await adminJson(`/v1/admin/keys/${tenant.keyId}/rotate`, 'POST', body))).toMatchObject({ status: 400 });
    }
    const asUser = await call(`/v1/admin/keys/${tenant.keyId}/rotate`, { method: 'POST', key: tenant.key, body: '{}' });
    expect(await errorOf(asUser)).toMatchObject({ status: 403, code: 'auth.forbidden' });
    expect(await listed(tenant.keyId)).not.toHaveProperty('rotatedAt');

    await call(`/v1/admin/keys/${tenant.keyId}`, { method: 'DELETE', key: adminKey() });
    expect(await errorOf(await adminJson(`/v1/admin/keys/${tenant.keyId}/rotate`, 'POST', {}))).toMatchObject({
      status: 409,
      code: 'admin.keyRevoked',
    });
  });

  it('stops accepting a key at its expiry', async () => {
    const expiresAt = new Date(Date.now() + 2000).toISOString();
    const created = await adminJson('/v1/admin/keys', 'POST', { namespace: `expiring-${process.pid}`, expiresAt });
    expect(created.status).toBe(201);
    const { apiKey, expiresAt: shown } = (await created.json()) as { apiKey: string; expiresAt: string };
    expect(Date.parse(shown)).toBe(Date.parse(expiresAt));
    expect((await call('/v1/ring', { key: apiKey })).status).toBe(200);

    await sleep(2000 + authorizerCacheMs + 500);
    expect(await errorOf(await call('/v1/ring', { key: apiKey }))).toMatchObject({ status: 403, code: 'auth.invalidKey' });
    const past = await adminJson('/v1/admin/keys', 'POST', { namespace: 'expired', expiresAt: new Date(Date.now() - 1000).toISOString() });
    expect(await errorOf(past)).toMatchObject({ status: 400, details: { field: 'expiresAt' } });
  });
});
