// The ops of `ringstore txn`: read from words on the command line or from a JSON file, and the
// committed outcome laid out as text.

import type { TransactCommandOutput, TransactOp } from '../commands';
import { base64ToBytes, bytesToBase64 } from '../encoding';
import { isTextual, showKey, table } from './format';

/**
 * The grammar of ops given as words, for help texts and errors.
 *
 * @example
 * ```ts
 * console.log(TXN_GRAMMAR);
 * ```
 */
export const TXN_GRAMMAR = [
  'get <key>',
  'put <key> <value> [if <version>]',
  'delete <key> [if <version>]',
  'check <key> <version>',
] as const;

/**
 * Parses ops written as words: `get k`, `put k value`, `delete k`, `check k 3`, where `put` and
 * `delete` may end with `if <version>` (the version the key must be at; 0: absent). Every key and
 * value is one word, so keys and values may hold any character. `put` values are returned as
 * written; the caller resolves `@file`.
 *
 * @example
 * ```ts
 * parseTxnWords(['get', 'a', 'put', 'b', 'hello', 'if', '2', 'check', 'c', '0']);
 * // [{ op: 'get', key: 'a' }, { op: 'put', key: 'b', value: 'hello', ifVersion: 2 }, { op: 'check', key: 'c', ifVersion: 0 }]
 * ```
 */
export function parseTxnWords(words: readonly string[]): TransactOp[] {
  const ops: TransactOp[] = [];
  let at = 0;
  const take = (what: string, op: string): string => {
    const word = words[at];
    if (word === undefined) throw new Error(`${op} needs ${what} (ops: ${TXN_GRAMMAR.join(' | ')})`);
    at += 1;
    return word;
  };
  const version = (op: string): number => {
    const word = take('a version', op);
    if (!/^\d{1,15}$/.test(word)) throw new Error(`${op}: version must be an integer >= 0, got ${JSON.stringify(word)}`);
    return Number(word);
  };
  const condition = (op: string): { ifVersion?: number } => {
    if (words[at] !== 'if') return {};
    at += 1;
    return { ifVersion: version(`${op} ... if`) };
  };
  while (at < words.length) {
    const name = words[at++];
    switch (name) {
      case 'get':
        ops.push({ op: 'get', key: take('a key', 'get') });
        break;
      case 'put': {
        const key = take('a key', 'put');
        const value = take('a value', `put ${key}`);
        ops.push({ op: 'put', key, value, ...condition(`put ${key}`) });
        break;
      }
      case 'delete':
      case 'del': {
        const key = take('a key', 'delete');
        ops.push({ op: 'delete', key, ...condition(`delete ${key}`) });
        break;
      }
      case 'check': {
        const key = take('a key', 'check');
        ops.push({ op: 'check', key, ifVersion: version(`check ${key}`) });
        break;
      }
      default:
        throw new Error(`unknown op ${JSON.stringify(name)} at word ${at}: expected ${TXN_GRAMMAR.join(' | ')}`);
    }
  }
  return ops;
}

/**
 * Parses a JSON ops file: the REST body (`{"ops": [...], "timeoutMs"?: n}`) or just the array of
 * ops. A `put` value is text, or base64 with `"encoding": "base64"`, as the REST API takes it.
 *
 * @example
 * ```ts
 * parseTxnFile('[{"op":"put","key":"a","value":"aGk=","encoding":"base64"}]');
 * // { ops: [{ op: 'put', key: 'a', value: Uint8Array [104, 105] }] }
 * ```
 */
export function parseTxnFile(text: string): { ops: TransactOp[]; timeoutMs?: number } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`the ops are not JSON: ${(err as Error).message}`, { cause: err });
  }
  const body = Array.isArray(parsed) ? { ops: parsed } : parsed;
  if (typeof body !== 'object' || body === null || !Array.isArray((body as { ops?: unknown }).ops)) {
    throw new Error('expected {"ops": [...]} or an array of ops');
  }
  const { ops: raw, timeoutMs } = body as { ops: unknown[]; timeoutMs?: unknown };
  if (timeoutMs !== undefined && typeof timeoutMs !== 'number') throw new Error('timeoutMs must be a number');
  const ops = raw.map((entry, index): TransactOp => {
    if (typeof entry !== 'object' || entry === null) throw new Error(`ops[${index}] is not an object`);
    const { encoding, value, ...rest } = entry as Record<string, unknown>;
    if (encoding !== undefined && encoding !== 'utf8' && encoding !== 'base64')
      throw new Error(`ops[${index}].encoding must be utf8 or base64`);
    if (value === undefined) return rest as TransactOp;
    if (typeof value !== 'string') throw new Error(`ops[${index}].value must be a string`);
    return { ...rest, value: encoding === 'base64' ? base64ToBytes(value) : value } as TransactOp;
  });
  return { ops, ...(timeoutMs === undefined ? {} : { timeoutMs }) };
}

function showValue(read: Extract<TransactCommandOutput['reads'][number], { found: true }>): string {
  if (!isTextual(read.contentType, read.value)) return `<${read.value.byteLength} bytes of ${read.contentType}>`;
  const text = read.text();
  // One line per read: a value with line breaks or controls is shown JSON-quoted.
  return /[\u0000-\u001f\u007f]/.test(text) || text === '' || text.trim() !== text ? JSON.stringify(text) : text;
}

/**
 * A committed transaction as text: its id, then one row per key written (`deleted` when the
 * transaction's last write of the key was a delete) and per `get`.
 *
 * @example
 * ```ts
 * console.log(formatTransaction(await client.transact(ops), ops));
 * // committed 0m1…-9f3e (2 writes, 1 read)
 * // wrote    b  version 4
 * // deleted  c  version 2
 * // read     a  version 3  hello
 * ```
 */
export function formatTransaction(output: TransactCommandOutput, ops: readonly TransactOp[]): string {
  const counts = `${output.writes.length} ${output.writes.length === 1 ? 'write' : 'writes'}, ${output.reads.length} ${output.reads.length === 1 ? 'read' : 'reads'}`;
  // One write per key is reported; what the key holds afterwards is what its last write op did.
  const lastWrite = new Map<string, 'put' | 'delete'>();
  for (const op of ops) if (op.op === 'put' || op.op === 'delete') lastWrite.set(op.key, op.op);
  const rows: string[][] = [];
  for (const write of output.writes) {
    rows.push([lastWrite.get(write.key) === 'delete' ? 'deleted' : 'wrote', showKey(write.key), `version ${write.version}`]);
  }
  for (const read of output.reads) {
    if (!read.found) rows.push(['read', showKey(read.key), 'not found']);
    else rows.push(['read', showKey(read.key), read.version === undefined ? 'this txn' : `version ${read.version}`, showValue(read)]);
  }
  return [`committed ${output.txid} (${counts})`, ...(rows.length > 0 ? [table(rows)] : [])].join('\n');
}

/**
 * A committed transaction as the REST API answers it (values base64), for `--json`.
 *
 * @example
 * ```ts
 * JSON.stringify(transactionJson(output), null, 2);
 * ```
 */
export function transactionJson(output: TransactCommandOutput): Record<string, unknown> {
  return {
    status: 'committed',
    txid: output.txid,
    writes: output.writes,
    reads: output.reads.map((read) =>
      read.found
        ? {
            key: read.key,
            found: true,
            ...(read.version === undefined ? {} : { version: read.version }),
            contentType: read.contentType,
            value: bytesToBase64(read.value),
          }
        : { key: read.key, found: false },
    ),
  };
}
