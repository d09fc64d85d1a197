// Building API Gateway proxy results: JSON, raw bytes (base64 as API Gateway expects), redirects.
import type { APIGatewayProxyResult } from 'aws-lambda';
import type { BatchGetResponseBody } from '../../schemas/kv-batch';
import type { BatchGetEntry } from '../core/kv';
import type { StoredItem } from '../ports';

export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return { statusCode, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

export function etagOf(version: number): string {
  return `"${version}"`;
}

/** Headers that describe a stored value on GET and HEAD. */
export function valueHeaders(item: StoredItem): Record<string, string> {
  return {
    'content-type': item.contentType,
    etag: etagOf(item.version),
    'x-ringstore-version': String(item.version),
    ...(item.expiresAtSeconds === undefined ? {} : { 'x-ringstore-expires-at': new Date(item.expiresAtSeconds * 1000).toISOString() }),
  };
}

/** When a key expires, as answers spell it (ISO 8601); undefined without a TTL. */
function expiresAtOf(item: StoredItem): { expiresAt?: string } {
  return item.expiresAtSeconds === undefined ? {} : { expiresAt: new Date(item.expiresAtSeconds * 1000).toISOString() };
}

/** A batch get's entries as its JSON answer (schemas/kv-batch.ts): values base64, as a transaction's reads. */
export function batchGetItems(entries: readonly BatchGetEntry[]): BatchGetResponseBody['items'] {
  return entries.map((entry) => {
    if (!entry.found) return { key: entry.key, found: false as const };
    const { item, value } = entry;
    const carried =
      value.kind === 'inline'
        ? { value: Buffer.from(value.value).toString('base64') }
        : value.kind === 'url'
          ? { url: value.url }
          : { valueOmitted: true as const };
    const metadata = { version: item.version, contentType: item.contentType, size: item.size, ...expiresAtOf(item) };
    return { key: entry.key, found: true as const, ...metadata, ...carried };
  });
}

export function bytes(statusCode: number, body: Uint8Array, headers: Record<string, string>): APIGatewayProxyResult {
  return { statusCode, headers, body: Buffer.from(body).toString('base64'), isBase64Encoded: true };
}
