// RingstoreClient: the class callers construct. Its connection (settings, `send`) and the admin methods come
// from the classes it extends, one concern each (client-connection, client-access, client-cluster, client-volumes); this
// file adds the key-value methods, for callers who prefer `client.get(key)` to `client.send(new GetCommand(...))`,
// and `watch`, the change feed as an async iterable (watch.ts).

import {
  BatchGetCommand,
  type BatchGetCommandInput,
  type BatchGetCommandOutput,
  DeleteCommand,
  type DeleteCommandInput,
  type DeleteCommandOutput,
  GetCommand,
  type GetCommandInput,
  type GetCommandOutput,
  HeadCommand,
  type HeadCommandInput,
  type HeadCommandOutput,
  IncrementCommand,
  type IncrementCommandInput,
  type IncrementCommandOutput,
  ListCommand,
  type ListCommandInput,
  type ListCommandOutput,
  PutCommand,
  type PutCommandInput,
  type PutCommandOutput,
  RingCommand,
  type RingCommandOutput,
  TransactCommand,
  type TransactCommandInput,
  type TransactCommandOutput,
  type TransactOp,
  WatchCommand,
} from './commands';
import { RingstoreVolumesClient } from './client-volumes';
import type { SendOptions } from './client-connection';
import { RingstoreError } from './errors';
import { LIST_ALL_PAGES_MAX } from './limits';
import { type WatchOptions, WatchStream } from './watch';

export type { RingstoreClientConfig, SendOptions } from './client-connection';

function splitSendOptions<T extends SendOptions>(options: T | undefined): [Omit<T, 'abortSignal'>, SendOptions] {
  const { abortSignal, ...rest } = options ?? ({} as T);
  return [rest, abortSignal === undefined ? {} : { abortSignal }];
}

/**
 * Client of the Ringstore REST API. Stateless apart from its settings; share one per process.
 *
 * @example
 * ```ts
 * import { RingstoreClient, GetCommand, NotFoundError } from '@ringstore/sdk';
 *
 * const client = new RingstoreClient({ endpoint: 'http://127.0.0.1:4510', apiKey: 'rs_…' });
 * await client.put('greeting', 'hello');
 * const item = await client.send(new GetCommand({ key: 'greeting' }));
 * console.log(item.text(), item.version);
 * ```
 */
export class RingstoreClient extends RingstoreVolumesClient {
  /**
   * Reads a key. Throws {@link NotFoundError} when it does not exist.
   *
   * @example
   * ```ts
   * const item = await client.get('greeting', { consistency: 'strong' });
   * console.log(item.text(), item.contentType, item.version);
   * ```
   */
  get(key: string, options?: Omit<GetCommandInput, 'key'> & SendOptions): Promise<GetCommandOutput> {
    const [input, send] = splitSendOptions(options);
    return this.send(new GetCommand({ ...input, key }), send);
  }

  /**
   * Reads up to 100 keys in one request, in the order given; a missing key is `found: false`.
   *
   * @example
   * ```ts
   * const { items } = await client.batchGet(['users/1', 'users/2'], { consistency: 'strong' });
   * for (const item of items) console.log(item.key, item.found ? item.text() : '(not found)');
   * ```
   */
  batchGet(keys: readonly string[], options?: Omit<BatchGetCommandInput, 'keys'> & SendOptions): Promise<BatchGetCommandOutput> {
    const [input, send] = splitSendOptions(options);
    return this.send(new BatchGetCommand({ ...input, keys }), send);
  }

  /**
   * Writes a key (up to 10 MiB; large values are uploaded through S3 transparently).
   *
   * @example
   * ```ts
   * const { version } = await client.put('session/abc', JSON.stringify({ user: 42 }), {
   *   contentType: 'application/json',
   *   ttlSeconds: 3600,
   * });
   * await client.put('session/abc', '{}', { ifMatch: version }); // optimistic concurrency
   * ```
   */
  put(key: string, value: Uint8Array | string, options?: Omit<PutCommandInput, 'key' | 'value'> & SendOptions): Promise<PutCommandOutput> {
    const [input, send] = splitSendOptions(options);
    return this.send(new PutCommand({ ...input, key, value }), send);
  }

  /**
   * Adds `by` (default 1; negative to decrement) to a key's decimal counter, atomically; a missing key counts as 0.
   * Not retried after a failure that may have applied (a retry could add twice); `ifMatch` makes it conditional.
   *
   * @example
   * ```ts
   * const { value, version } = await client.increment('hits/home');
   * await client.increment('stock/42', -1, { ifMatch: version, consistency: 'strong' });
   * ```
   */
  increment(key: string, by = 1, options?: Omit<IncrementCommandInput, 'key' | 'by'> & SendOptions): Promise<IncrementCommandOutput> {
    const [input, send] = splitSendOptions(options);
    return this.send(new IncrementCommand({ ...input, key, by }), send);
  }

  /**
   * Deletes a key. Throws {@link NotFoundError} when it does not exist.
   *
   * @example
   * ```ts
   * await client.delete('session/abc', { ifMatch: 4 });
   * ```
   */
  delete(key: string, options?: Omit<DeleteCommandInput, 'key'> & SendOptions): Promise<DeleteCommandOutput> {
    const [input, send] = splitSendOptions(options);
    return this.send(new DeleteCommand({ ...input, key }), send);
  }

  /**
   * Reads a key's metadata without its value.
   *
   * @example
   * ```ts
   * const { version, size } = await client.head('video.mp4');
   * ```
   */
  head(key: string, options?: Omit<HeadCommandInput, 'key'> & SendOptions): Promise<HeadCommandOutput> {
    const [input, send] = splitSendOptions(options);
    return this.send(new HeadCommand({ ...input, key }), send);
  }

  /**
   * Lists one page of keys.
   *
   * @example
   * ```ts
   * const { items, cursor } = await client.list({ prefix: 'users/', limit: 100 });
   * ```
   */
  list(options?: ListCommandInput & SendOptions): Promise<ListCommandOutput> {
    const [input, send] = splitSendOptions(options);
    return this.send(new ListCommand(input), send);
  }

  /**
   * Walks every page of a listing, following cursors; yields pages.
   *
   * @example
   * ```ts
   * for await (const page of client.listAll({ prefix: 'users/' })) {
   *   for (const item of page.items) console.log(item.key, item.size);
   * }
   * ```
   */
  async *listAll(options?: Omit<ListCommandInput, 'cursor'> & SendOptions): AsyncGenerator<ListCommandOutput, void, undefined> {
    const [input, send] = splitSendOptions(options);
    let cursor: string | undefined;
    for (let pages = 0; pages < LIST_ALL_PAGES_MAX; pages++) {
      const page = await this.send(new ListCommand(cursor === undefined ? input : { ...input, cursor }), send);
      yield page;
      if (page.cursor === undefined) return;
      if (page.cursor === cursor) {
        throw new RingstoreError({
          code: 'response.invalid',
          message: 'the server returned the same cursor twice',
          status: 200,
          retryable: false,
        });
      }
      cursor = page.cursor;
    }
    throw new RingstoreError({
      code: 'client.tooManyPages',
      message: `listAll stopped after ${LIST_ALL_PAGES_MAX} pages`,
      status: 0,
      retryable: false,
    });
  }

  /**
   * Runs ops atomically over any keys of the namespace: all commit or none do. Resolves with the
   * version of each written key and one read per `get` op (bytes, with `text()` and `json()`).
   * Rejects with {@link TransactionAbortedError} (nothing was written; `reason`, `key`, `txid`
   * say why) or {@link TransactionOutcomeUnknownError} (it may have committed: read the keys
   * strongly before running it again). The SDK never repeats a transaction on its own, except
   * after a conflict when `conflictRetries` is given.
   *
   * @example
   * ```ts
   * const { writes, reads } = await client.transact([
   *   { op: 'check', key: 'config', ifVersion: 3 },
   *   { op: 'put', key: 'balance/a', value: '90', ifVersion: 7 },
   *   { op: 'put', key: 'balance/b', value: '110', ifVersion: 2 },
   *   { op: 'get', key: 'limits' },
   * ], { timeoutMs: 2000, conflictRetries: 3 });
   * const limits = reads[0];
   * if (limits?.found) console.log(limits.text(), writes);
   * ```
   */
  transact(ops: readonly TransactOp[], options?: Omit<TransactCommandInput, 'ops'> & SendOptions): Promise<TransactCommandOutput> {
    const [input, send] = splitSendOptions(options);
    return this.send(new TransactCommand({ ...input, ops }), send);
  }

  /**
   * Watches the changes of the keys that start with `prefix` ('' for the whole namespace), from `cursor` or from now:
   * every acknowledged put, delete and expiry, each key's in version order, repeats dropped. The stream long-polls,
   * resumes by itself after transient failures from its last cursor, and ends when `abortSignal` aborts; its
   * `cursor` is where to continue from later. A cursor older than the feed's retention (24 h by default) throws
   * {@link WatchCursorExpiredError}. See {@link WatchStream}.
   *
   * @example
   * ```ts
   * const changes = client.watch('orders/', { cursor: await loadCursor() });
   * for await (const change of changes) {
   *   if (change.operation === 'put') console.log(change.key, change.version, change.value ?? '(read it with get)');
   *   else console.log(change.operation, change.key);
   *   await saveCursor(changes.cursor);
   * }
   * ```
   */
  watch(prefix = '', options?: WatchOptions): WatchStream {
    return new WatchStream(
      {
        page: (input, abortSignal) => this.send(new WatchCommand(input), abortSignal === undefined ? {} : { abortSignal }),
        pause: (retry, abortSignal, atLeastMs) => this.transport.backoff(retry, abortSignal, atLeastMs),
      },
      prefix,
      options,
    );
  }

  /**
   * Describes the ring: epoch, shards, token ranges with owners and replicas.
   *
   * @example
   * ```ts
   * const ring = await client.ring();
   * for (const range of ring.ranges) console.log(range.start, range.end, range.replicas);
   * ```
   */
  ring(options?: SendOptions): Promise<RingCommandOutput> {
    return this.send(new RingCommand(), options);
  }
}
