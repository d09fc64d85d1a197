// POST /v1/txn: ops over any keys of the namespace, atomically; the answer is read here and the
// failures that leave the outcome unknown are told apart from definite ones.

import { assertInteger, base64ToBytes, bytesToBase64, encodeKey, toBytes, utf8Decode } from '../encoding';
import { PayloadTooLargeError, RingstoreError, TransactionAbortedError, TransactionOutcomeUnknownError } from '../errors';
import { TXN_CONFLICT_RETRIES_MAX, TXN_OPS_MAX, TXN_TIMEOUT_MS_MAX, TXN_TIMEOUT_MS_MIN, TXN_VALUE_BYTES_MAX } from '../limits';
import type { HttpRequest, HttpResponse } from '../transport';
import { assertConsistency, type CommandContext, type Consistency, invalidInput, RingstoreCommand } from './command';
import { invalidResponse, readJson, wire, type WireOf } from './response';

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
 * {@link GetCommandOutput} has), content type and version; a value an earlier op of the same transaction
 * wrote has the version that write commits as (absent only from a server that does not say).
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

/**
 * Reader of a committed transaction (`TxnCommitted` in the OpenAPI document). Values read arrive
 * base64-encoded; {@link TransactCommand} decodes them.
 *
 * @example
 * ```ts
 * const committed: TxnCommittedWire = readJson(response, txnCommittedWire);
 * ```
 */
export const txnCommittedWire = wire.object({
  // A 200 the SDK does not recognise as a commit must not be taken for one.
  status: wire.literal('committed'),
  writes: wire.array(wire.object({ key: wire.string, version: wire.number })),
  reads: wire.array(
    wire.object({
      key: wire.string,
      found: wire.fallback(wire.boolean, false),
      version: wire.optional(wire.number),
      value: wire.optional(wire.string),
      contentType: wire.optional(wire.string),
    }),
  ),
  txid: wire.string,
});

/**
 * A committed transaction as the SDK reads it off the wire.
 *
 * @example
 * ```ts
 * const committed: TxnCommittedWire = { status: 'committed', txid: 't1', writes: [], reads: [{ key: 'a', found: false }] };
 * ```
 */
export type TxnCommittedWire = WireOf<typeof txnCommittedWire>;

/** The REST body of one op; also checks it as far as the client can. */
function txnOpBody(op: TransactOp, index: number): { body: Record<string, unknown>; valueBytes: number } {
  const where = `ops[${index}]`;
  if (typeof op !== 'object' || op === null) throw invalidInput(`${where} must be an object`);
  encodeKey(op.key);
  // Kept before the switch narrows `op` away: JavaScript callers may send any op name.
  const kind: unknown = op.op;
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
      const { value: raw } = op;
      if (typeof raw !== 'string' && !(raw instanceof Uint8Array)) throw invalidInput(`${where}.value must be a string or a Uint8Array`);
      const contentType = op.contentType ?? (typeof raw === 'string' ? 'text/plain; charset=utf-8' : 'application/octet-stream');
      // Text travels as is (readable in logs); bytes as base64.
      const value = typeof raw === 'string' ? { value: raw } : { value: bytesToBase64(raw), encoding: 'base64' };
      const body = { op: 'put', key: op.key, ...value, contentType, ...version('ifVersion', op.ifVersion) };
      return { body, valueBytes: toBytes(raw).byteLength };
    }
    default:
      throw invalidInput(`${where}.op must be get, put, delete or check, got ${String(kind)}`);
  }
}

function toTransactRead(response: HttpResponse, read: TxnCommittedWire['reads'][number]): TransactRead {
  const { key } = read;
  if (!read.found) return { key, found: false };
  let value: Uint8Array;
  try {
    value = base64ToBytes(read.value ?? '');
  } catch (cause) {
    throw invalidResponse(response, `the value read of ${key} is not base64`, cause);
  }
  return {
    key,
    found: true,
    value,
    contentType: read.contentType !== undefined && read.contentType !== '' ? read.contentType : 'application/octet-stream',
    ...(read.version === undefined ? {} : { version: read.version }),
    text: () => utf8Decode(value),
    // The caller names the type it expects, as with fetch's `response.json()`.
    json: <T>() => JSON.parse(utf8Decode(value)) as T,
  };
}

function readTxnOutput(response: HttpResponse): TransactCommandOutput {
  const committed = readJson(response, txnCommittedWire);
  return { txid: committed.txid, writes: committed.writes, reads: committed.reads.map((read) => toTransactRead(response, read)) };
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
    const { timeoutMs, consistency } = this.input;
    // Checked at run time too: JavaScript callers are not held to the types.
    const ops: readonly TransactOp[] = this.input.ops;
    if (!(Array.isArray(this.input.ops) && ops.length > 0)) throw invalidInput('a transaction needs at least one op');
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
