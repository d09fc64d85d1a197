import { ApiKeyService, keyIdOf, keyUseRecordIntervalMs, requireAdmin } from '../../../lambdas/core/auth';
import type { ApiKeyRecord, ApiKeyRotation, ApiKeyStore } from '../../../lambdas/ports';
import { ManualClock } from '../../support/memory-ports';
import { randomIds } from '../../../lambdas/wiring/wiring';
import { codeOf } from '../../support/errors';

class MemoryKeys implements ApiKeyStore {
  readonly records = new Map<string, ApiKeyRecord>();
  async find(keyId: string) {
    return this.records.get(keyId);
  }
  async create(record: ApiKeyRecord) {
    this.records.set(record.keyId, record);
  }
  async revoke(keyId: string, revokedAt: string) {
    const record = this.records.get(keyId);
    if (!record) return undefined;
    const revoked = { ...record, revokedAt };
    this.records.set(keyId, revoked);
    return revoked;
  }
  async list() {
    return [...this.records.values()];
  }
  async rotate(keyId: string, rotation: ApiKeyRotation, expectSecretHash: string) {
    const record = this.records.get(keyId);
    if (!record || record.revokedAt || record.secretHash !== expectSecretHash) return undefined;
    const rotated = { ...record, ...rotation };
    this.records.set(keyId, rotated);
    return rotated;
  }
  useWrites = 0;
  async recordUse(keyId: string, usedAt: string, notBefore: string) {
    const record = this.records.get(keyId);
    if (!record || (record.lastUsedAt !== undefined && record.lastUsedAt > notBefore)) return;
    this.useWrites += 1;
    this.records.set(keyId, { ...record, lastUsedAt: usedAt });
  }
}

describe('ApiKeyService', () => {
  const setup = () => {
    const keys = new MemoryKeys();
    const clock = new ManualClock();
    return { keys, clock, service: new ApiKeyService({ keys, ids: randomIds, clock }) };
  };

  it('stores only the hash and authenticates the secret to its namespace and role', async () => {
    const { keys, service } = setup();
    const { apiKey, record } = await service.create({ namespace: 'team', role: 'admin' });
    expect(keyIdOf(apiKey)).toBe(record.keyId);
    expect(JSON.stringify([...keys.records.values()])).not.toContain(apiKey);
    expect(await service.authenticate(apiKey)).toEqual({ keyId: record.keyId, namespace: 'team', role: 'admin' });
  });

  it('refuses missing, malformed, forged and revoked keys', async () => {
    const { service } = setup();
    const { apiKey, record } = await service.create({ namespace: 'team', role: 'user' });
    expect(await codeOf(service.authenticate(undefined))).toBe('auth.missingKey');
    expect(await codeOf(service.authenticate('nonsense'))).toBe('auth.invalidKey');
    const forged = apiKey.slice(0, -4) + (apiKey.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    expect(await codeOf(service.authenticate(forged))).toBe('auth.invalidKey');
    await service.revoke(record.keyId);
    expect(await codeOf(service.authenticate(apiKey))).toBe('auth.invalidKey');
    expect(await codeOf(service.revoke('000000000000'))).toBe('admin.keyNotFound');
  });

  it('rotates a key: the new secret works at once, the old one until its grace period ends, then only the new', async () => {
    // Prepare
    const { clock, service } = setup();
    const { apiKey: old, record } = await service.create({ namespace: 'team', role: 'user' });

    // Act
    const { apiKey: fresh, record: rotated } = await service.rotate(record.keyId, { graceSeconds: 60 });

    // Assess
    expect(keyIdOf(fresh)).toBe(record.keyId);
    expect(fresh).not.toBe(old);
    expect(rotated.previousSecretExpiresAt).toBe(new Date(clock.now + 60_000).toISOString());
    for (const secret of [old, fresh]) expect(await service.authenticate(secret)).toMatchObject({ keyId: record.keyId, namespace: 'team' });
    clock.now += 60_000;
    expect(await codeOf(service.authenticate(old))).toBe('auth.invalidKey');
    expect(await service.authenticate(fresh)).toMatchObject({ keyId: record.keyId });
  });

  it('drops the secret before the last when a key is rotated twice, and never rotates a revoked or unknown key', async () => {
    const { service } = setup();
    const { apiKey: first, record } = await service.create({ namespace: 'team', role: 'user' });
    const { apiKey: second } = await service.rotate(record.keyId, { graceSeconds: 600 });
    const { apiKey: third } = await service.rotate(record.keyId, { graceSeconds: 600 });
    expect(await codeOf(service.authenticate(first))).toBe('auth.invalidKey');
    for (const secret of [second, third]) expect(await service.authenticate(secret)).toMatchObject({ keyId: record.keyId });

    expect(await codeOf(service.rotate('000000000000', {}))).toBe('admin.keyNotFound');
    expect(await codeOf(service.rotate(record.keyId, { graceSeconds: -1 }))).toBe('request.invalid');
    await service.revoke(record.keyId);
    expect(await codeOf(service.rotate(record.keyId, {}))).toBe('admin.keyRevoked');
    expect(await codeOf(service.authenticate(third))).toBe('auth.invalidKey');
  });

  it('refuses a key after its expiry, and an expiry that is not in the future', async () => {
    const { clock, service } = setup();
    const expiresAt = new Date(clock.now + 3_600_000).toISOString();
    const { apiKey, record } = await service.create({ namespace: 'team', role: 'user', expiresAt });
    expect(record.expiresAt).toBe(expiresAt);
    expect(await service.authenticate(apiKey)).toMatchObject({ keyId: record.keyId });
    clock.now += 3_600_000;
    expect(await codeOf(service.authenticate(apiKey))).toBe('auth.invalidKey');
    const past = new Date(clock.now - 1).toISOString();
    expect(await codeOf(service.create({ namespace: 'team', role: 'user', expiresAt: past }))).toBe('request.invalid');
    expect(await codeOf(service.create({ namespace: 'team', role: 'user', expiresAt: 'soon' }))).toBe('request.invalid');
  });

  it("records a key's last use at most once a minute", async () => {
    const { clock, keys, service } = setup();
    const { apiKey, record } = await service.create({ namespace: 'team', role: 'user' });
    for (let call = 0; call < 5; call += 1) await service.authenticate(apiKey);
    expect(keys.useWrites).toBe(1);
    expect(keys.records.get(record.keyId)?.lastUsedAt).toBe(new Date(clock.now).toISOString());
    clock.now += keyUseRecordIntervalMs;
    await service.authenticate(apiKey);
    expect(keys.useWrites).toBe(2);
    expect(keys.records.get(record.keyId)?.lastUsedAt).toBe(new Date(clock.now).toISOString());
  });

  it('lets only admin principals through requireAdmin', () => {
    expect(() => requireAdmin({ keyId: 'a', namespace: 'n', role: 'admin' })).not.toThrow();
    expect(() => requireAdmin({ keyId: 'a', namespace: 'n', role: 'user' })).toThrow(/admin/);
  });
});
