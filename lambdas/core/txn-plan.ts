// A transaction request turned into a plan: one entry per key (several ops on a key fold into one),
// the version each key must be at, the write it ends with, and how each read is answered.
import { RingstoreError } from './errors';
import { sha256Hex } from './digest';
import { tokenOf } from './ring';
import { validateKey } from './validation';

/** `ifVersion: 0` means "the key does not exist" (never written, deleted or expired). */
export type TxnOp =
  | { op: 'get'; key: string }
  | { op: 'put'; key: string; value: Uint8Array; contentType?: string; ifVersion?: number }
  | { op: 'delete'; key: string; ifVersion?: number }
  | { op: 'check'; key: string; ifVersion: number };

export interface TxnLimits {
  keyBytesMax: number;
  /** Operations per transaction. */
  txnOpsMax: number;
  /** Bytes of all values of a transaction together. */
  txnValueBytesMax: number;
  /** Largest value one put may carry (transaction values are kept inline, never in S3). */
  inlineValueBytesMax: number;
  txnTimeoutMsMax: number;
}

export interface PlannedWrite {
  kind: 'put' | 'delete';
  value?: Uint8Array;
  contentType: string;
  size: number;
  sha256: string;
}

export interface KeyPlan {
  key: string;
  token: number;
  /** The version the key must be at when the transaction starts (0: absent). */
  expectVersion?: number;
  /** A delete needs a live key, as a non-transactional DELETE does. */
  mustBeLive: boolean;
  /** The write the transaction leaves on this key; absent for keys it only reads or checks. */
  write?: PlannedWrite;
}

/** How the answer of one `get` op is formed: from the committed value, or from an earlier op of the same transaction. */
export type ReadSource = { from: 'committed'; key: string } | { from: 'transaction'; key: string; write: PlannedWrite };

export interface TxnPlan {
  keys: KeyPlan[];
  /** One entry per `get` op, in request order. */
  reads: ReadSource[];
  kind: 'readOnly' | 'writeOnly' | 'readWrite';
}

export function planTransaction(namespace: string, ops: readonly TxnOp[], limits: TxnLimits): TxnPlan {
  if (ops.length === 0) throw invalid('a transaction needs at least one op', 'ops');
  if (ops.length > limits.txnOpsMax) throw invalid(`a transaction has at most ${limits.txnOpsMax} ops (got ${ops.length})`, 'ops');
  let valueBytes = 0;
  const byKey = new Map<string, KeyPlan>();
  const reads: ReadSource[] = [];
  ops.forEach((op, index) => {
    const field = `ops.${index}`;
    try {
      validateKey(op.key, limits);
    } catch (error) {
      throw invalid(`${field}.key: ${(error as Error).message}`, `${field}.key`);
    }
    const plan = byKey.get(op.key) ?? { key: op.key, token: tokenOf(namespace, op.key), mustBeLive: false };
    byKey.set(op.key, plan);
    const expect = (version: number | undefined) => {
      if (version === undefined) return;
      if (!Number.isInteger(version) || version < 0) throw invalid(`${field}.ifVersion must be an integer >= 0`, `${field}.ifVersion`);
      // Conditions refer to the version before the transaction; two that differ can never both hold.
      if (plan.expectVersion !== undefined && plan.expectVersion !== version) {
        throw invalid(`${field}: key ${op.key} is required at version ${plan.expectVersion} and ${version}`, `${field}.ifVersion`);
      }
      plan.expectVersion = version;
    };
    switch (op.op) {
      case 'get':
        reads.push(plan.write ? { from: 'transaction', key: op.key, write: plan.write } : { from: 'committed', key: op.key });
        break;
      case 'check':
        expect(op.ifVersion);
        break;
      case 'put': {
        expect(op.ifVersion);
        const size = op.value.byteLength;
        if (size > limits.inlineValueBytesMax) {
          throw new RingstoreError(
            'kv.valueTooLarge',
            `${field}: a transaction value is at most ${limits.inlineValueBytesMax} bytes (got ${size})`,
            {
              details: { field: `${field}.value`, size, limit: limits.inlineValueBytesMax },
            },
          );
        }
        valueBytes += size;
        plan.write = {
          kind: 'put',
          value: op.value,
          contentType: op.contentType ?? 'application/octet-stream',
          size,
          sha256: sha256Hex(op.value),
        };
        break;
      }
      case 'delete':
        expect(op.ifVersion);
        // Deleting a key the transaction itself wrote is fine; otherwise the key must exist.
        if (!plan.write) plan.mustBeLive = true;
        plan.write = { kind: 'delete', contentType: '', size: 0, sha256: '' };
        break;
    }
  });
  if (valueBytes > limits.txnValueBytesMax) {
    throw new RingstoreError(
      'request.tooLarge',
      `a transaction carries at most ${limits.txnValueBytesMax} bytes of values (got ${valueBytes})`,
      {
        details: { field: 'ops', size: valueBytes, limit: limits.txnValueBytesMax },
      },
    );
  }
  const keys = [...byKey.values()];
  const writes = keys.filter((plan) => plan.write).length;
  const kind = writes === 0 ? 'readOnly' : reads.length === 0 && keys.every((plan) => plan.write) ? 'writeOnly' : 'readWrite';
  return { keys, reads, kind };
}

function invalid(message: string, field: string): RingstoreError {
  return new RingstoreError('request.invalid', message, { details: { field } });
}
