// The commands of the REST API, aws-sdk-js-v3 style: each holds its input and knows how to turn
// it into HTTP requests and the response into a typed output. `RingstoreClient.send` runs them.

import { PayloadTooLargeError, RingstoreError, TransactionAbortedError, TransactionOutcomeUnknownError, ValidationError } from './errors';
import {
  assertInteger,
  assertValueSize,
  base64ToBytes,
  bytesToBase64,
  encodeKey,
  parseVersion,
  sha256Hex,
  toBytes,
  utf8Decode,
} from './encoding';
import {
  DIRECT_BODY_BYTES_MAX,
  LIST_LIMIT_MAX,
  TXN_CONFLICT_RETRIES_MAX,
  TXN_OPS_MAX,
  TXN_TIMEOUT_MS_MAX,
  TXN_TIMEOUT_MS_MIN,
  TXN_VALUE_BYTES_MAX,
} from './limits';
import type { HttpRequest, HttpResponse, Transport } from './transport';

/**
 * Read and write consistency level. `eventual` may be served from a cache or a replica;
 * `strong` reads the owner (linearizable per key) and acknowledges writes after every live
 * replica has them.
 *
 * @example
 * ```ts
 * await client.get('k', { consistency: 'strong' });
 * ```
 */
export type Consistency = 'eventual' | 'strong';

/**
 * What a command gets from the client to run: the transport and the caller's abort signal.
 *
 * @example
 * ```ts
 * // Only RingstoreClient.send builds this; custom commands receive it in `execute`.
 * const context: CommandContext = { transport };
 * ```
 */
export interface CommandContext {
  transport: Transport;
  signal?: AbortSignal;
}

/**
 * Base class of all commands. Build one with its input and pass it to
 * {@link RingstoreClient.send}.
 *
 * @example
 * ```ts
 * const command = new GetCommand({ key: 'greeting' });
 * command.input.key; // 'greeting'
 * const output = await client.send(command);
 * ```
 */
export abstract class RingstoreCommand<Input extends object, Output> {
  constructor(readonly input: Input) {}

  /**
   * Runs the command; called by `RingstoreClient.send`, not meant to be called directly.
   *
   * @example
   * ```ts
   * // A custom command reuses the client's transport, retries and errors:
   * class DocsCommand extends RingstoreCommand<Record<string, never>, string> {
   *   async execute({ transport, signal }: CommandContext): Promise<string> {
   *     const res = await transport.send({ method: 'GET', path: '/openapi.json', authenticated: false }, signal);
   *     return new TextDecoder().decode(res.body);
   *   }
   * }
   * const openapi = await client.send(new DocsCommand({}));
   * ```
   */
  abstract execute(context: CommandContext): Promise<Output>;
}

function invalidResponse(response: HttpResponse, message: string): RingstoreError {
  return new RingstoreError({ code: 'response.invalid', message, status: response.status, retryable: false });
}

function readJsonObject(response: HttpResponse): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8Decode(response.body));
  } catch (cause) {
    throw new RingstoreError({
      code: 'response.invalid',
      message: 'the server answered with a body that is not JSON',
      status: response.status,
      retryable: false,
      cause,
    });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw invalidResponse(response, 'the server answered with JSON that is not an object');
  }
  return parsed as Record<string, unknown>;
}

function requireString(response: HttpResponse, record: Record<string, unknown>, name: string): string {
  const value = record[name];
  if (typeof value !== 'string') throw invalidResponse(response, `response field "${name}" is missing or not a string`);
  return value;
}

function requireNumber(response: HttpResponse, record: Record<string, unknown>, name: string): number {
  const value = record[name];
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw invalidResponse(response, `response field "${name}" is missing or not a number`);
  }
  return value;
}

function requireArray(response: HttpResponse, record: Record<string, unknown>, name: string): unknown[] {
  const value = record[name];
  if (!Array.isArray(value)) throw invalidResponse(response, `response field "${name}" is missing or not an array`);
  return value;
}

/** The acknowledgement of a write: key, version, the consistency it got, and (strong) the copies made. */
function keyVersion(response: HttpResponse): WriteOutput {
  const record = readJsonObject(response);
  const consistency = record.consistency === 'strong' ? 'strong' : 'eventual';
  const copies = typeof record.copies === 'number' ? { copies: record.copies } : {};
  return { key: requireString(response, record, 'key'), version: requireNumber(response, record, 'version'), consistency, ...copies };
}

function conditionHeaders(input: { ifMatch?: number; ifNoneMatch?: '*' }): Record<string, string> {
  const headers: Record<string, string> = {};
  if (input.ifMatch !== undefined) {
    assertInteger('ifMatch', input.ifMatch, 0);
    headers['if-match'] = `"${input.ifMatch}"`;
  }
  if (input.ifNoneMatch !== undefined) {
    if (input.ifNoneMatch !== '*') {
      throw new ValidationError({ code: 'client.invalidInput', message: "ifNoneMatch must be '*'", status: 0, retryable: false });
    }
    headers['if-none-match'] = '*';
  }
  return headers;
}

function assertConsistency(consistency: Consistency | undefined): void {
  if (consistency !== undefined && consistency !== 'eventual' && consistency !== 'strong') {
    throw new ValidationError({
      code: 'client.invalidInput',
      message: `consistency must be 'eventual' or 'strong', got ${String(consistency)}`,
      status: 0,
      retryable: false,
    });
  }
}

/** Reads the value metadata headers shared by GET, HEAD and the 303 of a large value. */
function valueMetadata(response: HttpResponse): { contentType: string; version: number; expiresAt?: string } {
  const version = parseVersion(response.headers.get('x-ringstore-version'), response.headers.get('etag'));
  if (version === undefined) throw invalidResponse(response, 'the response has neither x-ringstore-version nor a numeric ETag');
  const metadata: { contentType: string; version: number; expiresAt?: string } = {
    contentType: response.headers.get('content-type') ?? 'application/octet-stream',
    version,
  };
  const expiresAt = response.headers.get('x-ringstore-expires-at');
  if (expiresAt !== null && expiresAt !== '') metadata.expiresAt = expiresAt;
  return metadata;
}

// ---------------------------------------------------------------------------------------------
// GET

/**
 * Input of {@link GetCommand}.
 *
 * @example
 * ```ts
 * const input: GetCommandInput = { key: 'users/42', consistency: 'strong' };
 * ```
 */
export interface GetCommandInput {
  key: string;
  consistency?: Consistency;
}

/**
 * A stored value. `value` holds the bytes; `text()` decodes them as UTF-8 and `json()` parses
 * that text. Large values (over 4 MiB) are fetched from S3 transparently.
 *
 * @example
 * ```ts
 * const item = await client.get('config');
 * item.version;     // 3
 * item.text();      // '{"debug":true}'
 * item.json<{ debug: boolean }>().debug; // true
 * ```
 */
export interface GetCommandOutput {
  key: string;
  value: Uint8Array;
  contentType: string;
  version: number;
  /** ISO-8601 time after which the key expires, when it has a TTL. */
  expiresAt?: string;
  /** The value decoded as UTF-8. */
  text(): string;
  /** The value decoded as UTF-8 and parsed as JSON. */
  json<T = unknown>(): T;
}

/**
 * Reads a key (`GET /v1/kv/{key}`). Throws {@link NotFoundError} when it does not exist.
 *
 * @example
 * ```ts
 * const { value, version } = await client.send(new GetCommand({ key: 'greeting' }));
 * ```
 */
export class GetCommand extends RingstoreCommand<GetCommandInput, GetCommandOutput> {
  override async execute({ transport, signal }: CommandContext): Promise<GetCommandOutput> {
    const { key, consistency } = this.input;
    const path = `/v1/kv/${encodeKey(key)}`;
    assertConsistency(consistency);
    const response = await transport.send({ method: 'GET', path, query: { consistency }, authenticated: true, redirect: 'manual' }, signal);
    const metadata = valueMetadata(response);
    let value = response.body;
    if (response.status === 303) {
      const location = response.headers.get('location');
      if (location === null) throw invalidResponse(response, 'a 303 answer without a Location header');
      // The presigned URL carries its own authorization; the API key is not sent to S3.
      const blob = await transport.send(
        { method: 'GET', url: new URL(location, response.url).toString(), authenticated: false, errorCodePrefix: 'blob' },
        signal,
      );
      value = blob.body;
    }
    return {
      key,
      value,
      ...metadata,
      text: () => utf8Decode(value),
      json: <T>() => JSON.parse(utf8Decode(value)) as T,
    };
  }
}

// ---------------------------------------------------------------------------------------------
// HEAD

/**
 * Input of {@link HeadCommand}.
 *
 * @example
 * ```ts
 * const input: HeadCommandInput = { key: 'users/42' };
 * ```
 */
export interface HeadCommandInput {
  key: string;
  consistency?: Consistency;
}

/**
 * Metadata of a stored value, without its bytes.
 *
 * @example
 * ```ts
 * const { version, size, contentType } = await client.head('users/42');
 * ```
 */
export interface HeadCommandOutput {
  key: string;
  contentType: string;
  version: number;
  /** Size of the value in bytes, when the server reports it (`content-length`). */
  size?: number;
  expiresAt?: string;
}

/**
 * Reads a key's metadata (`HEAD /v1/kv/{key}`). Throws {@link NotFoundError} when missing.
 *
 * @example
 * ```ts
 * const { version } = await client.send(new HeadCommand({ key: 'users/42' }));
 * ```
 */
export class HeadCommand extends RingstoreCommand<HeadCommandInput, HeadCommandOutput> {
  override async execute({ transport, signal }: CommandContext): Promise<HeadCommandOutput> {
    const { key, consistency } = this.input;
    const path = `/v1/kv/${encodeKey(key)}`;
    assertConsistency(consistency);
    const response = await transport.send(
      { method: 'HEAD', path, query: { consistency }, authenticated: true, redirect: 'manual', notFoundCode: 'kv.notFound' },
      signal,
    );
    const output: HeadCommandOutput = { key, ...valueMetadata(response) };
    const length = response.headers.get('content-length');
    // A 303's own content-length is that of the (empty) redirect, not of the value.
    if (response.status === 200 && length !== null && /^\d+$/.test(length)) output.size = Number(length);
    return output;
  }
}

// ---------------------------------------------------------------------------------------------
// PUT

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

// fetch computes these itself; a presigned header list may still name them.
const headersFetchSets = new Set(['content-length', 'host', 'connection', 'transfer-encoding']);

function readUploadTicket(response: HttpResponse): UploadTicket {
  const record = readJsonObject(response);
  const rawHeaders = record.headers;
  const headers: Record<string, string> = {};
  if (typeof rawHeaders === 'object' && rawHeaders !== null && !Array.isArray(rawHeaders)) {
    for (const [name, value] of Object.entries(rawHeaders as Record<string, unknown>)) {
      if (typeof value === 'string' && !headersFetchSets.has(name.toLowerCase())) headers[name] = value;
    }
  }
  const ticket: UploadTicket = {
    uploadId: requireString(response, record, 'uploadId'),
    url: requireString(response, record, 'url'),
    method: typeof record.method === 'string' ? record.method.toUpperCase() : 'PUT',
    headers,
  };
  if (ticket.method !== 'PUT' && ticket.method !== 'POST') throw invalidResponse(response, `unsupported upload method ${ticket.method}`);
  if (typeof record.expiresAt === 'string') ticket.expiresAt = record.expiresAt;
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
    if (!/^[\x20-\x7e]{1,255}$/.test(contentType)) {
      throw new ValidationError({
        code: 'client.invalidInput',
        message: 'contentType must be 1..255 printable ASCII characters',
        status: 0,
        retryable: false,
      });
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
    return keyVersion(response);
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
      method: ticket.method as HttpRequest['method'],
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
    return keyVersion(committed);
  }
}

// ---------------------------------------------------------------------------------------------
// DELETE

/**
 * Input of {@link DeleteCommand}.
 *
 * @example
 * ```ts
 * const input: DeleteCommandInput = { key: 'users/42', ifMatch: 7 };
 * ```
 */
export interface DeleteCommandInput {
  key: string;
  /** Delete only if the current version is this one. */
  ifMatch?: number;
  consistency?: Consistency;
}

/**
 * Result of a delete: the key and the version of its tombstone.
 *
 * @example
 * ```ts
 * const { version }: DeleteCommandOutput = await client.delete('users/42');
 * ```
 */
export type DeleteCommandOutput = WriteOutput;

/**
 * Deletes a key (`DELETE /v1/kv/{key}`). Throws {@link NotFoundError} when it does not exist.
 *
 * @example
 * ```ts
 * await client.send(new DeleteCommand({ key: 'users/42' }));
 * ```
 */
export class DeleteCommand extends RingstoreCommand<DeleteCommandInput, DeleteCommandOutput> {
  override async execute({ transport, signal }: CommandContext): Promise<DeleteCommandOutput> {
    const path = `/v1/kv/${encodeKey(this.input.key)}`;
    const headers = conditionHeaders(this.input);
    assertConsistency(this.input.consistency);
    const query = { consistency: this.input.consistency };
    const response = await transport.send({ method: 'DELETE', path, headers, query, authenticated: true }, signal);
    return keyVersion(response);
  }
}

// ---------------------------------------------------------------------------------------------
// LIST

/**
 * Input of {@link ListCommand}: an optional key prefix, a page size (1..1000, server default
 * 100) and the cursor of the previous page.
 *
 * @example
 * ```ts
 * const input: ListCommandInput = { prefix: 'users/', limit: 50 };
 * ```
 */
export interface ListCommandInput {
  prefix?: string;
  limit?: number;
  cursor?: string;
}

/**
 * One key of a listing.
 *
 * @example
 * ```ts
 * const item: ListItem = { key: 'users/42', version: 3, size: 120, contentType: 'application/json' };
 * ```
 */
export interface ListItem {
  key: string;
  version: number;
  size: number;
  contentType: string;
  expiresAt?: string;
}

/**
 * One page of a listing; `cursor` is absent on the last page.
 *
 * @example
 * ```ts
 * const page: ListCommandOutput = await client.list({ prefix: 'users/' });
 * if (page.cursor) await client.list({ prefix: 'users/', cursor: page.cursor });
 * ```
 */
export interface ListCommandOutput {
  items: ListItem[];
  cursor?: string;
}

function readListItem(response: HttpResponse, raw: unknown): ListItem {
  if (typeof raw !== 'object' || raw === null) throw invalidResponse(response, 'a listing item is not an object');
  const record = raw as Record<string, unknown>;
  const item: ListItem = {
    key: requireString(response, record, 'key'),
    version: requireNumber(response, record, 'version'),
    size: requireNumber(response, record, 'size'),
    contentType: typeof record.contentType === 'string' ? record.contentType : 'application/octet-stream',
  };
  if (typeof record.expiresAt === 'string') item.expiresAt = record.expiresAt;
  return item;
}

/**
 * Lists keys in key order, one page per call (`GET /v1/kv`). See
 * {@link RingstoreClient.listAll} to walk every page.
 *
 * @example
 * ```ts
 * const { items, cursor } = await client.send(new ListCommand({ prefix: 'users/', limit: 100 }));
 * ```
 */
export class ListCommand extends RingstoreCommand<ListCommandInput, ListCommandOutput> {
  constructor(input: ListCommandInput = {}) {
    super(input);
  }

  override async execute({ transport, signal }: CommandContext): Promise<ListCommandOutput> {
    const { prefix, limit, cursor } = this.input;
    if (limit !== undefined) assertInteger('limit', limit, 1, LIST_LIMIT_MAX);
    const response = await transport.send({ method: 'GET', path: '/v1/kv', query: { prefix, limit, cursor }, authenticated: true }, signal);
    const record = readJsonObject(response);
    const output: ListCommandOutput = {
      items: requireArray(response, record, 'items').map((raw) => readListItem(response, raw)),
    };
    if (typeof record.cursor === 'string' && record.cursor !== '') output.cursor = record.cursor;
    return output;
  }
}

// ---------------------------------------------------------------------------------------------
// TRANSACTIONS

/**
 * One op of a transaction. `ifVersion` is the version the key must be at before the transaction
 * (0: the key must not exist); `check` only asserts it. A `put` value given as a string is stored
 * as UTF-8 with content type `text/plain; charset=utf-8` unless `contentType` says otherwise;
 * bytes default to `application/octet-stream`. Ops run in order: a `get` after a `put` of the
 * same key sees that put.
 *
 * @example
 * ```ts
 * const ops: TransactOp[] = [
 *   { op: 'check', key: 'config', ifVersion: 3 },
 *   { op: 'put', key: 'balance/a', value: '90', ifVersion: 7 },
 *   { op: 'delete', key: 'hold/a' },
 *   { op: 'get', key: 'balance/b' },
 * ];
 * ```
 */
export type TransactOp =
  | { op: 'get'; key: string }
  | { op: 'put'; key: string; value: Uint8Array | string; contentType?: string; ifVersion?: number }
  | { op: 'delete'; key: string; ifVersion?: number }
  | { op: 'check'; key: string; ifVersion: number };

/**
 * Input of {@link TransactCommand}.
 *
 * @example
 * ```ts
 * const input: TransactCommandInput = { ops: [{ op: 'get', key: 'a' }], timeoutMs: 2000, consistency: 'strong' };
 * ```
 */
export interface TransactCommandInput {
  /** 1 to {@link TXN_OPS_MAX} ops over any keys of the namespace. */
  ops: readonly TransactOp[];
  /** Deadline of the transaction, {@link TXN_TIMEOUT_MS_MIN}..{@link TXN_TIMEOUT_MS_MAX} ms (server default 5000). */
  timeoutMs?: number;
  /** How the writes are replicated when the transaction commits (default: the namespace's). */
  consistency?: Consistency;
  /**
   * How many times to run the transaction again after it aborted with `reason: 'conflict'`
   * (0..{@link TXN_CONFLICT_RETRIES_MAX}, default 0), waiting a jittered backoff in between.
   * Safe because an aborted transaction wrote nothing; other aborts are never retried.
   */
  conflictRetries?: number;
}

/**
 * What a `get` op read. A key found carries its bytes (`value`, with `text()` and `json()` as
 * {@link GetCommandOutput} has) and content type; `version` is absent when the value came from an
 * earlier op of the same transaction.
 *
 * @example
 * ```ts
 * const read: TransactRead = output.reads[0]!;
 * if (read.found) console.log(read.key, read.version, read.text());
 * ```
 */
export type TransactRead =
  | { key: string; found: false }
  | {
      key: string;
      found: true;
      value: Uint8Array;
      contentType: string;
      version?: number;
      /** The value decoded as UTF-8. */
      text(): string;
      /** The value decoded as UTF-8 and parsed as JSON. */
      json<T = unknown>(): T;
    };

/**
 * A committed transaction: its id, the version each written key now has (one entry per key, in no
 * particular order), and one read per `get` op, in request order.
 *
 * @example
 * ```ts
 * const { txid, writes, reads }: TransactCommandOutput = await client.transact(ops);
 * ```
 */
export interface TransactCommandOutput {
  txid: string;
  writes: Array<{ key: string; version: number }>;
  reads: TransactRead[];
}

function invalidInput(message: string): ValidationError {
  return new ValidationError({ code: 'client.invalidInput', message, status: 0, retryable: false });
}

/** The REST body of one op; also checks it as far as the client can. */
function txnOpBody(op: TransactOp, index: number): { body: Record<string, unknown>; valueBytes: number } {
  const where = `ops[${index}]`;
  if (typeof op !== 'object' || op === null) throw invalidInput(`${where} must be an object`);
  encodeKey(op.key);
  const version = (name: string, value: number | undefined): Record<string, number> => {
    if (value === undefined) return {};
    assertInteger(`${where}.${name}`, value, 0);
    return { ifVersion: value };
  };
  switch (op.op) {
    case 'get':
      return { body: { op: 'get', key: op.key }, valueBytes: 0 };
    case 'delete':
      return { body: { op: 'delete', key: op.key, ...version('ifVersion', op.ifVersion) }, valueBytes: 0 };
    case 'check':
      if (op.ifVersion === undefined) throw invalidInput(`${where}: a check needs ifVersion`);
      return { body: { op: 'check', key: op.key, ...version('ifVersion', op.ifVersion) }, valueBytes: 0 };
    case 'put': {
      if (typeof op.value !== 'string' && !(op.value instanceof Uint8Array))
        throw invalidInput(`${where}.value must be a string or a Uint8Array`);
      const text = typeof op.value === 'string';
      const contentType = op.contentType ?? (text ? 'text/plain; charset=utf-8' : 'application/octet-stream');
      // Text travels as is (readable in logs); bytes as base64.
      const value = text ? { value: op.value } : { value: bytesToBase64(op.value as Uint8Array), encoding: 'base64' };
      const body = { op: 'put', key: op.key, ...value, contentType, ...version('ifVersion', op.ifVersion) };
      return { body, valueBytes: toBytes(op.value).byteLength };
    }
    default:
      throw invalidInput(`${where}.op must be get, put, delete or check, got ${String((op as { op?: unknown }).op)}`);
  }
}

function readTxnRead(response: HttpResponse, raw: unknown): TransactRead {
  if (typeof raw !== 'object' || raw === null) throw invalidResponse(response, 'a transaction read is not an object');
  const record = raw as Record<string, unknown>;
  const key = requireString(response, record, 'key');
  if (record.found !== true) return { key, found: false };
  let value: Uint8Array;
  try {
    value = base64ToBytes(typeof record.value === 'string' ? record.value : '');
  } catch (cause) {
    throw new RingstoreError({
      code: 'response.invalid',
      message: `the value read of ${key} is not base64`,
      status: response.status,
      retryable: false,
      cause,
    });
  }
  return {
    key,
    found: true,
    value,
    contentType: typeof record.contentType === 'string' && record.contentType !== '' ? record.contentType : 'application/octet-stream',
    ...(typeof record.version === 'number' ? { version: record.version } : {}),
    text: () => utf8Decode(value),
    json: <T>() => JSON.parse(utf8Decode(value)) as T,
  };
}

function readTxnOutput(response: HttpResponse): TransactCommandOutput {
  const record = readJsonObject(response);
  if (record.status !== 'committed') throw invalidResponse(response, `unexpected transaction status ${String(record.status)}`);
  const writes = requireArray(response, record, 'writes').map((raw) => {
    if (typeof raw !== 'object' || raw === null) throw invalidResponse(response, 'a transaction write is not an object');
    const write = raw as Record<string, unknown>;
    return { key: requireString(response, write, 'key'), version: requireNumber(response, write, 'version') };
  });
  const reads = requireArray(response, record, 'reads').map((raw) => readTxnRead(response, raw));
  return { txid: requireString(response, record, 'txid'), writes, reads };
}

/**
 * Anything but a definite answer leaves a transaction's outcome unknown to the client: it may
 * have committed. 4xx answers are definite (refused, aborted, or 429: refused before any work).
 */
function outcomeOf(error: unknown): unknown {
  if (!(error instanceof RingstoreError) || error instanceof TransactionOutcomeUnknownError || error instanceof TransactionAbortedError)
    return error;
  // 2xx..4xx answers say what happened (a 200 the SDK cannot read did commit).
  if (error.status >= 200 && error.status < 500) return error;
  return new TransactionOutcomeUnknownError({
    code: error.code,
    message: `the transaction may or may not have committed: ${error.message}`,
    status: error.status,
    cause: error,
    retryable: false,
    ...(error.requestId === undefined ? {} : { requestId: error.requestId }),
  });
}

/**
 * Runs ops atomically over any keys (`POST /v1/txn`): all of them or none, serializable. Resolves
 * with the versions written and the values read; rejects with {@link TransactionAbortedError}
 * when the transaction aborted (nothing was written), with {@link TransactionOutcomeUnknownError}
 * when it may or may not have committed, and with {@link ValidationError} /
 * {@link PayloadTooLargeError} for input over the limits (checked before any request). Never
 * repeated automatically, except aborts by conflict when `conflictRetries` asks for it.
 *
 * @example
 * ```ts
 * const { writes, reads } = await client.send(new TransactCommand({
 *   ops: [
 *     { op: 'put', key: 'balance/a', value: '90', ifVersion: 7 },
 *     { op: 'put', key: 'balance/b', value: '110', ifVersion: 2 },
 *     { op: 'get', key: 'limits' },
 *   ],
 * }));
 * ```
 */
export class TransactCommand extends RingstoreCommand<TransactCommandInput, TransactCommandOutput> {
  override async execute(context: CommandContext): Promise<TransactCommandOutput> {
    const request = this.request();
    const retries = this.input.conflictRetries ?? 0;
    assertInteger('conflictRetries', retries, 0, TXN_CONFLICT_RETRIES_MAX);
    for (let retry = 0; ; retry++) {
      try {
        return readTxnOutput(await context.transport.send(request, context.signal));
      } catch (error) {
        if (!(error instanceof TransactionAbortedError && error.reason === 'conflict' && retry < retries)) throw outcomeOf(error);
      }
      await context.transport.backoff(retry + 1, context.signal);
    }
  }

  private request(): HttpRequest {
    const { ops, timeoutMs, consistency } = this.input;
    if (!Array.isArray(ops) || ops.length === 0) throw invalidInput('a transaction needs at least one op');
    if (ops.length > TXN_OPS_MAX) throw invalidInput(`a transaction has at most ${TXN_OPS_MAX} ops (got ${ops.length})`);
    if (timeoutMs !== undefined) assertInteger('timeoutMs', timeoutMs, TXN_TIMEOUT_MS_MIN, TXN_TIMEOUT_MS_MAX);
    assertConsistency(consistency);
    let valueBytes = 0;
    const bodies = ops.map((op, index) => {
      const built = txnOpBody(op, index);
      valueBytes += built.valueBytes;
      return built.body;
    });
    if (valueBytes > TXN_VALUE_BYTES_MAX) {
      throw new PayloadTooLargeError({
        code: 'client.valueTooLarge',
        message: `a transaction carries at most ${TXN_VALUE_BYTES_MAX} bytes of values (got ${valueBytes})`,
        status: 0,
        retryable: false,
      });
    }
    return {
      method: 'POST',
      path: '/v1/txn',
      query: { consistency },
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ops: bodies, ...(timeoutMs === undefined ? {} : { timeoutMs }) }),
      authenticated: true,
      idempotent: false,
    };
  }
}

// ---------------------------------------------------------------------------------------------
// RING

/**
 * A shard of the ring: one DynamoDB table.
 *
 * @example
 * ```ts
 * const shard: RingShard = { id: 0, table: 'ringstore-local-shard-0', status: 'active' };
 * ```
 */
export interface RingShard {
  id: number;
  table: string;
  status: string;
}

/**
 * A token range `(start, end]` with its owner and replicas (owner first). The first range of
 * the ring wraps around: its `start` is greater than its `end`.
 *
 * @example
 * ```ts
 * const range: RingRange = { start: 4026531840, end: 268435455, owner: 0, replicas: [0, 1, 2] };
 * ```
 */
export interface RingRange {
  start: number;
  end: number;
  owner: number;
  replicas: number[];
}

/**
 * The ring as `GET /v1/ring` describes it.
 *
 * @example
 * ```ts
 * const ring: RingCommandOutput = await client.ring();
 * console.log(ring.epoch, ring.shards.length, ring.ranges.length);
 * ```
 */
export interface RingCommandOutput {
  epoch: number;
  replicationFactor: number;
  vnodesPerShard: number;
  tokenBits: number;
  shards: RingShard[];
  ranges: RingRange[];
}

/**
 * Input of {@link RingCommand}: none.
 *
 * @example
 * ```ts
 * const input: RingCommandInput = {};
 * ```
 */
export type RingCommandInput = Record<string, never>;

function readShard(response: HttpResponse, raw: unknown): RingShard {
  if (typeof raw !== 'object' || raw === null) throw invalidResponse(response, 'a ring shard is not an object');
  const record = raw as Record<string, unknown>;
  return {
    id: requireNumber(response, record, 'id'),
    table: requireString(response, record, 'table'),
    status: requireString(response, record, 'status'),
  };
}

function readRange(response: HttpResponse, raw: unknown): RingRange {
  if (typeof raw !== 'object' || raw === null) throw invalidResponse(response, 'a ring range is not an object');
  const record = raw as Record<string, unknown>;
  const replicas = requireArray(response, record, 'replicas');
  if (!replicas.every((id): id is number => typeof id === 'number')) throw invalidResponse(response, 'ring range replicas must be numbers');
  return {
    start: requireNumber(response, record, 'start'),
    end: requireNumber(response, record, 'end'),
    owner: requireNumber(response, record, 'owner'),
    replicas,
  };
}

/**
 * Describes the ring (`GET /v1/ring`): epoch, shards, token ranges, owners and replicas.
 *
 * @example
 * ```ts
 * const { epoch, ranges } = await client.send(new RingCommand());
 * ```
 */
export class RingCommand extends RingstoreCommand<RingCommandInput, RingCommandOutput> {
  constructor(input: RingCommandInput = {}) {
    super(input);
  }

  override async execute({ transport, signal }: CommandContext): Promise<RingCommandOutput> {
    const response = await transport.send({ method: 'GET', path: '/v1/ring', authenticated: true }, signal);
    const record = readJsonObject(response);
    return {
      epoch: requireNumber(response, record, 'epoch'),
      replicationFactor: requireNumber(response, record, 'replicationFactor'),
      vnodesPerShard: requireNumber(response, record, 'vnodesPerShard'),
      tokenBits: typeof record.tokenBits === 'number' ? record.tokenBits : 32,
      shards: requireArray(response, record, 'shards').map((raw) => readShard(response, raw)),
      ranges: requireArray(response, record, 'ranges').map((raw) => readRange(response, raw)),
    };
  }
}

// ---------------------------------------------------------------------------------------------
// ADMIN: API keys

/**
 * Role of an API key: `user` reaches the KV API of its namespace, `admin` also the admin API.
 *
 * @example
 * ```ts
 * const role: ApiKeyRole = 'admin';
 * ```
 */
export type ApiKeyRole = 'user' | 'admin';

/**
 * Input of {@link CreateApiKeyCommand}.
 *
 * @example
 * ```ts
 * const input: CreateApiKeyCommandInput = { namespace: 'team-a', role: 'user', description: 'CI' };
 * ```
 */
export interface CreateApiKeyCommandInput {
  namespace: string;
  role?: ApiKeyRole;
  description?: string;
}

/**
 * A new API key. `apiKey` is the secret; the server shows it only once.
 *
 * @example
 * ```ts
 * const { keyId, apiKey }: CreateApiKeyCommandOutput = await admin.createApiKey({ namespace: 'team-a' });
 * ```
 */
export interface CreateApiKeyCommandOutput {
  keyId: string;
  apiKey: string;
  namespace: string;
  role: ApiKeyRole;
  createdAt: string;
}

/**
 * Creates an API key (`POST /v1/admin/keys`); needs an admin key.
 *
 * @example
 * ```ts
 * const created = await admin.send(new CreateApiKeyCommand({ namespace: 'team-a' }));
 * ```
 */
export class CreateApiKeyCommand extends RingstoreCommand<CreateApiKeyCommandInput, CreateApiKeyCommandOutput> {
  override async execute({ transport, signal }: CommandContext): Promise<CreateApiKeyCommandOutput> {
    const { namespace, role, description } = this.input;
    if (typeof namespace !== 'string' || namespace === '') {
      throw new ValidationError({
        code: 'client.invalidInput',
        message: 'namespace must be a non-empty string',
        status: 0,
        retryable: false,
      });
    }
    const body: Record<string, string> = { namespace };
    if (role !== undefined) body.role = role;
    if (description !== undefined) body.description = description;
    const response = await transport.send(
      {
        method: 'POST',
        path: '/v1/admin/keys',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        authenticated: true,
      },
      signal,
    );
    const record = readJsonObject(response);
    return {
      keyId: requireString(response, record, 'keyId'),
      apiKey: requireString(response, record, 'apiKey'),
      namespace: requireString(response, record, 'namespace'),
      role: requireString(response, record, 'role') as ApiKeyRole,
      createdAt: requireString(response, record, 'createdAt'),
    };
  }
}

/**
 * Input of {@link RevokeApiKeyCommand}.
 *
 * @example
 * ```ts
 * const input: RevokeApiKeyCommandInput = { keyId: 'k_123' };
 * ```
 */
export interface RevokeApiKeyCommandInput {
  keyId: string;
}

/**
 * Result of revoking a key.
 *
 * @example
 * ```ts
 * const { revokedAt }: RevokeApiKeyCommandOutput = await admin.revokeApiKey('k_123');
 * ```
 */
export interface RevokeApiKeyCommandOutput {
  keyId: string;
  revokedAt: string;
}

/**
 * Revokes an API key (`DELETE /v1/admin/keys/{keyId}`); needs an admin key.
 *
 * @example
 * ```ts
 * await admin.send(new RevokeApiKeyCommand({ keyId: 'k_123' }));
 * ```
 */
export class RevokeApiKeyCommand extends RingstoreCommand<RevokeApiKeyCommandInput, RevokeApiKeyCommandOutput> {
  override async execute({ transport, signal }: CommandContext): Promise<RevokeApiKeyCommandOutput> {
    const { keyId } = this.input;
    if (typeof keyId !== 'string' || keyId === '') {
      throw new ValidationError({ code: 'client.invalidInput', message: 'keyId must be a non-empty string', status: 0, retryable: false });
    }
    const response = await transport.send(
      { method: 'DELETE', path: `/v1/admin/keys/${encodeURIComponent(keyId)}`, authenticated: true },
      signal,
    );
    const record = readJsonObject(response);
    return { keyId: requireString(response, record, 'keyId'), revokedAt: requireString(response, record, 'revokedAt') };
  }
}

/**
 * An API key as the admin listing shows it (never the secret).
 *
 * @example
 * ```ts
 * const active = (await admin.listApiKeys()).keys.filter((k: ApiKeyDescription) => !k.revokedAt);
 * ```
 */
export interface ApiKeyDescription {
  keyId: string;
  namespace: string;
  role: ApiKeyRole;
  createdAt: string;
  revokedAt?: string;
  description?: string;
}

/**
 * Input of {@link ListApiKeysCommand}: none.
 *
 * @example
 * ```ts
 * const input: ListApiKeysCommandInput = {};
 * ```
 */
export type ListApiKeysCommandInput = Record<string, never>;

/**
 * Every API key of the deployment.
 *
 * @example
 * ```ts
 * const { keys }: ListApiKeysCommandOutput = await admin.listApiKeys();
 * ```
 */
export interface ListApiKeysCommandOutput {
  keys: ApiKeyDescription[];
}

/**
 * Lists API keys (`GET /v1/admin/keys`); needs an admin key.
 *
 * @example
 * ```ts
 * const { keys } = await admin.send(new ListApiKeysCommand());
 * ```
 */
export class ListApiKeysCommand extends RingstoreCommand<ListApiKeysCommandInput, ListApiKeysCommandOutput> {
  constructor(input: ListApiKeysCommandInput = {}) {
    super(input);
  }

  override async execute({ transport, signal }: CommandContext): Promise<ListApiKeysCommandOutput> {
    const response = await transport.send({ method: 'GET', path: '/v1/admin/keys', authenticated: true }, signal);
    const record = readJsonObject(response);
    const keys = requireArray(response, record, 'keys').map((raw): ApiKeyDescription => {
      if (typeof raw !== 'object' || raw === null) throw invalidResponse(response, 'an API key entry is not an object');
      const entry = raw as Record<string, unknown>;
      const key: ApiKeyDescription = {
        keyId: requireString(response, entry, 'keyId'),
        namespace: requireString(response, entry, 'namespace'),
        role: requireString(response, entry, 'role') as ApiKeyRole,
        createdAt: requireString(response, entry, 'createdAt'),
      };
      if (typeof entry.revokedAt === 'string') key.revokedAt = entry.revokedAt;
      if (typeof entry.description === 'string') key.description = entry.description;
      return key;
    });
    return { keys };
  }
}

// ---------------------------------------------------------------------------------------------
// ADMIN: namespace defaults, shard health, repair

/**
 * A namespace's default consistency: what a request that names none gets.
 *
 * @example
 * ```ts
 * const settings: NamespaceSettings = { namespace: 'team', readConsistency: 'eventual', writeConsistency: 'strong' };
 * ```
 */
export interface NamespaceSettings {
  namespace: string;
  readConsistency: Consistency;
  writeConsistency: Consistency;
}

function namespaceSettingsOf(response: HttpResponse): NamespaceSettings {
  const record = readJsonObject(response);
  const level = (field: string): Consistency => (record[field] === 'strong' ? 'strong' : 'eventual');
  return {
    namespace: requireString(response, record, 'namespace'),
    readConsistency: level('readConsistency'),
    writeConsistency: level('writeConsistency'),
  };
}

/**
 * Input of {@link GetNamespaceSettingsCommand}.
 *
 * @example
 * ```ts
 * const input: GetNamespaceSettingsCommandInput = { namespace: 'team' };
 * ```
 */
export interface GetNamespaceSettingsCommandInput {
  namespace: string;
}

/**
 * Reads a namespace's defaults (`GET /v1/admin/namespaces/{namespace}`); needs an admin key.
 *
 * @example
 * ```ts
 * const settings = await admin.send(new GetNamespaceSettingsCommand({ namespace: 'team' }));
 * ```
 */
export class GetNamespaceSettingsCommand extends RingstoreCommand<GetNamespaceSettingsCommandInput, NamespaceSettings> {
  override async execute({ transport, signal }: CommandContext): Promise<NamespaceSettings> {
    const path = `/v1/admin/namespaces/${encodeURIComponent(this.input.namespace)}`;
    return namespaceSettingsOf(await transport.send({ method: 'GET', path, authenticated: true }, signal));
  }
}

/**
 * Input of {@link SetNamespaceSettingsCommand}: the defaults to change (the others stay).
 *
 * @example
 * ```ts
 * const input: SetNamespaceSettingsCommandInput = { namespace: 'team', writeConsistency: 'strong' };
 * ```
 */
export interface SetNamespaceSettingsCommandInput {
  namespace: string;
  readConsistency?: Consistency;
  writeConsistency?: Consistency;
}

/**
 * Sets a namespace's defaults (`PUT /v1/admin/namespaces/{namespace}`); needs an admin key. Requests
 * see the change within the authorizer cache TTL (60 s by default).
 *
 * @example
 * ```ts
 * await admin.send(new SetNamespaceSettingsCommand({ namespace: 'team', readConsistency: 'strong' }));
 * ```
 */
export class SetNamespaceSettingsCommand extends RingstoreCommand<SetNamespaceSettingsCommandInput, NamespaceSettings> {
  override async execute({ transport, signal }: CommandContext): Promise<NamespaceSettings> {
    const { namespace, ...patch } = this.input;
    assertConsistency(patch.readConsistency);
    assertConsistency(patch.writeConsistency);
    const path = `/v1/admin/namespaces/${encodeURIComponent(namespace)}`;
    const body = new TextEncoder().encode(JSON.stringify(patch));
    const headers = { 'content-type': 'application/json' };
    return namespaceSettingsOf(await transport.send({ method: 'PUT', path, headers, body, authenticated: true }, signal));
  }
}

/**
 * Shard health, hints waiting, the last maintenance report and replication lag, as the server
 * reports them (see the `Shards` schema in the OpenAPI document).
 *
 * @example
 * ```ts
 * const { shards }: DescribeShardsCommandOutput = await admin.describeShards();
 * ```
 */
export interface DescribeShardsCommandOutput {
  epoch: number;
  shards: Array<{
    id: number;
    table: string;
    health: 'available' | 'unavailable' | 'recovering';
    since?: string;
    reason?: string;
    pendingHints: number;
  }>;
  lastMaintenance?: Record<string, unknown>;
  replication: { replicasApplied: number; hintsWritten: number; lagMs: { p50: number; p99: number; max: number; samples: number } };
}

/**
 * Describes shard health (`GET /v1/admin/shards`); needs an admin key.
 *
 * @example
 * ```ts
 * const status = await admin.send(new DescribeShardsCommand());
 * ```
 */
export class DescribeShardsCommand extends RingstoreCommand<Record<string, never>, DescribeShardsCommandOutput> {
  constructor(input: Record<string, never> = {}) {
    super(input);
  }

  override async execute({ transport, signal }: CommandContext): Promise<DescribeShardsCommandOutput> {
    const response = await transport.send({ method: 'GET', path: '/v1/admin/shards', authenticated: true }, signal);
    const record = readJsonObject(response);
    requireArray(response, record, 'shards');
    return record as unknown as DescribeShardsCommandOutput;
  }
}

/**
 * What one repair run did: hints replayed per shard and the anti-entropy comparison.
 *
 * @example
 * ```ts
 * const { antiEntropy }: RepairCommandOutput = await admin.repair();
 * ```
 */
export interface RepairCommandOutput {
  startedAt: string;
  handoff: Array<{
    table: string;
    applied: number;
    alreadyCurrent: number;
    hintsPerSecond: number;
    completed: boolean;
    transition?: string;
  }>;
  antiEntropy: {
    rangesCompared: number;
    keysCompared: number;
    repairedCount: number;
    repairs: Array<Record<string, unknown>>;
    rangesSkipped: number;
  };
}

/**
 * Runs hinted handoff and a full anti-entropy pass now (`POST /v1/admin/repair`); needs an admin key.
 *
 * @example
 * ```ts
 * const report = await admin.send(new RepairCommand());
 * ```
 */
export class RepairCommand extends RingstoreCommand<Record<string, never>, RepairCommandOutput> {
  constructor(input: Record<string, never> = {}) {
    super(input);
  }

  override async execute({ transport, signal }: CommandContext): Promise<RepairCommandOutput> {
    const response = await transport.send({ method: 'POST', path: '/v1/admin/repair', authenticated: true }, signal);
    const record = readJsonObject(response);
    requireArray(response, record, 'handoff');
    return record as unknown as RepairCommandOutput;
  }
}
