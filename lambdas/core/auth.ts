// API keys: a secret maps to a namespace and a role. Only the secret's sha256 is stored.
import { timingSafeEqual } from 'node:crypto';
import { RingstoreError } from './errors';
import { sha256Hex } from './kv';
import { validateNamespace } from './validation';
import type { ApiKeyRecord, ApiKeyStore, Clock, Consistency, DrMode, IdSource, RateLimit, Role, StorageQuota } from '../ports';

/** Who is calling, as the authorizer hands it to the handlers. */
export interface Principal {
  keyId: string;
  namespace: string;
  role: Role;
}

/** The principal with its namespace's defaults, as the handlers receive it. */
export interface RequestPrincipal extends Principal {
  readConsistency: Consistency;
  writeConsistency: Consistency;
  drMode: DrMode;
  /** The namespace's request rate (absent only in an answer cached before quotas existed). */
  rate?: RateLimit;
  /** The namespace's storage quota, if it has one. */
  storage?: StorageQuota;
}

// The key id travels inside the secret so a lookup is one GetItem: `rs_<keyId>_<secret>`.
const apiKeyPattern = /^rs_([0-9a-f]{12})_([A-Za-z0-9_-]{32,128})$/;

export function keyIdOf(apiKey: string): string | undefined {
  return apiKeyPattern.exec(apiKey)?.[1];
}

export class ApiKeyService {
  constructor(private readonly deps: { keys: ApiKeyStore; ids: IdSource; clock: Clock }) {}

  /** The principal of a presented key, or `auth.missingKey` / `auth.invalidKey`. */
  async authenticate(apiKey: string | undefined): Promise<Principal> {
    if (!apiKey) throw new RingstoreError('auth.missingKey', 'missing x-api-key header');
    const keyId = keyIdOf(apiKey);
    const record = keyId === undefined ? undefined : await this.deps.keys.find(keyId);
    if (!record || record.revokedAt || !sameHash(record.secretHash, sha256Hex(apiKey))) {
      throw new RingstoreError('auth.invalidKey', 'API key is not valid (unknown or revoked)');
    }
    return { keyId: record.keyId, namespace: record.namespace, role: record.role };
  }

  async create(input: { namespace: string; role: Role; description?: string }): Promise<{ apiKey: string; record: ApiKeyRecord }> {
    validateNamespace(input.namespace);
    const keyId = this.deps.ids.newId().replace(/-/g, '').slice(0, 12);
    const apiKey = `rs_${keyId}_${this.deps.ids.newSecret()}`;
    const record: ApiKeyRecord = {
      keyId,
      secretHash: sha256Hex(apiKey),
      namespace: input.namespace,
      role: input.role,
      createdAt: new Date(this.deps.clock.nowMs()).toISOString(),
      ...(input.description ? { description: input.description } : {}),
    };
    await this.deps.keys.create(record);
    return { apiKey, record };
  }

  async revoke(keyId: string): Promise<ApiKeyRecord> {
    const revoked = await this.deps.keys.revoke(keyId, new Date(this.deps.clock.nowMs()).toISOString());
    if (!revoked) throw new RingstoreError('admin.keyNotFound', `API key ${keyId} does not exist`);
    return revoked;
  }

  list(): Promise<ApiKeyRecord[]> {
    return this.deps.keys.list();
  }
}

export function requireAdmin(principal: Principal): void {
  if (principal.role !== 'admin') throw new RingstoreError('auth.forbidden', 'this operation needs an admin API key');
}

function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
