// What API Gateway does for an `AWS_IAM` method, locally: recompute a request's SigV4 signature from the
// request as received, with the secret of the access key it names, and compare in constant time. The
// canonical request is built here, from the request target's own bytes, as SigV4 specifies for every
// service but S3 (test/unit/local/sigv4-verify.test.ts holds AWS's published vectors and checks the SDK's signer).
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** How far a request's `x-amz-date` may lie from the gateway's clock, either way: AWS allows 5 minutes. */
export const signatureSkewMsMax = 5 * 60_000;

export const sigV4Algorithm = 'AWS4-HMAC-SHA256';

/** A request as the gateway received it; header names lowercase. */
export interface ReceivedRequest {
  method: string;
  /** The request target exactly as sent (path and query, percent-encoded as the client wrote them). */
  target: string;
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

  const payloadHash = claimedHash ?? bodyHash;
  const { method, target, headers } = request;
  const canonical = canonicalRequest({ method, target, headers, signedHeaders, payloadHash });
  const scope = `${scopeDate}/${region}/${service}/aws4_request`;
  const stringToSign = [sigV4Algorithm, amzDate, scope, sha256Hex(canonical)].join('\n');
  const expected = hmac(signingKey(user.secretAccessKey, scopeDate, region, service), stringToSign).toString('hex');
  const matches = expected.length === signature.length && timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(signature, 'hex'));
  if (!matches) {
    return refused('auth.invalidSignature', 'the request signature does not match the one computed from the request and the secret');
  }
  return { ok: true, user, accessKeyId };
}

const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const hmac = (key: string | Buffer, text: string) => createHmac('sha256', key).update(text, 'utf8').digest();

function signingKey(secretAccessKey: string, date: string, region: string, service: string): Buffer {
  return hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, date), region), service), 'aws4_request');
}

/** RFC 3986's unreserved characters: the only bytes SigV4 leaves unescaped. */
const unreserved = /[A-Za-z0-9\-._~]/;

/** `bytes` URI-encoded as SigV4 wants it: every byte but the unreserved ones as `%XX`, upper-case hex. */
function uriEncode(bytes: Uint8Array): string {
  let encoded = '';
  for (const byte of bytes) {
    const char = String.fromCharCode(byte);
    encoded += byte < 0x80 && unreserved.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return encoded;
}

/** The bytes of a part of the request target as sent (Node hands the target over one byte per char). */
const bytesOf = (sent: string) => Buffer.from(sent, 'latin1');

/** `sent` with its `%XX` escapes decoded; a `%` not followed by two hex digits stays a `%`. */
function percentDecoded(sent: string): Uint8Array {
  const bytes = bytesOf(sent);
  const decoded: number[] = [];
  for (let index = 0; index < bytes.length; index += 1) {
    const hex = bytes[index] === 0x25 ? bytes.subarray(index + 1, index + 3).toString() : '';
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      decoded.push(Number.parseInt(hex, 16));
      index += 2;
    } else {
      decoded.push(bytes[index]!);
    }
  }
  return Uint8Array.from(decoded);
}

/**
 * The canonical URI of a path as sent: `.` and `..` segments resolved and empty ones dropped, then each
 * segment URI-encoded once more as it was sent, so an escape in it (`%2F` in a key) is signed as `%252F`.
 * That second encoding is SigV4's for every service but S3, API Gateway's `execute-api` included (AWS's
 * SDKs and curl since 8.14 sign so); a `%2F` stays inside its segment, never a separator.
 */
export function canonicalUri(sentPath: string): string {
  const segments: string[] = [];
  for (const segment of sentPath.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const trailing = segments.length > 0 && sentPath.endsWith('/') ? '/' : '';
  return `/${segments.map((segment) => uriEncode(bytesOf(segment))).join('/')}${trailing}`;
}

/**
 * The canonical query string of a query as sent: each `name=value` pair (a bare name has an empty value)
 * decoded from its escapes and URI-encoded once, then sorted by name and, for a repeated name, by value.
 * A `+` is the plus it is on the wire (`%2B`), as API Gateway reads it, not a space.
 */
export function canonicalQuery(sentQuery: string): string {
  const pairs = sentQuery
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const [name, value] = equals < 0 ? [pair, ''] : [pair.slice(0, equals), pair.slice(equals + 1)];
      return [uriEncode(percentDecoded(name)), uriEncode(percentDecoded(value))] as const;
    });
  // Encoded pairs are ASCII: code-unit order is byte order.
  pairs.sort(([nameA, valueA], [nameB, valueB]) => (nameA === nameB ? compare(valueA, valueB) : compare(nameA, nameB)));
  return pairs.map(([name, value]) => `${name}=${value}`).join('&');
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The canonical request of SigV4: the method, URI and query, the signed headers (trimmed, inner spaces
 * folded), their names, and the payload's hash.
 */
export function canonicalRequest(input: {
  method: string;
  target: string;
  headers: Record<string, string>;
  signedHeaders: readonly string[];
  payloadHash: string;
}): string {
  const queryAt = input.target.indexOf('?');
  const [path, query] = queryAt < 0 ? [input.target, ''] : [input.target.slice(0, queryAt), input.target.slice(queryAt + 1)];
  const headerLines = input.signedHeaders.map((name) => `${name}:${(input.headers[name] ?? '').trim().replace(/\s+/g, ' ')}\n`);
  return [
    input.method.toUpperCase(),
    canonicalUri(path),
    canonicalQuery(query),
    headerLines.join(''),
    input.signedHeaders.join(';'),
    input.payloadHash,
  ].join('\n');
}
