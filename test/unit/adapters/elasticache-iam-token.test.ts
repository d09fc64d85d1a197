// The ElastiCache IAM token: what it is signed for, how long it lives, and when it is signed again.
import { ElastiCacheIamToken, iamTokenLifetimeSeconds, iamTokenRefreshMs } from '../../../lambdas/adapters/elasticache-iam-token';

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'tok/en+=' };
const start = Date.UTC(2026, 10, 25, 10, 0, 0);

function tokens(now: () => number, provider = () => Promise.resolve(credentials)) {
  return new ElastiCacheIamToken({
    cacheName: 'rs-dev-l2-abc',
    userId: 'ringstore-dev-l2',
    region: 'eu-west-1',
    credentials: provider,
    now,
  });
}

describe('ElastiCacheIamToken', () => {
  it('is a presigned connect request for the replication group and user, valid 15 minutes, without a scheme', async () => {
    // Act
    const token = await tokens(() => start).password();

    // Assess
    const url = new URL(`http://${token}`);
    expect(token.startsWith('rs-dev-l2-abc/?')).toBe(true);
    expect(url.searchParams.get('Action')).toBe('connect');
    expect(url.searchParams.get('User')).toBe('ringstore-dev-l2');
    expect(url.searchParams.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
    expect(url.searchParams.get('X-Amz-Credential')).toBe('AKIDEXAMPLE/20261125/eu-west-1/elasticache/aws4_request');
    expect(url.searchParams.get('X-Amz-Date')).toBe('20261125T100000Z');
    expect(url.searchParams.get('X-Amz-Expires')).toBe(String(iamTokenLifetimeSeconds));
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('host');
    expect(url.searchParams.get('X-Amz-Security-Token')).toBe(credentials.sessionToken);
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('keeps a token until it is due, then signs a new one', async () => {
    // Prepare
    let now = start;
    const source = tokens(() => now);
    const first = await source.password();

    // Act
    now = start + iamTokenRefreshMs - 1;
    const beforeDue = await source.password();
    now = start + iamTokenRefreshMs;
    const due = await source.password();

    // Assess
    expect(beforeDue).toBe(first);
    expect(due).not.toBe(first);
    expect(new URL(`http://${due}`).searchParams.get('X-Amz-Date')).toBe('20261125T101000Z');
  });

  it('does not keep a failure: the next call signs again', async () => {
    // Prepare
    let calls = 0;
    const source = tokens(
      () => start,
      () => {
        calls += 1;
        return calls === 1 ? Promise.reject(new Error('no credentials yet')) : Promise.resolve(credentials);
      },
    );

    // Act
    const failed = source.password();
    await expect(failed).rejects.toThrow('no credentials yet');
    const token = await source.password();

    // Assess
    expect(token.startsWith('rs-dev-l2-abc/?')).toBe(true);
    expect(calls).toBe(2);
  });
});
