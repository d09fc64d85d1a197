// The errors the SDK throws: one base class carrying the server's dotted `code`, one subclass per
// HTTP status a caller may want to catch, and the mapping from a response to the right class.

/**
 * What every {@link RingstoreError} is built from.
 *
 * @example
 * ```ts
 * const options: RingstoreErrorOptions = { code: 'kv.notFound', message: 'no such key', status: 404, retryable: false };
 * throw new NotFoundError(options);
 * ```
 */
export interface RingstoreErrorOptions {
  /** Dotted code from the server (`kv.notFound`) or from the SDK (`network.timeout`). */
  code: string;
  message: string;
  /** HTTP status of the response; 0 when no response arrived. */
  status: number;
  /** True when the SDK's retry policy treats the error as transient. */
  retryable: boolean;
  requestId?: string;
  /** Seconds from the `Retry-After` header, when the server sent one. */
  retryAfterSeconds?: number;
  /** Machine-readable facts the server sent with the error (`field`, a transaction's `txid`, `reason`, `key`). */
  details?: Readonly<Record<string, unknown>>;
  cause?: unknown;
}

/**
 * Base class of every error the SDK throws. `code` is the server's dotted code, kept verbatim
 * (`kv.notFound`, `kv.preconditionFailed`); errors raised before or without a response use
 * SDK codes (`network.failed`, `network.timeout`, `client.invalidInput`, `response.invalid`).
 *
 * @example
 * ```ts
 * try {
 *   await client.get('missing');
 * } catch (err) {
 *   if (err instanceof RingstoreError) console.error(err.code, err.status, err.retryable);
 * }
 * ```
 */
export class RingstoreError extends Error {
  override readonly name: string = 'RingstoreError';
  /** Dotted error code, e.g. `kv.notFound`. */
  readonly code: string;
  /** HTTP status; 0 when no response arrived (network failure, client-side refusal). */
  readonly status: number;
  /**
   * True when retrying the same request may succeed. The SDK already retried it, except for
   * transactions, which it never repeats on its own (see {@link TransactionAbortedError}).
   */
  readonly retryable: boolean;
  /** Request id reported by the server or API Gateway, for support tickets. */
  readonly requestId?: string;
  /** Seconds the server asked the client to wait (`Retry-After`), when given. */
  readonly retryAfterSeconds?: number;
  /** The `details` object of the server's error, when it sent one (e.g. `details.field`). */
  readonly details?: Readonly<Record<string, unknown>>;

  constructor(options: RingstoreErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code;
    this.status = options.status;
    this.retryable = options.retryable;
    if (options.requestId !== undefined) this.requestId = options.requestId;
    if (options.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
    if (options.details !== undefined) this.details = options.details;
  }
}

/**
 * 400: the request was malformed (bad key, bad TTL, bad limit). Also thrown client-side,
 * before any request, for input the server would refuse.
 *
 * @example
 * ```ts
 * await client.put('k', 'v', { ttlSeconds: 0 }).catch((err) => {
 *   if (err instanceof ValidationError) console.error(err.message);
 * });
 * ```
 */
export class ValidationError extends RingstoreError {
  override readonly name: string = 'ValidationError';
}

/**
 * 401: the API key is missing, unknown or revoked.
 *
 * @example
 * ```ts
 * await client.ring().catch((err) => {
 *   if (err instanceof AuthenticationError) console.error('check RINGSTORE_API_KEY');
 * });
 * ```
 */
export class AuthenticationError extends RingstoreError {
  override readonly name: string = 'AuthenticationError';
}

/**
 * 403: the API key is valid but not allowed to do this (e.g. admin routes with a user key).
 *
 * @example
 * ```ts
 * await client.listApiKeys().catch((err) => {
 *   if (err instanceof ForbiddenError) console.error('an admin key is needed');
 * });
 * ```
 */
export class ForbiddenError extends RingstoreError {
  override readonly name: string = 'ForbiddenError';
}

/**
 * 404: the key (or API key id) does not exist.
 *
 * @example
 * ```ts
 * const value = await client.get('k').catch((err) => {
 *   if (err instanceof NotFoundError) return undefined;
 *   throw err;
 * });
 * ```
 */
export class NotFoundError extends RingstoreError {
  override readonly name: string = 'NotFoundError';
}

/**
 * 409: a conflicting operation (e.g. a transaction holding the key) won.
 *
 * @example
 * ```ts
 * await client.put('k', 'v').catch((err) => {
 *   if (err instanceof ConflictError) console.error('conflict:', err.code);
 * });
 * ```
 */
export class ConflictError extends RingstoreError {
  override readonly name: string = 'ConflictError';
}

/**
 * 412: an `ifMatch` version did not match, or `ifNoneMatch: '*'` found an existing key.
 *
 * @example
 * ```ts
 * const { version } = await client.head('counter');
 * await client.put('counter', '2', { ifMatch: version }).catch((err) => {
 *   if (err instanceof PreconditionFailedError) console.error('someone else wrote first');
 * });
 * ```
 */
export class PreconditionFailedError extends RingstoreError {
  override readonly name: string = 'PreconditionFailedError';
}

/**
 * 413: the value is too large. Thrown client-side, before any request, for values over
 * {@link VALUE_BYTES_MAX} bytes.
 *
 * @example
 * ```ts
 * await client.put('big', new Uint8Array(11 * 1024 * 1024)).catch((err) => {
 *   if (err instanceof PayloadTooLargeError) console.error(err.message);
 * });
 * ```
 */
export class PayloadTooLargeError extends RingstoreError {
  override readonly name: string = 'PayloadTooLargeError';
}

/**
 * 429: the caller is sending too fast, or its namespace is at a quota. Retried by the SDK unless the
 * body says `retryable: false` (`quota.keys`, `quota.bytes`); thrown when attempts run out.
 *
 * @example
 * ```ts
 * await client.get('k').catch((err) => {
 *   if (err instanceof ThrottledError) console.error('retry after', err.retryAfterSeconds, 's');
 * });
 * ```
 */
export class ThrottledError extends RingstoreError {
  override readonly name: string = 'ThrottledError';
}

/**
 * 503: a shard is unavailable or replication is pending. Retried by the SDK honouring
 * `Retry-After`, unless the body says `retryable: false` (a write whose outcome is unknown);
 * thrown when attempts run out, with `retryAfterSeconds` when the server sent it.
 *
 * @example
 * ```ts
 * await client.get('k').catch((err) => {
 *   if (err instanceof ServiceUnavailableError) console.error(err.code, err.retryAfterSeconds);
 * });
 * ```
 */
export class ServiceUnavailableError extends RingstoreError {
  override readonly name: string = 'ServiceUnavailableError';
}

/**
 * 500, 502, 504 and other 5xx answers: a server bug or a gateway failure.
 *
 * @example
 * ```ts
 * await client.get('k').catch((err) => {
 *   if (err instanceof ServerError) console.error('server failed', err.status, err.requestId);
 * });
 * ```
 */
export class ServerError extends RingstoreError {
  override readonly name: string = 'ServerError';
}

/**
 * No response: the connection failed, the request timed out (`network.timeout`) or the caller
 * aborted it (`network.aborted`, not retried). `status` is 0; `cause` holds the underlying error.
 *
 * @example
 * ```ts
 * await client.get('k').catch((err) => {
 *   if (err instanceof NetworkError) console.error('cannot reach Ringstore:', err.cause);
 * });
 * ```
 */
export class NetworkError extends RingstoreError {
  override readonly name: string = 'NetworkError';
}

/**
 * Why a transaction aborted, as the server reports it in `details.reason`: `conflict` (another
 * transaction holds or changed a key), `precondition` (a `check` or `ifVersion` did not hold),
 * `notFound` (a `delete` of a key that does not exist), `timeout` (the deadline passed),
 * `tooLarge` (a value read is over the transaction limit), `unavailable` (a shard could not be
 * reached). Other strings may come from newer servers.
 *
 * @example
 * ```ts
 * const reason: TransactionAbortReason = 'conflict';
 * ```
 */
export type TransactionAbortReason = 'conflict' | 'precondition' | 'notFound' | 'timeout' | 'tooLarge' | 'unavailable' | (string & {});

/**
 * A transaction aborted as a whole: none of its writes happened. `reason` says why, `key` names
 * the key that made it abort (when there is one) and `txid` the transaction. `code` and `status`
 * stay the server's: `txn.conflict` / `txn.timeout` (409), `kv.preconditionFailed` (412),
 * `kv.notFound` (404), `request.tooLarge` (413), `shard.unavailable` (503).
 *
 * The SDK does not retry an aborted transaction unless `conflictRetries` asks it to (for
 * `reason === 'conflict'` only); `retryable` says whether running it again may succeed.
 *
 * @example
 * ```ts
 * try {
 *   await client.transact([{ op: 'check', key: 'stock', ifVersion: 4 }, { op: 'put', key: 'order/1', value: 'x' }]);
 * } catch (err) {
 *   if (err instanceof TransactionAbortedError && err.reason === 'precondition') console.error('stock changed:', err.key);
 * }
 * ```
 */
export class TransactionAbortedError extends RingstoreError {
  override readonly name: string = 'TransactionAbortedError';
  readonly reason: TransactionAbortReason;
  /** The key that made the transaction abort, when the server named one. */
  readonly key?: string;
  /** The transaction's id, when the server sent it. */
  readonly txid?: string;

  constructor(options: RingstoreErrorOptions & { reason: TransactionAbortReason; key?: string; txid?: string }) {
    super(options);
    this.reason = options.reason;
    if (options.key !== undefined) this.key = options.key;
    if (options.txid !== undefined) this.txid = options.txid;
  }
}

/**
 * A transaction may or may not have committed: the server answered `503 txn.outcomeUnknown` (its
 * coordinator stopped; the transaction is committed or aborted as a whole soon after its deadline),
 * or no definite answer arrived (network failure, timeout, abort by the caller, any other 5xx).
 * `code` and `status` are those of the underlying failure; `cause` holds it when it was not the
 * server's own `txn.outcomeUnknown`.
 *
 * Never retried by the SDK (`retryable` is false): a transaction that did commit would be applied
 * twice. Read the keys with `consistency: 'strong'` to learn what happened before running it again.
 *
 * @example
 * ```ts
 * await client.transact(ops).catch(async (err) => {
 *   if (err instanceof TransactionOutcomeUnknownError) console.error('check the keys before retrying', err.txid);
 * });
 * ```
 */
export class TransactionOutcomeUnknownError extends RingstoreError {
  override readonly name: string = 'TransactionOutcomeUnknownError';
  /** The transaction's id, when the server sent it. */
  readonly txid?: string;

  constructor(options: RingstoreErrorOptions & { txid?: string }) {
    super({ ...options, retryable: false });
    if (options.txid !== undefined) this.txid = options.txid;
  }
}

/**
 * 410 `watch.cursorExpired`: a watch cursor older than the change feed's retention (24 h by default), so changes after
 * it may be gone. Never skipped silently: re-read the keys you follow, then watch from `oldestCursor` (the oldest
 * position still served) or from now.
 *
 * @example
 * ```ts
 * try {
 *   for await (const change of client.watch('orders/', { cursor: saved })) console.log(change.key);
 * } catch (err) {
 *   if (err instanceof WatchCursorExpiredError) console.error('resync, then continue from', err.oldestCursor);
 * }
 * ```
 */
export class WatchCursorExpiredError extends RingstoreError {
  override readonly name: string = 'WatchCursorExpiredError';
  /** The oldest cursor the feed still serves (`details.oldestCursor`; the server always sends it). */
  readonly oldestCursor?: string;
  /** How long the feed keeps a change, in seconds (`details.retentionSeconds`). */
  readonly retentionSeconds?: number;

  constructor(options: RingstoreErrorOptions) {
    super(options);
    const { oldestCursor, retentionSeconds } = options.details ?? {};
    if (typeof oldestCursor === 'string') this.oldestCursor = oldestCursor;
    if (typeof retentionSeconds === 'number') this.retentionSeconds = retentionSeconds;
  }
}

type ErrorClass = new (options: RingstoreErrorOptions) => RingstoreError;

const classByStatus: Readonly<Record<number, ErrorClass>> = {
  400: ValidationError,
  401: AuthenticationError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  412: PreconditionFailedError,
  413: PayloadTooLargeError,
  429: ThrottledError,
  503: ServiceUnavailableError,
};

// Used when the body carries no code (HEAD answers, API Gateway's own `{"message": ...}`).
const fallbackCodeByStatus: Readonly<Record<number, string>> = {
  400: 'http.badRequest',
  401: 'http.unauthorized',
  403: 'http.forbidden',
  404: 'http.notFound',
  409: 'http.conflict',
  410: 'http.gone',
  412: 'http.preconditionFailed',
  413: 'http.payloadTooLarge',
  429: 'http.throttled',
  500: 'http.internalError',
  502: 'http.badGateway',
  503: 'http.serviceUnavailable',
  504: 'http.gatewayTimeout',
};

/**
 * The parts of an error response the mapping looks at.
 *
 * @example
 * ```ts
 * const parts: ErrorResponseParts = { status: 503, body: new Uint8Array(), headers: new Headers({ 'retry-after': '1' }) };
 * ```
 */
export interface ErrorResponseParts {
  status: number;
  /** The response body; the JSON error envelope when the server sent one. */
  body: Uint8Array;
  headers: { get(name: string): string | null };
  /** Code used when the body has none (overrides the `http.*` fallback). */
  fallbackCode?: string;
}

interface ErrorEnvelope {
  code?: string;
  message?: string;
  retryable?: boolean;
  requestId?: string;
  details?: Record<string, unknown>;
}

// Arrays included: a field read from one is undefined, as a missing field is.
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function parseEnvelope(body: Uint8Array): ErrorEnvelope | undefined {
  if (body.byteLength === 0) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(body));
  } catch {
    return undefined;
  }
  if (!isObject(parsed)) return undefined;
  // API Gateway answers `{"message": "..."}` without the envelope.
  const inner = isObject(parsed.error) ? parsed.error : parsed;
  const envelope: ErrorEnvelope = {};
  if (typeof inner.code === 'string') envelope.code = inner.code;
  if (typeof inner.message === 'string') envelope.message = inner.message;
  if (typeof inner.retryable === 'boolean') envelope.retryable = inner.retryable;
  if (typeof inner.requestId === 'string') envelope.requestId = inner.requestId;
  if (isObject(inner.details) && !Array.isArray(inner.details)) envelope.details = inner.details;
  return envelope;
}

/**
 * Parses a `Retry-After` header (delta-seconds or an HTTP date) into seconds, or undefined.
 *
 * @example
 * ```ts
 * parseRetryAfterSeconds('2', Date.now()); // 2
 * ```
 */
export function parseRetryAfterSeconds(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const dateMs = Date.parse(trimmed);
  if (Number.isNaN(dateMs)) return undefined;
  return Math.max(0, (dateMs - nowMs) / 1000);
}

/**
 * Whether the SDK retries an error response of this status: 429, 500, 502, 503 and 504 unless
 * the JSON body says `retryable: false` (a namespace at its storage quota, a write whose outcome
 * is unknown: sending it again cannot help, or may apply it twice); no JSON body means a gateway
 * failure or throttling, which is transient; never any other 4xx.
 *
 * @example
 * ```ts
 * isRetryableStatus(503, undefined); // true
 * isRetryableStatus(429, false);     // false (quota.keys: only a delete frees room)
 * isRetryableStatus(500, false);     // false
 * ```
 */
export function isRetryableStatus(status: number, bodyRetryable: boolean | undefined): boolean {
  if ([429, 500, 502, 503, 504].includes(status)) return bodyRetryable !== false;
  return false;
}

/**
 * Builds the typed error for a non-success response, keeping the server's code and message.
 *
 * @example
 * ```ts
 * const err = errorFromResponse({ status: 404, body, headers: response.headers, nowMs: Date.now() });
 * err instanceof NotFoundError; // true
 * ```
 */
export function errorFromResponse(parts: ErrorResponseParts & { nowMs: number }): RingstoreError {
  const { status } = parts;
  const envelope = parseEnvelope(parts.body);
  const retryable = isRetryableStatus(status, envelope?.retryable);
  const code = envelope?.code ?? parts.fallbackCode ?? fallbackCodeByStatus[status] ?? `http.${status}`;
  const message = envelope?.message ?? `HTTP ${status}`;
  const requestId = envelope?.requestId ?? parts.headers.get('x-amzn-requestid') ?? parts.headers.get('x-request-id') ?? undefined;
  const retryAfterSeconds = parseRetryAfterSeconds(parts.headers.get('retry-after'), parts.nowMs);
  const options: RingstoreErrorOptions = { code, message, status, retryable };
  if (requestId !== undefined) options.requestId = requestId;
  if (retryAfterSeconds !== undefined) options.retryAfterSeconds = retryAfterSeconds;
  const details = envelope?.details;
  if (details !== undefined) options.details = details;
  const txid = typeof details?.txid === 'string' ? { txid: details.txid } : {};
  if (code === 'txn.outcomeUnknown') return new TransactionOutcomeUnknownError({ ...options, ...txid });
  if (code === 'watch.cursorExpired') return new WatchCursorExpiredError(options);
  // The server marks every abort of a transaction, whatever its status, with details.status.
  if (details?.status === 'aborted' && typeof details.reason === 'string') {
    const key = typeof details.key === 'string' ? { key: details.key } : {};
    return new TransactionAbortedError({
      ...options,
      retryable: envelope?.retryable ?? retryable,
      reason: details.reason,
      ...key,
      ...txid,
    });
  }
  const ErrorType = classByStatus[status] ?? (status >= 500 ? ServerError : RingstoreError);
  return new ErrorType(options);
}
