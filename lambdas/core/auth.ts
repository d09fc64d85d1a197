// API keys: a secret maps to a namespace and a role. Only the secret's sha256 is stored. A key may expire,
// and may be rotated: a new secret for the same key id, the old one still accepted for a grace period.
import { timingSafeEqual } from 'node:crypto';
import { RingstoreError } from './errors';
import { sha256Hex } from './digest';
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

/** How often, at most, a key's last use is written: the admin API shows it to the minute, at one write a minute. */
export const keyUseRecordIntervalMs = 60_000;

/** A rotation's grace period when none is named, and the longest one: the old secret works this long beside the new. */
export const rotationGraceSecondsDefault = 3_600;
export const rotationGraceSecondsMax = 7 * 24 * 3_600;

const isoOf = (ms: number) => new Date(ms).toISOString();

export class ApiKeyService {
  constructor(
    private readonly deps: {
      keys: ApiKeyStore;
      ids: IdSource;
      clock: Clock;
      /** A failed write of a key's last use: logged, never a refusal of the key. */
      onUseNotRecorded?: (error: unknown) => void;
    },
  ) {}

  /** The principal of a presented key, or `auth.missingKey` / `auth.invalidKey`; records the key's use (once a minute). */
  async authenticate(apiKey: string | undefined): Promise<Principal> {
    if (!apiKey) throw new RingstoreError('auth.missingKey', 'missing x-api-key header');
    const keyId = keyIdOf(apiKey);
    const record = keyId === undefined ? undefined : await this.deps.keys.find(keyId);
    const nowMs = this.deps.clock.nowMs();
    if (!record || record.revokedAt || !this.secretMatches(record, sha256Hex(apiKey), nowMs)) {
      throw new RingstoreError('auth.invalidKey', 'API key is not valid (unknown, revoked, or a rotated secret past its grace period)');
    }
    if (record.expiresAt !== undefined && Date.parse(record.expiresAt) <= nowMs) {
      throw new RingstoreError('auth.invalidKey', `API key expired at ${record.expiresAt}`);
    }
    await this.recordUse(record, nowMs);
    return { keyId: record.keyId, namespace: record.namespace, role: record.role };
  }

  async create(input: {
    namespace: string;
    role: Role;
    description?: string;
    expiresAt?: string;
  }): Promise<{ apiKey: string; record: ApiKeyRecord }> {
    validateNamespace(input.namespace);
    const nowMs = this.deps.clock.nowMs();
    if (input.expiresAt !== undefined) this.validateExpiry(input.expiresAt, nowMs);
    const keyId = this.deps.ids.newId().replace(/-/g, '').slice(0, 12);
    const apiKey = this.newSecretFor(keyId);
    const record: ApiKeyRecord = {
      keyId,
      secretHash: sha256Hex(apiKey),
      namespace: input.namespace,
      role: input.role,
      createdAt: isoOf(nowMs),
      ...(input.description ? { description: input.description } : {}),
      ...(input.expiresAt ? { expiresAt: isoOf(Date.parse(input.expiresAt)) } : {}),
    };
    await this.deps.keys.create(record);
    return { apiKey, record };
  }

  /**
   * A new secret for the key (same id, namespace and role); the current one keeps working for
   * `graceSeconds`, so clients can switch without a gap. A secret rotated away before is dropped.
   */
  async rotate(keyId: string, input: { graceSeconds?: number; expiresAt?: string }): Promise<{ apiKey: string; record: ApiKeyRecord }> {
    const graceSeconds = input.graceSeconds ?? rotationGraceSecondsDefault;
    if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > rotationGraceSecondsMax) {
      throw new RingstoreError('request.invalid', `graceSeconds must be an integer from 0 to ${rotationGraceSecondsMax}`, {
        details: { field: 'graceSeconds' },
      });
    }
    const nowMs = this.deps.clock.nowMs();
    if (input.expiresAt !== undefined) this.validateExpiry(input.expiresAt, nowMs);
    const current = await this.deps.keys.find(keyId);
    if (!current) throw new RingstoreError('admin.keyNotFound', `API key ${keyId} does not exist`);
    if (current.revokedAt)
      throw new RingstoreError('admin.keyRevoked', `API key ${keyId} was revoked at ${current.revokedAt}: create a new one`);
    const apiKey = this.newSecretFor(keyId);
    const rotated = await this.deps.keys.rotate(
      keyId,
      {
        secretHash: sha256Hex(apiKey),
        previousSecretHash: current.secretHash,
        previousSecretExpiresAt: isoOf(nowMs + graceSeconds * 1000),
        rotatedAt: isoOf(nowMs),
        ...(input.expiresAt ? { expiresAt: isoOf(Date.parse(input.expiresAt)) } : {}),
      },
      current.secretHash,
    );
    if (!rotated) {
      throw new RingstoreError('admin.keyRevoked', `API key ${keyId} was revoked or rotated by another request meanwhile; read it again`, {
        retryable: true,
      });
    }
    return { apiKey, record: rotated };
  }

  async revoke(keyId: string): Promise<ApiKeyRecord> {
    const revoked = await this.deps.keys.revoke(keyId, new Date(this.deps.clock.nowMs()).toISOString());
    if (!revoked) throw new RingstoreError('admin.keyNotFound', `API key ${keyId} does not exist`);
    return revoked;
  }

  list(): Promise<ApiKeyRecord[]> {
    return this.deps.keys.list();
  }

  /** The current secret, or the previous one within its grace period; compared in constant time. */
  private secretMatches(record: ApiKeyRecord, presentedHash: string, nowMs: number): boolean {
    if (sameHash(record.secretHash, presentedHash)) return true;
    const { previousSecretHash, previousSecretExpiresAt } = record;
    return (
      previousSecretHash !== undefined &&
      previousSecretExpiresAt !== undefined &&
      Date.parse(previousSecretExpiresAt) > nowMs &&
      sameHash(previousSecretHash, presentedHash)
    );
  }

  /** Writes the key's last use when the recorded one is a minute old; a failure is reported, never a refusal. */
  private async recordUse(record: ApiKeyRecord, nowMs: number): Promise<void> {
    if (record.lastUsedAt !== undefined && Date.parse(record.lastUsedAt) > nowMs - keyUseRecordIntervalMs) return;
    try {
      await this.deps.keys.recordUse(record.keyId, isoOf(nowMs), isoOf(nowMs - keyUseRecordIntervalMs));
    } catch (error) {
      this.deps.onUseNotRecorded?.(error);
    }
  }

  private newSecretFor(keyId: string): string {
    return `rs_${keyId}_${this.deps.ids.newSecret()}`;
  }

  private validateExpiry(expiresAt: string, nowMs: number): void {
    const at = Date.parse(expiresAt);
    if (Number.isNaN(at) || at <= nowMs) {
      throw new RingstoreError('request.invalid', `expiresAt must be a time in the future (got ${expiresAt})`, {
        details: { field: 'expiresAt' },
      });
    }
  }
}

export function requireAdmin(principal: Principal): void {
  if (principal.role !== 'admin')
    throw new RingstoreError('auth.forbidden', 'this operation needs an admin API key (or an IAM principal mapped as admin)');
}

function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
