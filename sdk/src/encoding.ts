// Byte, key and hash helpers shared by the commands. Only web-platform APIs (TextEncoder,
// crypto.subtle) so the SDK runs in Node, Deno, Bun and browsers alike.

import { PayloadTooLargeError, ValidationError } from './errors';
import { KEY_BYTES_MAX, VALUE_BYTES_MAX } from './limits';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8');

/**
 * UTF-8 encodes a string; passes bytes through.
 *
 * @example
 * ```ts
 * toBytes('hé').byteLength; // 3
 * ```
 */
export function toBytes(value: Uint8Array | string): Uint8Array {
  return typeof value === 'string' ? encoder.encode(value) : value;
}

// btoa/atob take "binary strings"; chunks keep String.fromCharCode's argument list short.
const BASE64_CHUNK_BYTES = 0x8000;

/**
 * Base64-encodes bytes (standard alphabet, padded), with web-platform APIs only.
 *
 * @example
 * ```ts
 * bytesToBase64(new Uint8Array([104, 105])); // 'aGk='
 * ```
 */
export function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let start = 0; start < bytes.byteLength; start += BASE64_CHUNK_BYTES) {
    binary += String.fromCharCode(...bytes.subarray(start, start + BASE64_CHUNK_BYTES));
  }
  return btoa(binary);
}

/**
 * Decodes standard base64 into bytes; throws on a string that is not base64.
 *
 * @example
 * ```ts
 * base64ToBytes('aGk='); // Uint8Array [104, 105]
 * ```
 */
export function base64ToBytes(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * Decodes UTF-8 bytes (invalid sequences become U+FFFD).
 *
 * @example
 * ```ts
 * utf8Decode(new Uint8Array([104, 105])); // 'hi'
 * ```
 */
export function utf8Decode(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

function invalid(code: string, message: string): ValidationError {
  return new ValidationError({ code, message, status: 0, retryable: false });
}

/**
 * Checks a key against the contract (1..1024 UTF-8 bytes, well-formed Unicode) and returns it
 * percent-encoded for a path segment. `/`, spaces and non-ASCII characters are all encoded.
 *
 * @example
 * ```ts
 * encodeKey('users/42 é'); // 'users%2F42%20%C3%A9'
 * ```
 */
export function encodeKey(key: string): string {
  if (typeof key !== 'string' || key.length === 0) throw invalid('client.invalidKey', 'key must be a non-empty string');
  let encoded: string;
  try {
    encoded = encodeURIComponent(key);
  } catch (cause) {
    // A lone surrogate cannot be UTF-8 encoded; TextEncoder would silently replace it.
    throw new ValidationError({
      code: 'client.invalidKey',
      message: 'key is not well-formed Unicode',
      status: 0,
      retryable: false,
      cause,
    });
  }
  const bytes = encoder.encode(key).byteLength;
  if (bytes > KEY_BYTES_MAX) {
    throw invalid('client.invalidKey', `key is ${bytes} bytes; at most ${KEY_BYTES_MAX} UTF-8 bytes are allowed`);
  }
  return encoded;
}

/**
 * Refuses a value over {@link VALUE_BYTES_MAX} before any request is made.
 *
 * @example
 * ```ts
 * assertValueSize(new Uint8Array(10)); // ok
 * ```
 */
export function assertValueSize(bytes: Uint8Array): void {
  if (bytes.byteLength > VALUE_BYTES_MAX) {
    throw new PayloadTooLargeError({
      code: 'client.valueTooLarge',
      message: `value is ${bytes.byteLength} bytes; at most ${VALUE_BYTES_MAX} bytes (10 MiB) are allowed`,
      status: 0,
      retryable: false,
    });
  }
}

/**
 * Checks that `value` is an integer in [min, max]; `name` goes into the error message.
 *
 * @example
 * ```ts
 * assertInteger('ttlSeconds', 60, 1); // ok
 * ```
 */
export function assertInteger(name: string, value: number, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `in ${min}..${max}`;
    throw invalid('client.invalidInput', `${name} must be an integer ${range}, got ${String(value)}`);
  }
}

/**
 * The bytes over a plain `ArrayBuffer`, as the DOM's `BufferSource` and `BodyInit` types require:
 * the same view when it already is one, else a copy (a view over a `SharedArrayBuffer`).
 *
 * @example
 * ```ts
 * await crypto.subtle.digest('SHA-256', overArrayBuffer(bytes));
 * ```
 */
export function overArrayBuffer(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return bytes.buffer instanceof ArrayBuffer ? (bytes as Uint8Array<ArrayBuffer>) : new Uint8Array(bytes);
}

/**
 * Lowercase hex SHA-256 of the bytes, computed with WebCrypto (`globalThis.crypto.subtle`).
 *
 * @example
 * ```ts
 * await sha256Hex(new TextEncoder().encode('abc'));
 * // 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
 * ```
 */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const subtle = globalThis.crypto?.subtle;
  if (subtle === undefined) throw new Error('WebCrypto (globalThis.crypto.subtle) is not available in this runtime');
  const digest = new Uint8Array(await subtle.digest('SHA-256', overArrayBuffer(bytes)));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/**
 * Parses a version from `x-ringstore-version` or an `ETag` (`"7"`, `W/"7"`).
 *
 * @example
 * ```ts
 * parseVersion(null, '"7"'); // 7
 * ```
 */
export function parseVersion(versionHeader: string | null, etag: string | null): number | undefined {
  const raw = versionHeader ?? etag?.replace(/^W\//, '').replace(/"/g, '') ?? null;
  if (raw === null || !/^\d+$/.test(raw.trim())) return undefined;
  return Number(raw.trim());
}
