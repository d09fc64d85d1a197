// An aborted transaction as the client sees it: the error of its reason, naming the key and the txid.
import { RingstoreError } from './errors';
import type { TxnOutcome } from '../ports';

export function txnAbortError(outcome: Extract<TxnOutcome, { status: 'aborted' }>): RingstoreError {
  const details = { txid: outcome.txid, status: 'aborted', reason: outcome.reason, ...(outcome.key ? { key: outcome.key } : {}) };
  const message = `transaction aborted: ${outcome.message}`;
  switch (outcome.reason) {
    case 'precondition':
      return new RingstoreError('kv.preconditionFailed', message, { details });
    case 'notFound':
      return new RingstoreError('kv.notFound', message, { details });
    case 'tooLarge':
      return new RingstoreError('request.tooLarge', message, { details });
    case 'timeout':
      return new RingstoreError('txn.timeout', message, { retryable: true, details });
    case 'unavailable':
      return new RingstoreError('shard.unavailable', message, { retryable: true, details });
    case 'conflict':
      return new RingstoreError('txn.conflict', message, { retryable: true, details });
  }
}
