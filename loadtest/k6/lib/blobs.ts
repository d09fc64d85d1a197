// Values by size for the large-value scripts: the same bytes for a size in every VU and iteration, so
// that any version of a key read back (eventual reads may see an older one) must hash to one digest.
import { check } from 'k6';
import { sha256 } from 'k6/crypto';
import type { Response } from 'k6/http';
import { call, checkStatus, header } from './http.ts';
import { DIRECT_BODY_BYTES_MAX, get, put, putLarge, type WriteOptions } from './kv.ts';

export interface Blob {
  bytes: ArrayBuffer;
  sha256Hex: string;
}

const BLOCK_BYTES = 64 * 1024;
const cache = new Map<number, Blob>();

/** `size` bytes of a fixed pseudo-random pattern (a 64 KiB block repeated), with its sha256; built once per VU. */
export function blobOf(size: number): Blob {
  const cached = cache.get(size);
  if (cached) return cached;
  const block = new Uint8Array(BLOCK_BYTES);
  let state = 0x9e3779b9;
  for (let i = 0; i < BLOCK_BYTES; i += 1) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    block[i] = state >>> 24;
  }
  const bytes = new Uint8Array(size);
  for (let offset = 0; offset < size; offset += BLOCK_BYTES) bytes.set(block.subarray(0, Math.min(BLOCK_BYTES, size - offset)), offset);
  const blob = { bytes: bytes.buffer, sha256Hex: sha256(bytes.buffer, 'hex') };
  cache.set(size, blob);
  return blob;
}

/** Writes `blob` as the key's value: a direct `PUT` up to 4 MiB, the presigned upload flow above. */
export function writeBlob(key: string, blob: Blob, options: WriteOptions = {}): Response {
  const response =
    blob.bytes.byteLength > DIRECT_BODY_BYTES_MAX
      ? putLarge(key, blob.bytes, { ...options, sha256Hex: blob.sha256Hex })
      : put(key, blob.bytes, options);
  checkStatus(response, blob.bytes.byteLength > DIRECT_BODY_BYTES_MAX ? 'upload commit' : 'write', 200);
  return response;
}

/**
 * Reads the key back and checks size and sha256 against `blob`. A value over 4 MiB answers `303` to a
 * presigned S3 URL, which is fetched without the API key.
 */
export function readBlob(key: string, blob: Blob, tags: Record<string, string> = {}): void {
  const large = blob.bytes.byteLength > DIRECT_BODY_BYTES_MAX;
  let response = get(key, { binary: true, follow: false, tags });
  if (large) {
    if (!checkStatus(response, 'large read redirect', 303)) return;
    const location = header(response, 'location') ?? '';
    response = call('GET', location, null, { name: 'GET presigned download', key: null, binary: true, tags });
  }
  if (!checkStatus(response, large ? 'download' : 'read', 200)) return;
  const body = response.body as ArrayBuffer | null;
  check(body, {
    'value read back has its size': (b) => b?.byteLength === blob.bytes.byteLength,
    'value read back has its sha256': (b) => b !== null && sha256(b, 'hex') === blob.sha256Hex,
  });
}
