// The KV and transaction operations the scripts combine, each one request (or the three of the
// presigned upload flow), tagged by route and checked for the statuses the API documents.
import { sha256 } from 'k6/crypto';
import type { RequestBody, Response } from 'k6/http';
import { bodyText, call, callBatch, type CallOptions, checkStatus, type Consistency, jsonOf, kvPath } from './http.ts';

/** Direct `PUT` bodies are at most 4 MiB (docs/api.md, Limits); larger values go through an upload. */
export const DIRECT_BODY_BYTES_MAX = 4 * 1024 * 1024;

export interface WriteOptions {
  consistency?: Consistency;
  contentType?: string;
  /** `If-Match` / `If-None-Match` headers, as sent (`"3"`, `*`). */
  ifMatch?: string;
  ifNoneMatch?: string;
  /** Statuses that are outcomes, not failures (`412` for a read-modify-write that lost a race). */
  expected?: number[];
  tags?: Record<string, string>;
}

export interface WriteAck {
  key: string;
  version: number;
  consistency: Consistency;
  copies?: number;
}

function conditionHeaders(options: WriteOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  if (options.ifMatch !== undefined) headers['if-match'] = options.ifMatch;
  if (options.ifNoneMatch !== undefined) headers['if-none-match'] = options.ifNoneMatch;
  return headers;
}

const consistencyQuery = (consistency: Consistency | undefined) => (consistency ? `?consistency=${consistency}` : '');

/** `PUT /v1/kv/{key}` with the value in the body (at most 4 MiB). */
export function put(key: string, value: RequestBody, options: WriteOptions = {}): Response {
  return call('PUT', `${kvPath(key)}${consistencyQuery(options.consistency)}`, value, {
    name: 'PUT /v1/kv/{key}',
    headers: { 'content-type': options.contentType ?? 'application/octet-stream', ...conditionHeaders(options) },
    ...(options.expected ? { expected: options.expected } : {}),
    ...(options.tags ? { tags: options.tags } : {}),
  });
}

export interface ReadOptions {
  consistency?: Consistency;
  expected?: number[];
  tags?: Record<string, string>;
  binary?: boolean;
  follow?: boolean;
}

/** `GET /v1/kv/{key}`. */
export function get(key: string, options: ReadOptions = {}): Response {
  const callOptions: CallOptions = { name: 'GET /v1/kv/{key}' };
  if (options.expected) callOptions.expected = options.expected;
  if (options.tags) callOptions.tags = options.tags;
  if (options.binary) callOptions.binary = true;
  if (options.follow === false) callOptions.follow = false;
  return call('GET', `${kvPath(key)}${consistencyQuery(options.consistency)}`, null, callOptions);
}

/** The acknowledgement of a write, when the answer is one. */
export const ackOf = (response: Response): WriteAck | undefined => (response.status === 200 ? jsonOf<WriteAck>(response) : undefined);

export type TxnOp =
  | { op: 'get'; key: string }
  | { op: 'put'; key: string; value: string; ifVersion?: number; contentType?: string }
  | { op: 'delete'; key: string; ifVersion?: number }
  | { op: 'check'; key: string; ifVersion: number };

export interface TxnRead {
  key: string;
  found: boolean;
  version?: number;
  /** base64 */
  value?: string;
}

export interface TxnResult {
  status: 'committed';
  txid: string;
  writes: { key: string; version: number }[];
  reads: TxnRead[];
}

/** `POST /v1/txn`: 409 (conflict, timeout) and 412 (a failed `ifVersion`) are outcomes a caller retries. */
export function txn(
  ops: TxnOp[],
  options: { consistency?: Consistency; tags?: Record<string, string>; timeoutMs?: number } = {},
): Response {
  const body: { ops: TxnOp[]; timeoutMs?: number } = { ops };
  if (options.timeoutMs !== undefined) body.timeoutMs = options.timeoutMs;
  return call('POST', `/v1/txn${consistencyQuery(options.consistency)}`, JSON.stringify(body), {
    name: 'POST /v1/txn',
    headers: { 'content-type': 'application/json' },
    expected: [200, 409, 412],
    ...(options.tags ? { tags: options.tags } : {}),
  });
}

/** The committed result of a transaction, when it committed. */
export const committed = (response: Response): TxnResult | undefined => (response.status === 200 ? jsonOf<TxnResult>(response) : undefined);

interface UploadTicket {
  uploadId: string;
  url: string;
  method: string;
  headers: Record<string, string>;
}

// The HTTP client sets these itself; a presigned header list may still name them.
const clientHeaders = new Set(['content-length', 'host', 'connection', 'transfer-encoding']);

/**
 * A value over 4 MiB, as the SDK writes it (sdk/src/commands/PutCommand.ts): `POST /v1/kv/{key}/uploads`,
 * the bytes to the presigned URL (no API key), then `POST …/commit` with their sha256. Returns the commit's
 * answer, or the first answer that failed its check.
 */
export function putLarge(key: string, bytes: ArrayBuffer, options: WriteOptions & { sha256Hex?: string } = {}): Response {
  const contentType = options.contentType ?? 'application/octet-stream';
  const tags = options.tags ? { tags: options.tags } : {};
  const created = call('POST', `${kvPath(key)}/uploads`, JSON.stringify({ size: bytes.byteLength, contentType }), {
    name: 'POST /v1/kv/{key}/uploads',
    headers: { 'content-type': 'application/json' },
    ...tags,
  });
  const ticket = created.status === 201 ? jsonOf<UploadTicket>(created) : undefined;
  if (!checkStatus(created, 'upload create', 201) || !ticket) return created;
  const headers = Object.fromEntries(Object.entries(ticket.headers).filter(([name]) => !clientHeaders.has(name.toLowerCase())));
  const transferred = call(ticket.method.toUpperCase(), ticket.url, bytes, { name: 'PUT presigned upload', headers, key: null, ...tags });
  if (!checkStatus(transferred, 'upload transfer', 200)) return transferred;
  const digest = options.sha256Hex ?? sha256(bytes, 'hex');
  return call(
    'POST',
    `${kvPath(key)}/uploads/${encodeURIComponent(ticket.uploadId)}/commit${consistencyQuery(options.consistency)}`,
    JSON.stringify({ sha256: digest, contentType }),
    {
      name: 'POST /v1/kv/{key}/uploads/{uploadId}/commit',
      headers: { 'content-type': 'application/json', ...conditionHeaders(options) },
      ...(options.expected ? { expected: options.expected } : {}),
      ...tags,
    },
  );
}

/** Bound on the writes `preload` sends at once: parallel enough to load quickly, not a burst that skews the run. */
const PRELOAD_BATCH = 16;

/**
 * Writes `keys` (eventual, in batches) before the load starts, so that reads find their keys as in YCSB's
 * load phase; throws, which fails `setup` and the run, when any write is refused.
 */
export function preload(keys: string[], valueOf: (index: number) => string): void {
  for (let start = 0; start < keys.length; start += PRELOAD_BATCH) {
    const slice = keys.slice(start, start + PRELOAD_BATCH);
    const answers = callBatch(
      slice.map((key, offset) => ({
        method: 'PUT',
        path: kvPath(key),
        body: valueOf(start + offset),
        options: { name: 'PUT /v1/kv/{key}', headers: { 'content-type': 'text/plain' }, tags: { op: 'load' } },
      })),
    );
    const refused = answers.findIndex((answer) => answer.status !== 200);
    if (refused >= 0)
      throw new Error(`preload: PUT ${slice[refused]} answered ${answers[refused]!.status}: ${bodyText(answers[refused]!)}`);
  }
}
