// What API Gateway does for an `AWS_IAM` method, locally: recompute a request's SigV4 signature from the
// request as received, with the secret of the access key it names, and compare in constant time.
import { createHash, timingSafeEqual } from 'node:crypto';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';

/** How far a request's `x-amz-date` may lie from the gateway's clock, either way: AWS allows 5 minutes. */
export const signatureSkewMsMax = 5 * 60_000;

export const sigV4Algorithm = 'AWS4-HMAC-SHA256';

/** A request as the gateway received it; header names lowercase, the path percent-encoded as sent. */
export interface ReceivedRequest {
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  headers: Record<string, string>;
  body: Uint8Array;
}

export interface KnownCredentials {
  secretAccessKey: string;
}

export type SigV4Verdict<User> =
  | { ok: true; user: User; accessKeyId: string }
  | { ok: false; code: 'auth.invalidSignature' | 'auth.unknownAccessKey' | 'auth.signatureExpired'; message: string };

/** Whether the request claims a SigV4 signature (the gateway then verifies it instead of asking for an API key). */
export function isSigV4(headers: Record<string, string>): boolean {
  return headers.authorization?.startsWith(`${sigV4Algorithm} `) ?? false;
}

const authorizationPattern = new RegExp(
  `^${sigV4Algorithm} Credential=([^/,\\s]+)/(\\d{8})/([a-z0-9-]+)/([a-z0-9-]+)/aws4_request,\\s*SignedHeaders=([a-z0-9;-]+),\\s*Signature=([0-9a-f]{64})$`,
);
const amzDatePattern = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

function refused(code: 'auth.invalidSignature' | 'auth.unknownAccessKey' | 'auth.signatureExpired', message: string) {
  return { ok: false as const, code, message };
}

/**
 * Verifies a SigV4-signed request against the credentials `lookup` knows: the access key must be known,
 * `x-amz-date` within {@link signatureSkewMsMax} of `nowMs`, `host` and `x-amz-date` signed, a signed
 * payload hash equal to the body's, and the signature the one its secret gives for exactly the signed
 * headers, path, query and body. Never throws for a bad request: every refusal is a verdict.
 */
export async function verifySigV4<User extends KnownCredentials>(
  request: ReceivedRequest,
  lookup: (accessKeyId: string) => Promise<User | undefined>,
  nowMs: number,
): Promise<SigV4Verdict<User>> {
  const parsed = authorizationPattern.exec(request.headers.authorization ?? '');
  if (!parsed) return refused('auth.invalidSignature', `Authorization is not a well-formed ${sigV4Algorithm} header`);
  const [, accessKeyId, scopeDate, region, service, signedHeaderList, signature] = parsed as unknown as string[] as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const signedHeaders = signedHeaderList.split(';');
  if (!signedHeaders.includes('host') || !signedHeaders.includes('x-amz-date')) {
    return refused('auth.invalidSignature', 'the signature must cover the host and x-amz-date headers');
  }
  const amzDate = request.headers['x-amz-date'] ?? '';
  const date = amzDatePattern.exec(amzDate);
  if (!date) return refused('auth.invalidSignature', 'x-amz-date is missing or not YYYYMMDDTHHMMSSZ');
  const [, year, month, day, hour, minute, second] = date.map(Number) as [number, number, number, number, number, number, number];
  const signedAtMs = Date.UTC(year, month - 1, day, hour, minute, second);
  if (!amzDate.startsWith(scopeDate)) return refused('auth.invalidSignature', "the credential scope's date is not x-amz-date's");
  if (Math.abs(nowMs - signedAtMs) > signatureSkewMsMax) {
    return refused(
      'auth.signatureExpired',
      `the request was signed at ${amzDate}, more than ${signatureSkewMsMax / 60_000} minutes from the server's time ${new Date(nowMs).toISOString()}`,
    );
  }
  const user = await lookup(accessKeyId);
  if (!user) return refused('auth.unknownAccessKey', `access key ${accessKeyId} is not known to this gateway`);
  if (request.headers['x-amz-security-token'] !== undefined) {
    return refused('auth.invalidSignature', 'local IAM users have long-term keys only: no session token is accepted');
  }
  const missing = signedHeaders.find((name) => request.headers[name] === undefined);
  if (missing) return refused('auth.invalidSignature', `signed header ${missing} is not in the request`);
  // The signer trusts a payload hash header as given; the body must really have that hash.
  const bodyHash = createHash('sha256').update(request.body).digest('hex');
  const claimedHash = request.headers['x-amz-content-sha256'];
  if (claimedHash !== undefined && claimedHash !== bodyHash) {
    return refused('auth.invalidSignature', 'x-amz-content-sha256 is not the sha256 of the body');
  }

  const signer = new SignatureV4({
    service,
    region,
    credentials: { accessKeyId, secretAccessKey: user.secretAccessKey },
    sha256: Hash.bind(null, 'sha256'),
    applyChecksum: false,
  });
  const headers = Object.fromEntries(signedHeaders.map((name) => [name, request.headers[name]!]));
  const [hostname = '', port] = (request.headers.host ?? '').split(':');
  // A request the signer cannot canonicalise is a bad signature, never a crash of the gateway.
  const signed = await signer
    .sign(
      {
        method: request.method,
        protocol: 'http:',
        hostname,
        ...(port ? { port: Number(port) } : {}),
        path: request.path,
        query: request.query,
        headers,
        body: request.body,
      },
      { signingDate: new Date(signedAtMs), signableHeaders: new Set(signedHeaders) },
    )
    .catch(() => undefined);
  const expected = /Signature=([0-9a-f]{64})$/.exec(signed?.headers.authorization ?? '')?.[1] ?? '';
  const matches = expected.length === signature.length && timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(signature, 'hex'));
  if (!matches) {
    return refused('auth.invalidSignature', 'the request signature does not match the one computed from the request and the secret');
  }
  return { ok: true, user, accessKeyId };
}
