// Limits of the REST contract and of the SDK's own behaviour, each named once. The server enforces
// the same contract numbers; the SDK checks them early to fail before a round trip.
// They restate schemas/topology.ts because the SDK is published alone and cannot import it;
// sdk/test/contract-drift.test.ts fails when one of them differs from the server's.

/**
 * Largest value a key can hold: 10 MiB. Larger values are refused client-side.
 *
 * @example
 * ```ts
 * if (bytes.byteLength > VALUE_BYTES_MAX) throw new Error('too big for Ringstore');
 * ```
 */
export const VALUE_BYTES_MAX = 10 * 1024 * 1024;

/**
 * Largest value sent in the body of `PUT /v1/kv/{key}`: 4 MiB. Larger values go through the
 * presigned upload flow (a Lambda event is at most 6 MB).
 *
 * @example
 * ```ts
 * const usesUpload = bytes.byteLength > DIRECT_BODY_BYTES_MAX;
 * ```
 */
export const DIRECT_BODY_BYTES_MAX = 4 * 1024 * 1024;

/**
 * Longest key, in UTF-8 bytes.
 *
 * @example
 * ```ts
 * new TextEncoder().encode(key).byteLength <= KEY_BYTES_MAX;
 * ```
 */
export const KEY_BYTES_MAX = 1024;

/**
 * Longest content type a value may carry, in characters (a media type such as `text/plain; charset=utf-8`).
 *
 * @example
 * ```ts
 * contentType.length <= CONTENT_TYPE_CHARS_MAX;
 * ```
 */
export const CONTENT_TYPE_CHARS_MAX = 256;

/**
 * Largest page `list` may ask for.
 *
 * @example
 * ```ts
 * await client.list({ limit: LIST_LIMIT_MAX });
 * ```
 */
export const LIST_LIMIT_MAX = 1000;

/**
 * Attempts per request (first try included) when `maxAttempts` is not given.
 *
 * @example
 * ```ts
 * new RingstoreClient({ endpoint, apiKey, maxAttempts: DEFAULT_MAX_ATTEMPTS + 2 });
 * ```
 */
export const DEFAULT_MAX_ATTEMPTS = 3;

/**
 * Upper bound accepted for `maxAttempts`, so a misconfiguration cannot retry forever.
 *
 * @example
 * ```ts
 * new RingstoreClient({ endpoint, apiKey, maxAttempts: MAX_ATTEMPTS_LIMIT });
 * ```
 */
export const MAX_ATTEMPTS_LIMIT = 10;

/**
 * Base of the exponential backoff: the first retry waits up to this long.
 *
 * @example
 * ```ts
 * backoffDelayMs(1, Math.random) < RETRY_BASE_DELAY_MS; // true
 * ```
 */
export const RETRY_BASE_DELAY_MS = 50;

/**
 * Cap of the exponential backoff: no jittered wait is longer.
 *
 * @example
 * ```ts
 * backoffDelayMs(20, Math.random) < RETRY_MAX_DELAY_MS; // true
 * ```
 */
export const RETRY_MAX_DELAY_MS = 2000;

/**
 * Longest `Retry-After` the SDK waits out by itself; a longer one is thrown to the caller at once
 * (with `retryAfterSeconds`) instead of blocking it.
 *
 * @example
 * ```ts
 * // a 503 with `Retry-After: 60` is not retried; err.retryAfterSeconds === 60
 * ```
 */
export const RETRY_AFTER_MAX_MS = 20_000;

/**
 * Per-attempt timeout when `requestTimeoutMs` is not given (API Gateway gives up at 29 s).
 *
 * @example
 * ```ts
 * new RingstoreClient({ endpoint, apiKey, requestTimeoutMs: DEFAULT_REQUEST_TIMEOUT_MS * 2 });
 * ```
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/**
 * Most pages `listAll` walks before giving up (1000 pages of 1000 keys = a million keys).
 *
 * @example
 * ```ts
 * for await (const page of client.listAll({ limit: 1000 })) console.log(page.items.length);
 * ```
 */
export const LIST_ALL_PAGES_MAX = 1000;

/**
 * Most ops (`get`, `put`, `delete`, `check`) in one transaction.
 *
 * @example
 * ```ts
 * if (ops.length > TXN_OPS_MAX) throw new Error('split the transaction');
 * ```
 */
export const TXN_OPS_MAX = 1000;

/**
 * Most bytes of values all the `put`s of one transaction may carry together: 160 KiB (the plan
 * travels through the server's workflow state). The values its `get`s return have the same bound.
 *
 * @example
 * ```ts
 * const bytes = puts.reduce((sum, op) => sum + new TextEncoder().encode(op.value).byteLength, 0);
 * bytes <= TXN_VALUE_BYTES_MAX;
 * ```
 */
export const TXN_VALUE_BYTES_MAX = 160 * 1024;

/**
 * Shortest deadline (`timeoutMs`) a transaction may ask for.
 *
 * @example
 * ```ts
 * await client.transact(ops, { timeoutMs: TXN_TIMEOUT_MS_MIN });
 * ```
 */
export const TXN_TIMEOUT_MS_MIN = 100;

/**
 * Longest deadline (`timeoutMs`) a transaction may ask for; the server's default is 5 s.
 *
 * @example
 * ```ts
 * await client.transact(ops, { timeoutMs: TXN_TIMEOUT_MS_MAX });
 * ```
 */
export const TXN_TIMEOUT_MS_MAX = 20_000;

/**
 * Upper bound of `conflictRetries`, so a hot key cannot make a transaction retry forever.
 *
 * @example
 * ```ts
 * await client.transact(ops, { conflictRetries: TXN_CONFLICT_RETRIES_MAX });
 * ```
 */
export const TXN_CONFLICT_RETRIES_MAX = 10;

/**
 * Most keys one `batchGet` reads (`POST /v1/batch/get`); each is read as a `get` would read it.
 *
 * @example
 * ```ts
 * for (let i = 0; i < keys.length; i += BATCH_GET_KEYS_MAX) await client.batchGet(keys.slice(i, i + BATCH_GET_KEYS_MAX));
 * ```
 */
export const BATCH_GET_KEYS_MAX = 100;

/**
 * A block volume's block: 4 KiB. A volume's size is a multiple of it; unwritten blocks read as zeros.
 *
 * @example
 * ```ts
 * await client.createVolume('disk', 1024 * VOLUME_BLOCK_BYTES); // 4 MiB
 * ```
 */
export const VOLUME_BLOCK_BYTES = 4096;

/**
 * Largest read, write or trim of one volume request: 256 KiB, at any offset, atomic. The `Volume` handle of
 * `client.volume(name)` splits a larger one into consecutive requests of at most this size.
 *
 * @example
 * ```ts
 * await client.send(new ReadVolumeCommand({ volume: 'disk', offset: 0, length: VOLUME_IO_BYTES_MAX }));
 * ```
 */
export const VOLUME_IO_BYTES_MAX = 256 * 1024;

/**
 * Longest long poll of one watch request: the server holds a request that finds no change this many seconds
 * at most (well within API Gateway's 29 s). `client.watch` asks for it by default.
 *
 * @example
 * ```ts
 * client.watch('orders/', { waitSeconds: WATCH_WAIT_SECONDS_MAX });
 * ```
 */
export const WATCH_WAIT_SECONDS_MAX = 20;

/**
 * Most changes one watch request answers.
 *
 * @example
 * ```ts
 * client.watch('orders/', { limit: WATCH_LIMIT_MAX });
 * ```
 */
export const WATCH_LIMIT_MAX = 1000;

/**
 * Largest value a change carries inline (`value`); a larger put comes with `valueOmitted: true`, to read with `get`.
 *
 * @example
 * ```ts
 * if (change.valueOmitted) console.log((await client.get(change.key)).text());
 * ```
 */
export const WATCH_INLINE_VALUE_BYTES_MAX = 512;

/**
 * Keys whose last delivered version `client.watch` remembers to drop repeated changes; past it, the key changed
 * least recently is forgotten (a repeat of its change would then be delivered again). Memory: the keys themselves
 * and a few numbers each.
 *
 * @example
 * ```ts
 * client.watch('', { rememberedKeysMax: WATCH_REMEMBERED_KEYS_MAX * 2 });
 * ```
 */
export const WATCH_REMEMBERED_KEYS_MAX = 100_000;
