// The password of an IAM-enabled ElastiCache user: a SigV4-presigned `connect` request for the replication
// group, signed with the Lambda role's credentials (docs/security.md, "The L2 cache"). Valid 15 minutes.
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentityProvider } from '@smithy/types';

/** ElastiCache accepts a token for at most 15 minutes after it was signed. */
export const iamTokenLifetimeSeconds = 900;
/**
 * A token is signed again once this old, well within its lifetime: a reconnect (a failover, ElastiCache
 * closing an IAM connection after 12 hours, a Lambda thawed after a long freeze) then always finds a valid one.
 */
export const iamTokenRefreshMs = 10 * 60_000;

/** A password that changes over time: asked before every connection (and every command, which is cheap). */
export interface PasswordSource {
  password(): Promise<string>;
}

export interface ElastiCacheIamTokenOptions {
  /** The replication group id (lowercase), as the token names it. */
  cacheName: string;
  /** The IAM-enabled user; its id and name are the same. */
  userId: string;
  region: string;
  /** The Lambda role's credentials by default (the Node provider chain). */
  credentials?: AwsCredentialIdentityProvider;
  /** Milliseconds since the epoch: when a token was signed and whether it is due again. */
  now?: () => number;
}

/**
 * Signs IAM authentication tokens for one ElastiCache user and replication group, and keeps the latest
 * until it is {@link iamTokenRefreshMs} old.
 *
 * @example
 * const tokens = new ElastiCacheIamToken({ cacheName: 'ringstore-dev-l2-abc', userId: 'ringstore-dev-l2', region: 'eu-west-1' });
 * const redis = new RedisCache(url, { username: 'ringstore-dev-l2', password: tokens });
 */
export class ElastiCacheIamToken implements PasswordSource {
  private readonly signer: SignatureV4;
  private readonly now: () => number;
  private latest: { signedAtMs: number; token: Promise<string> } | undefined;

  constructor(private readonly options: ElastiCacheIamTokenOptions) {
    this.now = options.now ?? Date.now;
    this.signer = new SignatureV4({
      service: 'elasticache',
      region: options.region,
      credentials: options.credentials ?? defaultProvider(),
      sha256: Hash.bind(null, 'sha256'),
    });
  }

  password(): Promise<string> {
    const nowMs = this.now();
    if (!this.latest || nowMs - this.latest.signedAtMs >= iamTokenRefreshMs) {
      const token = this.sign(nowMs);
      // A failed signing (credentials unavailable) is not kept: the next call tries again.
      token.catch(() => {
        if (this.latest?.token === token) this.latest = undefined;
      });
      this.latest = { signedAtMs: nowMs, token };
    }
    return this.latest.token;
  }

  private async sign(nowMs: number): Promise<string> {
    // ElastiCache keeps replication group ids in lowercase, and signs for that spelling.
    const cacheName = this.options.cacheName.toLowerCase();
    const { userId } = this.options;
    const presigned = await this.signer.presign(
      {
        method: 'GET',
        protocol: 'http:',
        hostname: cacheName,
        path: '/',
        query: { Action: 'connect', User: userId },
        headers: { host: cacheName },
      },
      { expiresIn: iamTokenLifetimeSeconds, signingDate: new Date(nowMs) },
    );
    // The token is the presigned URL without its scheme.
    const query = Object.entries(presigned.query ?? {})
      .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`)
      .join('&');
    return `${cacheName}/?${query}`;
  }
}
