import { ApiKeyService, keyIdOf, requireAdmin } from '../../lambdas/core/auth';
import { isRingstoreError } from '../../lambdas/core/errors';
import type { ApiKeyRecord, ApiKeyStore } from '../../lambdas/ports';
import { ManualClock } from '../support/memory-ports';
import { randomIds } from '../../lambdas/wiring/wiring';

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
}

async function codeOf(action: Promise<unknown>) {
  return action.then(
    () => undefined,
    (error: unknown) => (isRingstoreError(error) ? error.code : String(error)),
  );
}

describe('ApiKeyService', () => {
  const setup = () => {
    const keys = new MemoryKeys();
    return { keys, service: new ApiKeyService({ keys, ids: randomIds, clock: new ManualClock() }) };
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

  it('lets only admin principals through requireAdmin', () => {
    expect(() => requireAdmin({ keyId: 'a', namespace: 'n', role: 'admin' })).not.toThrow();
    expect(() => requireAdmin({ keyId: 'a', namespace: 'n', role: 'user' })).toThrow(/admin/);
  });
});
