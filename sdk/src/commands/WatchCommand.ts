// GET /v1/watch: one page of the namespace's change feed after a cursor, by key prefix, with a long poll. The
// iteration that follows cursors, resumes after failures and drops repeats is `client.watch` (src/watch.ts).

import { assertInteger, base64ToBytes } from '../encoding';
import { ValidationError } from '../errors';
import { KEY_BYTES_MAX, WATCH_LIMIT_MAX, WATCH_WAIT_SECONDS_MAX } from '../limits';
import { type CommandContext, invalidInput, RingstoreCommand } from './command';
import { invalidResponse, readJson, wire, type WireOf } from './response';

/** The longest cursor the server takes (schemas/watch.ts). */
const CURSOR_CHARS_MAX = 4096;

/**
 * Input of {@link WatchCommand}.
 *
 * @example
 * ```ts
 * const input: WatchCommandInput = { prefix: 'orders/', cursor: saved, waitSeconds: 20, limit: 100 };
 * ```
 */
export interface WatchCommandInput {
  /** Only changes of keys that start with this; empty or absent: the whole namespace. */
  prefix?: string;
  /** Where the last page (or a change in it) ended; absent: from now. */
  cursor?: string;
  /** When there is no change yet, how long the server waits for one (a long poll), 0 to {@link WATCH_WAIT_SECONDS_MAX}; default 0. */
  waitSeconds?: number;
  /** Changes per page, 1 to {@link WATCH_LIMIT_MAX}; server default 100. */
  limit?: number;
}

/**
 * What a change did to its key: `put` a write (a put, an increment, an upload's commit, a transaction's write),
 * `delete` a delete (its tombstone has a version), `expire` the store removed the key when its TTL passed (on AWS).
 *
 * @example
 * ```ts
 * const operation: WatchOperation = 'delete';
 * ```
 */
export type WatchOperation = 'put' | 'delete' | 'expire';

/**
 * One change of a key, as a watch delivers it, with the cursor that continues after it.
 *
 * @example
 * ```ts
 * const change: WatchChange = { key: 'orders/1', version: 3, operation: 'put', contentType: 'text/plain', size: 2,
 *   value: new TextEncoder().encode('ok'), cursor: 'w1.…' };
 * ```
 */
export interface WatchChange {
  key: string;
  /** The version the change made; an `expire` carries the version that expired. */
  version: number;
  operation: WatchOperation;
  contentType: string;
  /** Bytes of the value (0 for a delete). */
  size: number;
  /** A put's value, when it is at most {@link WATCH_INLINE_VALUE_BYTES_MAX} bytes. */
  value?: Uint8Array;
  /** A put of a larger value: read it with `get` (a later version may be there by then). */
  valueOmitted?: true;
  /** The transaction that wrote it: the changes of one transaction share it. */
  txid?: string;
  /** When the key's owner stored the version (ISO 8601). */
  modifiedAt?: string;
  /** When the key expires (ISO 8601), if it has a TTL. */
  expiresAt?: string;
  /** Where to continue from to get the changes after this one. */
  cursor: string;
}

/**
 * One page of the feed: its changes in feed order (possibly none) and the cursor to continue from, which moves with
 * time even when there are no changes.
 *
 * @example
 * ```ts
 * const { changes, cursor }: WatchCommandOutput = await client.send(new WatchCommand({ prefix: 'orders/' }));
 * ```
 */
export interface WatchCommandOutput {
  changes: WatchChange[];
  cursor: string;
}

const changeWire = wire.object({
  key: wire.string,
  version: wire.number,
  operation: wire.literal('put', 'delete', 'expire'),
  contentType: wire.string,
  size: wire.number,
  value: wire.optional(wire.string),
  valueOmitted: wire.optional(wire.literal(true)),
  txid: wire.optional(wire.string),
  modifiedAt: wire.optional(wire.string),
  expiresAt: wire.optional(wire.string),
  cursor: wire.string,
});

/**
 * Reader of a watch page (`WatchResponse` in the OpenAPI document).
 *
 * @example
 * ```ts
 * const { changes, cursor }: WatchWire = readJson(response, watchWire);
 * ```
 */
export const watchWire = wire.object({ changes: wire.array(changeWire), cursor: wire.string });

/**
 * A watch page as the SDK reads it off the wire (values still base64).
 *
 * @example
 * ```ts
 * const page: WatchWire = { changes: [], cursor: 'w1.…' };
 * ```
 */
export type WatchWire = WireOf<typeof watchWire>;

/** A prefix the server takes: a string of at most 1024 characters (its bound, a key's in bytes) that a URL can carry. */
function assertPrefix(prefix: unknown): void {
  if (typeof prefix !== 'string' || prefix.length > KEY_BYTES_MAX) {
    throw invalidInput(`prefix must be a string of at most ${KEY_BYTES_MAX} characters`);
  }
  try {
    encodeURIComponent(prefix);
  } catch (cause) {
    // A lone surrogate has no UTF-8 form: the query could not carry it.
    throw new ValidationError({
      code: 'client.invalidInput',
      message: 'prefix is not well-formed Unicode',
      status: 0,
      retryable: false,
      cause,
    });
  }
}

/**
 * Checks a watch's input as the server would, before any request: a prefix of at most 1024 characters, a cursor of 1 to
 * 4096 characters, `waitSeconds` 0..{@link WATCH_WAIT_SECONDS_MAX}, `limit` 1..{@link WATCH_LIMIT_MAX}.
 *
 * @example
 * ```ts
 * assertWatchInput({ prefix: 'orders/', waitSeconds: 20 });
 * ```
 */
export function assertWatchInput(input: WatchCommandInput): void {
  const { prefix, cursor, waitSeconds, limit } = input;
  if (prefix !== undefined) assertPrefix(prefix);
  if (cursor !== undefined && (typeof cursor !== 'string' || cursor === '' || cursor.length > CURSOR_CHARS_MAX)) {
    throw invalidInput(`cursor must be a non-empty string of at most ${CURSOR_CHARS_MAX} characters (a cursor a watch gave)`);
  }
  if (waitSeconds !== undefined) assertInteger('waitSeconds', waitSeconds, 0, WATCH_WAIT_SECONDS_MAX);
  if (limit !== undefined) assertInteger('limit', limit, 1, WATCH_LIMIT_MAX);
}

/**
 * Reads one page of the namespace's changes after a cursor (`GET /v1/watch`), waiting up to `waitSeconds` for a
 * first change when there is none yet. Delivery is at least once: a change may come again (same key and version).
 * Most callers want `client.watch`, which follows the cursor, resumes after failures and drops repeats.
 * A cursor past the feed's retention throws {@link WatchCursorExpiredError}.
 *
 * @example
 * ```ts
 * const page = await client.send(new WatchCommand({ prefix: 'orders/', cursor: saved, waitSeconds: 20 }));
 * for (const change of page.changes) console.log(change.operation, change.key, change.version);
 * saved = page.cursor;
 * ```
 */
export class WatchCommand extends RingstoreCommand<WatchCommandInput, WatchCommandOutput> {
  constructor(input: WatchCommandInput = {}) {
    super(input);
  }

  override async execute({ transport, signal }: CommandContext): Promise<WatchCommandOutput> {
    assertWatchInput(this.input);
    const { prefix, cursor, waitSeconds, limit } = this.input;
    const response = await transport.send(
      {
        method: 'GET',
        path: '/v1/watch',
        query: { prefix: prefix === '' ? undefined : prefix, cursor, waitSeconds, limit },
        authenticated: true,
        holdMs: (waitSeconds ?? 0) * 1000,
      },
      signal,
    );
    const page = readJson(response, watchWire);
    const changes = page.changes.map(({ value, ...change }) => {
      if (value === undefined) return change;
      try {
        return { ...change, value: base64ToBytes(value) };
      } catch (cause) {
        throw invalidResponse(response, `the value of ${change.key} (version ${change.version}) is not base64`, cause);
      }
    });
    return { changes, cursor: page.cursor };
  }
}
