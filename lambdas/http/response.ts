// Building API Gateway proxy results: JSON, raw bytes (base64 as API Gateway expects), redirects.
import type { APIGatewayProxyResult } from 'aws-lambda';
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

export function bytes(statusCode: number, body: Uint8Array, headers: Record<string, string>): APIGatewayProxyResult {
  return { statusCode, headers, body: Buffer.from(body).toString('base64'), isBase64Encoded: true };
}
