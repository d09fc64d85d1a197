// Who may call: API keys, their rotation, and IAM principals mapped to a namespace and role (docs/security.md).

export type Role = 'user' | 'admin';

export interface ApiKeyRecord {
  keyId: string;
  /** Lowercase hex sha256 of the secret; the secret itself is never stored. */
  secretHash: string;
  namespace: string;
  role: Role;
  createdAt: string;
  revokedAt?: string;
  description?: string;
  /** After it (ISO time) the key no longer authenticates. */
  expiresAt?: string;
  /** The last time (ISO) the authorizer accepted the key, recorded at most once a minute. */
  lastUsedAt?: string;
  /** A rotated key's previous secret's hash, which also authenticates until `previousSecretExpiresAt`. */
  previousSecretHash?: string;
  previousSecretExpiresAt?: string;
  /** When the key was last rotated (ISO). */
  rotatedAt?: string;
}

/** A rotation: the new secret's hash, and the old one's kept for a grace period. */
export interface ApiKeyRotation {
  secretHash: string;
  previousSecretHash: string;
  previousSecretExpiresAt: string;
  rotatedAt: string;
  expiresAt?: string;
}

export interface ApiKeyStore {
  find(keyId: string): Promise<ApiKeyRecord | undefined>;
  create(record: ApiKeyRecord): Promise<void>;
  /** Marks the key revoked; returns the updated record, or undefined when the key does not exist. */
  revoke(keyId: string, revokedAt: string): Promise<ApiKeyRecord | undefined>;
  list(): Promise<ApiKeyRecord[]>;
  /**
   * Rotates a key not revoked, only while its secret is still `expectSecretHash` (two rotations at once:
   * one wins); returns the updated record, or undefined when the key is absent, revoked or rotated meanwhile.
   */
  rotate(keyId: string, rotation: ApiKeyRotation, expectSecretHash: string): Promise<ApiKeyRecord | undefined>;
  /** Records a use at `usedAt` unless one after `notBefore` is recorded already (one write a minute at most). */
  recordUse(keyId: string, usedAt: string, notBefore: string): Promise<void>;
}

/** An IAM principal allowed in: the role or user it is, and the namespace and role it acts as. */
export interface PrincipalMapping {
  /** The ARN as the admin gave it (a role or user, with its path if it has one). */
  principalArn: string;
  /** What callers are matched on: the same ARN without its path (docs/security.md, "IAM authentication"). */
  matchArn: string;
  namespace: string;
  role: Role;
  createdAt: string;
  description?: string;
}

export interface PrincipalMappingStore {
  find(matchArn: string): Promise<PrincipalMapping | undefined>;
  /** False when a mapping of that match ARN exists already: nothing was written. */
  create(mapping: PrincipalMapping): Promise<boolean>;
  /** The mapping removed, or undefined when there was none. */
  delete(matchArn: string): Promise<PrincipalMapping | undefined>;
  /** At most `limit` mappings, in match ARN order. */
  list(limit: number): Promise<PrincipalMapping[]>;
}
