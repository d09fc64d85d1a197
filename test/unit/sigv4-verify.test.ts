import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { type ReceivedRequest, signatureSkewMsMax, verifySigV4 } from '../../cdk/local/sigv4-verify';

const user = { arn: 'arn:aws:iam::000000000000:user/alice', secretAccessKey: 'c2VjcmV0LW9mLWFsaWNlLWZvci10ZXN0cw' };
const accessKeyId = 'AKIAAAAAAAAAAAAAAAAA';
const lookup = async (id: string) => (id === accessKeyId ? user : undefined);
const nowMs = Date.UTC(2030, 0, 2, 3, 4, 5);

/** A request signed as a client signs it, turned into what the gateway receives. */
async function signed(
  options: {
    body?: string;
    secret?: string;
    signedAtMs?: number;
    path?: string;
    query?: Record<string, string>;
    /** False: no x-amz-content-sha256 header (curl's --aws-sigv4 sends none): the body's hash is in the signature only. */
    payloadHashHeader?: boolean;
  } = {},
): Promise<ReceivedRequest> {
  const signer = new SignatureV4({
    service: 'execute-api',
    region: 'eu-west-1',
    credentials: { accessKeyId, secretAccessKey: options.secret ?? user.secretAccessKey },
    sha256: Hash.bind(null, 'sha256'),
    applyChecksum: options.payloadHashHeader ?? true,
  });
  const body = options.body ?? '{"ops":[]}';
  const request = await signer.sign(
    {
      method: 'POST',
      protocol: 'http:',
      hostname: '127.0.0.1',
      port: 4510,
      path: options.path ?? '/v1/kv/a%2Fb',
      query: options.query ?? { consistency: 'strong' },
      headers: { host: '127.0.0.1:4510', 'content-type': 'application/json' },
      body,
    },
    { signingDate: new Date(options.signedAtMs ?? nowMs) },
  );
  const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value]));
  return {
    method: 'POST',
    path: options.path ?? '/v1/kv/a%2Fb',
    query: options.query ?? { consistency: 'strong' },
    headers,
    body: Buffer.from(body),
  };
}

describe('verifySigV4', () => {
  it('accepts a request signed with a known key, naming its user', async () => {
    const verdict = await verifySigV4(await signed(), lookup, nowMs);
    expect(verdict).toEqual({ ok: true, user, accessKeyId });
  });

  it('accepts a signature within five minutes either way', async () => {
    expect((await verifySigV4(await signed({ signedAtMs: nowMs - signatureSkewMsMax + 1000 }), lookup, nowMs)).ok).toBe(true);
    expect((await verifySigV4(await signed({ signedAtMs: nowMs + signatureSkewMsMax - 1000 }), lookup, nowMs)).ok).toBe(true);
  });

  it('refuses a tampered body', async () => {
    const request = await signed();
    // The payload hash header the client signed no longer matches the body.
    expect(await verifySigV4({ ...request, body: Buffer.from('{"ops":[1]}') }, lookup, nowMs)).toMatchObject({
      ok: false,
      code: 'auth.invalidSignature',
    });
    // Without the header, the body's hash is part of the signature, which no longer matches.
    const hashInSignatureOnly = await signed({ payloadHashHeader: false });
    expect(hashInSignatureOnly.headers['x-amz-content-sha256']).toBeUndefined();
    expect((await verifySigV4(hashInSignatureOnly, lookup, nowMs)).ok).toBe(true);
    expect(await verifySigV4({ ...hashInSignatureOnly, body: Buffer.from('{"ops":[1]}') }, lookup, nowMs)).toMatchObject({
      ok: false,
      code: 'auth.invalidSignature',
    });
  });

  it('refuses a tampered signed header, path or query', async () => {
    const request = await signed();
    expect(await verifySigV4({ ...request, headers: { ...request.headers, 'content-type': 'text/plain' } }, lookup, nowMs)).toMatchObject({
      code: 'auth.invalidSignature',
    });
    expect(await verifySigV4({ ...request, path: '/v1/kv/other' }, lookup, nowMs)).toMatchObject({ code: 'auth.invalidSignature' });
    expect(await verifySigV4({ ...request, query: { consistency: 'eventual' } }, lookup, nowMs)).toMatchObject({
      code: 'auth.invalidSignature',
    });
    expect(await verifySigV4({ ...request, headers: { ...request.headers, host: 'evil:4510' } }, lookup, nowMs)).toMatchObject({
      code: 'auth.invalidSignature',
    });
  });

  it('ignores headers that were not signed', async () => {
    const request = await signed();
    expect((await verifySigV4({ ...request, headers: { ...request.headers, 'user-agent': 'curl' } }, lookup, nowMs)).ok).toBe(true);
  });

  it('refuses a signature made with the wrong secret', async () => {
    expect(await verifySigV4(await signed({ secret: 'not-the-secret' }), lookup, nowMs)).toMatchObject({
      ok: false,
      code: 'auth.invalidSignature',
    });
  });

  it('refuses a stale or future date with auth.signatureExpired', async () => {
    expect(await verifySigV4(await signed({ signedAtMs: nowMs - signatureSkewMsMax - 1000 }), lookup, nowMs)).toMatchObject({
      code: 'auth.signatureExpired',
    });
    expect(await verifySigV4(await signed({ signedAtMs: nowMs + signatureSkewMsMax + 1000 }), lookup, nowMs)).toMatchObject({
      code: 'auth.signatureExpired',
    });
  });

  it('refuses an unknown access key', async () => {
    expect(await verifySigV4(await signed(), async () => undefined, nowMs)).toMatchObject({ code: 'auth.unknownAccessKey' });
  });

  it('refuses malformed headers, unsigned host and session tokens', async () => {
    const request = await signed();
    expect(
      await verifySigV4({ ...request, headers: { ...request.headers, authorization: 'AWS4-HMAC-SHA256 nonsense' } }, lookup, nowMs),
    ).toMatchObject({
      code: 'auth.invalidSignature',
    });
    const withoutHost = request.headers.authorization!.replace('SignedHeaders=content-type;host;', 'SignedHeaders=content-type;');
    expect(await verifySigV4({ ...request, headers: { ...request.headers, authorization: withoutHost } }, lookup, nowMs)).toMatchObject({
      code: 'auth.invalidSignature',
    });
    expect(await verifySigV4({ ...request, headers: { ...request.headers, 'x-amz-date': 'yesterday' } }, lookup, nowMs)).toMatchObject({
      code: 'auth.invalidSignature',
    });
    expect(await verifySigV4({ ...request, headers: { ...request.headers, 'x-amz-security-token': 't' } }, lookup, nowMs)).toMatchObject({
      code: 'auth.invalidSignature',
    });
  });

  it('verifies keys with characters the signer escapes', async () => {
    const path = `/v1/kv/${encodeURIComponent("it's (a) key*!~ é")}`;
    expect((await verifySigV4(await signed({ path, query: { prefix: 'a b+c' } }), lookup, nowMs)).ok).toBe(true);
  });
});
