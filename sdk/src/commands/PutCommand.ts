// PUT /v1/kv/{key}: writes a value, in the request body up to 4 MiB and through a presigned S3
// upload above that; also the write acknowledgement that deletes share.

import { assertInteger, assertValueSize, encodeKey, sha256Hex, toBytes } from '../encoding';
import { CONTENT_TYPE_CHARS_MAX, DIRECT_BODY_BYTES_MAX } from '../limits';
import type { HttpRequest, HttpResponse } from '../transport';
import { assertConsistency, type CommandContext, conditionHeaders, type Consistency, invalidInput, RingstoreCommand } from './command';
import { invalidResponse, readJson, wire, type WireOf } from './response';

/**
 * Input of {@link PutCommand}. A string value is stored as UTF-8 with content type
 * `text/plain; charset=utf-8` unless `contentType` says otherwise; bytes default to
 * `application/octet-stream`.
 *
 * @example
 * ```ts
 * const input: PutCommandInput = { key: 'session/abc', value: '{"user":42}', contentType: 'application/json', ttlSeconds: 3600 };
 * ```
 */
export interface PutCommandInput {
  key: string;
  value: Uint8Array | string;
  contentType?: string;
  /** Expire the key after this many seconds (integer >= 1). */
  ttlSeconds?: number;
  /** Write only if the current version is this one (optimistic concurrency). */
  ifMatch?: number;
  /** `'*'`: write only if the key does not exist. */
  ifNoneMatch?: '*';
  consistency?: Consistency;
}

/**
 * What every write answers: the key, its new version (also its ETag), the consistency the write got,
 * and for a strong write the number of shards that held the version when it was acknowledged.
 *
 * @example
 * ```ts
 * const { version, copies }: WriteOutput = await client.put('k', 'v', { consistency: 'strong' });
 * ```
 */
export interface WriteOutput {
  key: string;
  version: number;
  consistency: Consistency;
  /** Strong writes: shards holding the version at the acknowledgement, the owner included. */
  copies?: number;
}

/**
 * Result of a write: the key and its new version.
 *
 * @example
 * ```ts
 * const { version }: PutCommandOutput = await client.put('k', 'v');
 * ```
 */
export type PutCommandOutput = WriteOutput;

/**
 * Body and answer of `POST /v1/kv/{key}/uploads`.
 *
 * @example
 * ```ts
 * const ticket: UploadTicket = { uploadId: 'u1', url: 'https://s3/...', method: 'PUT', headers: {}, expiresAt: '2030-01-01T00:00:00Z' };
 * ```
 */
export interface UploadTicket {
  uploadId: string;
  url: string;
  method: string;
  headers: Record<string, string>;
  expiresAt?: string;
}

/**
 * Reader of the acknowledgement of a write (`WriteAck` in the OpenAPI document), shared with deletes.
 *
 * @example
 * ```ts
 * const ack: WriteAckWire = readJson(response, writeAckWire);
 * ```
 */
export const writeAckWire = wire.object({
  key: wire.string,
  version: wire.number,
  // An answer that does not say `strong` promises no more than an eventual write.
  consistency: wire.fallback(wire.literal('eventual', 'strong'), 'eventual'),
  copies: wire.optional(wire.number),
});

/**
 * The acknowledgement of a write as the SDK reads it off the wire.
 *
 * @example
 * ```ts
 * const ack: WriteAckWire = { key: 'k', version: 2, consistency: 'strong', copies: 3 };
 * ```
 */
export type WriteAckWire = WireOf<typeof writeAckWire>;

/**
 * Reader of the answer of `POST /v1/kv/{key}/uploads` (`UploadTicket` in the OpenAPI document).
 * It accepts more than today's server sends (any method, no expiry) and {@link readUploadTicket}
 * narrows the method, so the SDK follows a server that presigns a POST instead of a PUT.
 *
 * @example
 * ```ts
 * const ticket: UploadTicketWire = readJson(response, uploadTicketWire);
 * ```
 */
export const uploadTicketWire = wire.object({
  uploadId: wire.string,
  url: wire.string,
  method: wire.fallback(wire.string, 'PUT'),
  headers: wire.fallback(wire.record(wire.string), {}),
  expiresAt: wire.optional(wire.string),
});

/**
 * An upload ticket as the SDK reads it off the wire.
 *
 * @example
 * ```ts
 * const ticket: UploadTicketWire = { uploadId: 'u1', url: 'https://s3/...', method: 'PUT', headers: {} };
 * ```
 */
export type UploadTicketWire = WireOf<typeof uploadTicketWire>;

// fetch computes these itself; a presigned header list may still name them.
const headersFetchSets = new Set(['content-length', 'host', 'connection', 'transfer-encoding']);

type UploadMethod = 'PUT' | 'POST';

function isUploadMethod(method: string): method is UploadMethod {
  return method === 'PUT' || method === 'POST';
}

/**
 * Reads an upload ticket: the method upper-cased and checked, the headers fetch sets itself left out.
 *
 * @example
 * ```ts
 * const { url, method, headers } = readUploadTicket(created);
 * ```
 */
export function readUploadTicket(response: HttpResponse): UploadTicket & { method: UploadMethod } {
  const read = readJson(response, uploadTicketWire);
  const method = read.method.toUpperCase();
  if (!isUploadMethod(method)) throw invalidResponse(response, `unsupported upload method ${method}`);
  const headers = Object.fromEntries(Object.entries(read.headers).filter(([name]) => !headersFetchSets.has(name.toLowerCase())));
  const ticket: UploadTicket & { method: UploadMethod } = { uploadId: read.uploadId, url: read.url, method, headers };
  if (read.expiresAt !== undefined) ticket.expiresAt = read.expiresAt;
  return ticket;
}

/**
 * Writes a key (`PUT /v1/kv/{key}`). Values over 4 MiB travel through a presigned S3 upload
 * (create upload, PUT to S3, commit with the SHA-256) without any change for the caller;
 * values over 10 MiB are refused with {@link PayloadTooLargeError} before any request.
 *
 * @example
 * ```ts
 * const { version } = await client.send(new PutCommand({ key: 'greeting', value: 'hello', ifNoneMatch: '*' }));
 * ```
 */
export class PutCommand extends RingstoreCommand<PutCommandInput, PutCommandOutput> {
  override async execute(context: CommandContext): Promise<PutCommandOutput> {
    const { key, value, ttlSeconds, consistency } = this.input;
    const encodedKey = encodeKey(key);
    const bytes = toBytes(value);
    assertValueSize(bytes);
    if (ttlSeconds !== undefined) assertInteger('ttlSeconds', ttlSeconds, 1);
    assertConsistency(consistency);
    const headers = conditionHeaders(this.input);
    const contentType = this.input.contentType ?? (typeof value === 'string' ? 'text/plain; charset=utf-8' : 'application/octet-stream');
    // A header value with control characters would make fetch throw on every attempt.
    if (!/^[\x20-\x7e]+$/.test(contentType) || contentType.length > CONTENT_TYPE_CHARS_MAX) {
      throw invalidInput(`contentType must be 1..${CONTENT_TYPE_CHARS_MAX} printable ASCII characters`);
    }
    if (bytes.byteLength > DIRECT_BODY_BYTES_MAX) return this.upload(context, encodedKey, bytes, contentType, headers);
    const response = await context.transport.send(
      {
        method: 'PUT',
        path: `/v1/kv/${encodedKey}`,
        query: { ttlSeconds, consistency },
        headers: { ...headers, 'content-type': contentType },
        body: bytes,
        authenticated: true,
      },
      context.signal,
    );
    return readJson(response, writeAckWire);
  }

  private async upload(
    { transport, signal }: CommandContext,
    encodedKey: string,
    bytes: Uint8Array,
    contentType: string,
    conditions: Record<string, string>,
  ): Promise<PutCommandOutput> {
    const { ttlSeconds, consistency } = this.input;
    const json = { 'content-type': 'application/json' };
    // Hashing 10 MiB takes a few ms; it overlaps the round trip that creates the upload.
    const digest = sha256Hex(bytes);
    digest.catch(() => undefined); // observed below; avoids an unhandled rejection if create fails first
    const created = await transport.send(
      {
        method: 'POST',
        path: `/v1/kv/${encodedKey}/uploads`,
        headers: json,
        body: JSON.stringify({ size: bytes.byteLength, contentType }),
        authenticated: true,
      },
      signal,
    );
    const ticket = readUploadTicket(created);
    const transferRequest: HttpRequest = {
      method: ticket.method,
      url: ticket.url,
      headers: ticket.headers,
      body: bytes,
      authenticated: false,
      errorCodePrefix: 'blob',
    };
    await transport.send(transferRequest, signal);
    const commitBody: Record<string, unknown> = { sha256: await digest, contentType };
    if (ttlSeconds !== undefined) commitBody.ttlSeconds = ttlSeconds;
    const committed = await transport.send(
      {
        method: 'POST',
        path: `/v1/kv/${encodedKey}/uploads/${encodeURIComponent(ticket.uploadId)}/commit`,
        query: { consistency },
        headers: { ...conditions, ...json },
        body: JSON.stringify(commitBody),
        authenticated: true,
      },
      signal,
    );
    return readJson(committed, writeAckWire);
  }
}
