// Input rules of the KV API that hold whatever transport carries the request.
import { namespacePattern } from '../../schemas/topology';
import { RingstoreError } from './errors';

export interface KeyLimits {
  keyBytesMax: number;
}

const utf8 = new TextEncoder();

/** Rejects an empty, oversized or non-text key with `kv.keyInvalid`. */
export function validateKey(key: string, limits: KeyLimits): void {
  if (key.length === 0) throw new RingstoreError('kv.keyInvalid', 'key must not be empty', { details: { field: 'key' } });
  const bytes = utf8.encode(key).length;
  if (bytes > limits.keyBytesMax) {
    throw new RingstoreError('kv.keyInvalid', `key is ${bytes} bytes of UTF-8; the limit is ${limits.keyBytesMax}`, {
      details: { field: 'key', bytes, limit: limits.keyBytesMax },
    });
  }
  // Lone surrogates cannot round-trip through UTF-8, so such a key could never be read back.
  if (!key.isWellFormed()) {
    throw new RingstoreError('kv.keyInvalid', 'key is not well-formed Unicode', { details: { field: 'key' } });
  }
}

export function validateNamespace(namespace: string): void {
  if (!namespacePattern.test(namespace)) {
    throw new RingstoreError('request.invalid', `namespace must match ${namespacePattern}`, {
      details: { field: 'namespace' },
    });
  }
}
