// `--debug`: a fetch that writes each HTTP exchange to stderr, curl -v style, for the client the CLI builds.
// Anything that could be a credential (API keys, Authorization, presigned URLs' signatures) is redacted first.

import { isTextual } from './format';

/** Bytes of a response body shown; the rest is counted, not shown. */
export const DEBUG_BODY_SHOWN_BYTES_MAX = 2048;

/** Bytes of a body kept to redact, more than are shown, so that no secret is cut before it is recognised. */
const DEBUG_BODY_KEPT_BYTES_MAX = 2 * DEBUG_BODY_SHOWN_BYTES_MAX;

/** Header, query parameter and JSON field names whose values are never shown. */
const SECRET_NAME = /api-?key|secret|password|token|signature|credential|authorization|cookie/i;

/** An API key as the server issues them, `rs_<keyId>_<secret>`: the key id is shown, the secret is not. */
const API_KEY = /\brs_([0-9a-f]{12})_[^\s"'&,;]+/g;

export const REDACTED = 'REDACTED';

/**
 * What `--debug` must never show of the credentials given: an API key's secret (its key id may be shown), AWS secret
 * keys and session tokens.
 *
 * @example
 * ```ts
 * secretsOf('rs_0123456789ab_s3cret'); // ['s3cret']
 * ```
 */
export function secretsOf(...credentials: readonly (string | undefined)[]): string[] {
  return credentials.flatMap((credential) => {
    if (credential === undefined || credential === '') return [];
    const secret = /^rs_[0-9a-f]{12}_(.+)$/.exec(credential)?.[1];
    return [secret ?? credential];
  });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Text with every credential in it replaced by `REDACTED`: the `secrets` given, API keys (`rs_<keyId>_REDACTED`),
 * JSON string fields and query parameters with secret-like names (`apiKey`, `X-Amz-Signature`, …).
 *
 * @example
 * ```ts
 * redact('{"apiKey":"rs_0123456789ab_s3cret"}', []); // '{"apiKey":"REDACTED"}'
 * ```
 */
export function redact(text: string, secrets: readonly string[]): string {
  let shown = text;
  for (const secret of secrets) if (secret.length > 0) shown = shown.replace(new RegExp(escapeRegExp(secret), 'g'), REDACTED);
  return shown
    .replace(API_KEY, `rs_$1_${REDACTED}`)
    .replace(/("([^"\\]*)"\s*:\s*)"(?:[^"\\]|\\.)*"/g, (whole, field: string, name: string) =>
      SECRET_NAME.test(name) ? `${field}"${REDACTED}"` : whole,
    )
    .replace(/([?&]([^=&\s"]*)=)[^&\s"#]*/g, (whole, pair: string, name: string) =>
      SECRET_NAME.test(name) ? `${pair}${REDACTED}` : whole,
    );
}

/**
 * A header as `--debug` shows it: a credential's value redacted (an API key keeps its key id, Authorization its scheme).
 *
 * @example
 * ```ts
 * redactHeader('x-api-key', 'rs_0123456789ab_s3cret', []); // 'x-api-key: rs_0123456789ab_REDACTED'
 * ```
 */
export function redactHeader(name: string, value: string, secrets: readonly string[]): string {
  if (!SECRET_NAME.test(name)) return `${name}: ${redact(value, secrets)}`;
  const apiKey = /^rs_([0-9a-f]{12})_/.exec(value);
  if (apiKey !== null) return `${name}: rs_${apiKey[1]}_${REDACTED}`;
  const scheme = /^authorization$/i.test(name) ? /^[A-Za-z0-9-]+(?= )/.exec(value)?.[0] : undefined;
  return `${name}: ${scheme === undefined ? REDACTED : `${scheme} ${REDACTED}`}`;
}

function bodyBytes(body: RequestInit['body']): string {
  if (body === undefined || body === null) return 'no body';
  if (typeof body === 'string') return `body ${Buffer.byteLength(body)} bytes`;
  if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return `body ${body.byteLength} bytes`;
  if (body instanceof Blob) return `body ${body.size} bytes`;
  return 'body of unknown size';
}

/** The first bytes of a body (up to `max`) and how many bytes it has in all; the body is read to its end. */
async function headOf(response: Response, max: number): Promise<{ head: Uint8Array; size: number }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (response.body === null) return { head: new Uint8Array(0), size };
  const reader = response.body.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    if (size < max) chunks.push(read.value.subarray(0, max - size));
    size += read.value.byteLength;
  }
  return { head: new Uint8Array(Buffer.concat(chunks)), size };
}

/** A response body's lines as `--debug` shows them: its size, then its text (redacted, cut) unless it is binary. */
async function responseBodyLines(response: Response, secrets: readonly string[]): Promise<string[]> {
  let read: { head: Uint8Array; size: number };
  try {
    read = await headOf(response.clone(), DEBUG_BODY_KEPT_BYTES_MAX);
  } catch (err) {
    // The client reads the same body next and reports the failure itself.
    return [`body could not be read: ${redact(err instanceof Error ? err.message : String(err), secrets)}`];
  }
  const { head, size } = read;
  if (size === 0) return ['no body'];
  const contentType = response.headers.get('content-type') ?? 'application/octet-stream';
  if (!isTextual(contentType, head.subarray(0, DEBUG_BODY_SHOWN_BYTES_MAX))) return [`body ${size} bytes of ${contentType}, not shown`];
  // Redacted whole before it is cut, so a secret across the cut is still recognised.
  const text = redact(new TextDecoder().decode(head, { stream: true }), secrets);
  const shown = new TextDecoder().decode(new TextEncoder().encode(text).subarray(0, DEBUG_BODY_SHOWN_BYTES_MAX), { stream: true });
  const cut = size > DEBUG_BODY_SHOWN_BYTES_MAX ? ` (the first ${DEBUG_BODY_SHOWN_BYTES_MAX} shown)` : '';
  return [`body ${size} bytes${cut}:`, ...shown.split('\n'), ...(cut === '' ? [] : ['…'])];
}

/** Headers as `--debug` shows them, one `name: value` each, credentials redacted. */
function headerLines(headers: Headers, secrets: readonly string[]): string[] {
  const lines: string[] = [];
  headers.forEach((value, name) => lines.push(redactHeader(name, value, secrets)));
  return lines;
}

function urlOf(input: Parameters<typeof fetch>[0]): string {
  if (typeof input === 'string') return input;
  return input instanceof URL ? input.href : input.url;
}

/**
 * A fetch that writes each request (method, URL, headers, body size) and response (status, headers, body cut to
 * {@link DEBUG_BODY_SHOWN_BYTES_MAX} bytes) to `write`, with credentials redacted: `secrets` (the API key in use, AWS
 * secret keys), and anything named like a credential. Lines start `> ` for the request, `< ` for the response.
 *
 * @example
 * ```ts
 * new RingstoreClient({ endpoint, apiKey, fetch: debugFetch((text) => process.stderr.write(text), [apiKey]) });
 * ```
 */
export function debugFetch(
  write: (text: string) => unknown,
  secrets: readonly string[],
  inner: typeof fetch = globalThis.fetch.bind(globalThis),
): typeof fetch {
  const emit = (mark: string, lines: readonly string[]): void => {
    write(lines.map((line) => `${mark} ${line}\n`).join(''));
  };
  return async (input, init) => {
    const method = init?.method ?? 'GET';
    const url = redact(urlOf(input), secrets);
    const headers = headerLines(new Headers(init?.headers), secrets);
    emit('>', [`${method} ${url}`, ...headers, bodyBytes(init?.body)]);
    const startedMs = performance.now();
    let response: Response;
    try {
      response = await inner(input, init);
    } catch (err) {
      const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
      const why = err instanceof Error ? `${err.message}${cause}` : String(err);
      emit('<', [`${method} ${url} failed after ${Math.round(performance.now() - startedMs)} ms: ${redact(why, secrets)}`]);
      throw err;
    }
    const status = `${response.status} ${response.statusText}`.trim();
    const answer = headerLines(response.headers, secrets);
    const body = method === 'HEAD' ? ['no body'] : await responseBodyLines(response, secrets);
    emit('<', [`${status} in ${Math.round(performance.now() - startedMs)} ms`, ...answer, ...body]);
    return response;
  };
}
