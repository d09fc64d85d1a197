import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import fc from 'fast-check';
import { canonicalQuery, canonicalUri, type ReceivedRequest, signatureSkewMsMax, verifySigV4 } from '../../../cdk/local/sigv4-verify';
import { SigV4Signer } from '../../../sdk/src/sigv4';

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
    target: targetOf(options.path ?? '/v1/kv/a%2Fb', options.query ?? { consistency: 'strong' }),
    headers,
    body: Buffer.from(body),
  };
}

/** The request target a client sends for a path (already percent-encoded) and a query, as the SDK encodes it. */
function targetOf(path: string, query: Record<string, string>): string {
  const pairs = Object.entries(query).map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`);
  return pairs.length === 0 ? path : `${path}?${pairs.join('&')}`;
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
    expect(await verifySigV4({ ...request, target: '/v1/kv/other?consistency=strong' }, lookup, nowMs)).toMatchObject({
      code: 'auth.invalidSignature',
    });
    expect(await verifySigV4({ ...request, target: '/v1/kv/a%2Fb?consistency=eventual' }, lookup, nowMs)).toMatchObject({
      code: 'auth.invalidSignature',
    });
    // An encoded slash is part of its key, never a separator: /a/b is another request than /a%2Fb.
    expect(await verifySigV4({ ...request, target: '/v1/kv/a/b?consistency=strong' }, lookup, nowMs)).toMatchObject({
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

/**
 * Cases of AWS's Signature Version 4 test suite (aws-sig-v4-test-suite: its credentials, date, host, region
 * and service), each request target as its .req file sends it (raw UTF-8 and spaces included) with the
 * signature its .authz file publishes; @smithy/signature-v4 computes the same signatures.
 */
const suite = {
  accessKeyId: 'AKIDEXAMPLE',
  user: { secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
  amzDate: '20150830T123600Z',
  signedAtMs: Date.UTC(2015, 7, 30, 12, 36, 0),
  host: 'example.amazonaws.com',
};
const unreservedChars = '-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const suiteCases: Array<{
  name: string;
  target: string;
  canonicalUri: string;
  canonicalQuery: string;
  signature: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}> = [
  {
    name: 'get-vanilla',
    target: '/',
    canonicalUri: '/',
    canonicalQuery: '',
    signature: '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
  },
  {
    name: 'get-vanilla-query-order-key-case',
    target: '/?Param2=value2&Param1=value1',
    canonicalUri: '/',
    canonicalQuery: 'Param1=value1&Param2=value2',
    signature: 'b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500',
  },
  {
    name: 'get-vanilla-query-order-value',
    target: '/?Param1=value2&Param1=value1',
    canonicalUri: '/',
    canonicalQuery: 'Param1=value1&Param1=value2',
    signature: '5772eed61e12b33fae39ee5e7012498b51d56abc0abb7c60486157bd471c4694',
  },
  {
    name: 'get-vanilla-query-unreserved',
    target: `/?${unreservedChars}=${unreservedChars}`,
    canonicalUri: '/',
    canonicalQuery: `${unreservedChars}=${unreservedChars}`,
    signature: '9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197',
  },
  {
    name: 'get-vanilla-utf8-query',
    target: '/?\u1234=bar',
    canonicalUri: '/',
    canonicalQuery: '%E1%88%B4=bar',
    signature: '2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04',
  },
  {
    name: 'get-utf8',
    target: '/\u1234',
    canonicalUri: '/%E1%88%B4',
    canonicalQuery: '',
    signature: '8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85',
  },
  {
    name: 'get-space',
    target: '/example space/',
    canonicalUri: '/example%20space/',
    canonicalQuery: '',
    signature: '652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741',
  },
  {
    name: 'get-slash',
    target: '//',
    canonicalUri: '/',
    canonicalQuery: '',
    signature: '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
  },
  {
    name: 'get-slashes',
    target: '//example//',
    canonicalUri: '/example/',
    canonicalQuery: '',
    signature: '9a624bd73a37c9a373b5312afbebe7a714a789de108f0bdfe846570885f57e84',
  },
  {
    name: 'get-slash-dot-slash',
    target: '/./',
    canonicalUri: '/',
    canonicalQuery: '',
    signature: '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
  },
  {
    name: 'get-relative-relative',
    target: '/example1/example2/../..',
    canonicalUri: '/',
    canonicalQuery: '',
    signature: '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
  },
  {
    name: 'get-unreserved',
    target: `/${unreservedChars}`,
    canonicalUri: `/${unreservedChars}`,
    canonicalQuery: '',
    signature: '07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f',
  },
  {
    name: 'post-x-www-form-urlencoded',
    method: 'POST',
    target: '/',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'Param1=value1',
    canonicalUri: '/',
    canonicalQuery: '',
    signature: 'ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a',
  },
];

/** A target as Node hands it to the gateway: one char per byte of its UTF-8. */
const asReceived = (target: string) => Buffer.from(target, 'utf8').toString('latin1');

describe("AWS's SigV4 test suite", () => {
  it.each(suiteCases)('$name: canonical URI and query as published', (testCase) => {
    const [path, query = ''] = asReceived(testCase.target).split('?');

    expect({ uri: canonicalUri(path!), query: canonicalQuery(query) }).toEqual({
      uri: testCase.canonicalUri,
      query: testCase.canonicalQuery,
    });
  });

  it.each(suiteCases)('$name: its published signature verifies', async (testCase) => {
    const extra = testCase.headers ?? {};
    const signedHeaders = ['host', 'x-amz-date', ...Object.keys(extra)].sort();
    const request: ReceivedRequest = {
      method: testCase.method ?? 'GET',
      target: asReceived(testCase.target),
      headers: {
        host: suite.host,
        'x-amz-date': suite.amzDate,
        ...extra,
        authorization:
          `AWS4-HMAC-SHA256 Credential=${suite.accessKeyId}/20150830/us-east-1/service/aws4_request, ` +
          `SignedHeaders=${signedHeaders.join(';')}, Signature=${testCase.signature}`,
      },
      body: Buffer.from(testCase.body ?? ''),
    };

    const verdict = await verifySigV4(request, async (id) => (id === suite.accessKeyId ? suite.user : undefined), suite.signedAtMs);

    expect(verdict).toMatchObject({ ok: true });
  });

  it('agrees with @smithy/signature-v4 on every published signature', async () => {
    const signer = new SignatureV4({
      service: 'service',
      region: 'us-east-1',
      credentials: { accessKeyId: suite.accessKeyId, secretAccessKey: suite.user.secretAccessKey },
      sha256: Hash.bind(null, 'sha256'),
      applyChecksum: false,
    });
    for (const testCase of suiteCases) {
      const [path, query = ''] = testCase.target.split('?');
      const values: Record<string, string[]> = {};
      for (const pair of query.split('&').filter(Boolean)) {
        const [name, value = ''] = pair.split('=') as [string, string?];
        (values[name] ??= []).push(value);
      }
      const signed = await signer.sign(
        {
          method: testCase.method ?? 'GET',
          protocol: 'https:',
          hostname: suite.host,
          path: path!,
          query: Object.fromEntries(Object.entries(values).map(([name, list]) => [name, list.length === 1 ? list[0]! : list])),
          headers: { host: suite.host, ...testCase.headers },
          ...(testCase.body === undefined ? {} : { body: testCase.body }),
        },
        { signingDate: new Date(suite.signedAtMs) },
      );
      expect({ name: testCase.name, signature: /Signature=([0-9a-f]{64})/.exec(signed.headers.authorization ?? '')?.[1] }).toEqual({
        name: testCase.name,
        signature: testCase.signature,
      });
    }
  });
});

describe('canonicalization of what API Gateway receives', () => {
  it('signs an escape in a path segment as escaped once more: %2F stays in its key, é is its UTF-8', () => {
    expect(canonicalUri('/v1/kv/a%2Fb')).toBe('/v1/kv/a%252Fb');
    expect(canonicalUri('/v1/kv/caf%C3%A9')).toBe('/v1/kv/caf%25C3%25A9');
    expect(canonicalUri('/v1/kv/a/b')).toBe('/v1/kv/a/b');
  });

  it('sorts the query by name then value and encodes each once, a + as a plus', () => {
    expect(canonicalQuery('prefix=dr&limit=2')).toBe('limit=2&prefix=dr');
    expect(canonicalQuery('prefix=dr/')).toBe('prefix=dr%2F');
    expect(canonicalQuery('prefix=dr%2F')).toBe('prefix=dr%2F');
    expect(canonicalQuery('prefix=caf%c3%a9')).toBe('prefix=caf%C3%A9');
    expect(canonicalQuery('q=a+b&q=a%20b')).toBe('q=a%20b&q=a%2Bb');
    expect(canonicalQuery('b&a=1&&c=%zz')).toBe('a=1&b=&c=%25zz');
  });

  it("verifies what the SDK's signer signs, for any key and any query", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 40, unit: 'binary' }),
        fc.string({ maxLength: 20, unit: 'binary' }),
        async (key, prefix) => {
          const url = `http://127.0.0.1:4510/v1/kv/${encodeURIComponent(key)}?prefix=${encodeURIComponent(prefix)}&limit=2`;
          const sdkSigner = new SigV4Signer({
            credentials: { accessKeyId, secretAccessKey: user.secretAccessKey },
            region: 'eu-west-1',
            now: () => nowMs,
          });
          const headers = await sdkSigner.sign({ method: 'GET', url, headers: {} });
          const { pathname, search } = new URL(url);

          const verdict = await verifySigV4(
            {
              method: 'GET',
              target: `${pathname}${search}`,
              headers: { host: '127.0.0.1:4510', ...lowercased(headers) },
              body: new Uint8Array(),
            },
            lookup,
            nowMs,
          );

          expect(verdict).toMatchObject({ ok: true });
        },
      ),
      { numRuns: 50 },
    );
  });
});

const lowercased = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
