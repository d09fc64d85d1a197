// The tasks of the transaction state machine (schemas/txn-state-machine.asl.json): one action per
// state, each a call into TransactionService. Domain errors are renamed for the machine's Retry and
// Catch: `Ringstore.Retryable` (throttling, an unreachable shard) or `Ringstore.Failed`.
import middy from '@middy/core';
import { isRingstoreError } from '../core/errors';
import { abortOf, type TransactionService, type PrepareResult } from '../core/transactions';
import type { FaultInjector, Abort, TxnExecution } from '../ports';

export type TxnStepEvent =
  | { action: 'begin'; execution: TxnExecution }
  | { action: 'prepare' | 'commit' | 'abort'; execution: TxnExecution; table: string }
  | { action: 'validate'; execution: TxnExecution; table: string; prepared: PrepareResult }
  | { action: 'decide'; execution: TxnExecution; prepared: PrepareResult[]; validated: Array<{ abort?: Abort }> }
  | { action: 'decideAfterFailure'; execution: TxnExecution; failure: { Error?: string; Cause?: string } };

async function step(txns: TransactionService, faults: FaultInjector | undefined, event: TxnStepEvent): Promise<unknown> {
  switch (event.action) {
    case 'begin':
      await txns.begin(event.execution);
      faults?.reach('txn.afterBegin');
      return null;
    case 'prepare': {
      const prepared = await txns.prepare(event.execution, event.table);
      faults?.reach('txn.afterPrepare');
      return prepared;
    }
    case 'validate':
      return txns.validate(event.execution, event.table, event.prepared);
    case 'decide': {
      const decision = await txns.decide(event.execution, [...event.prepared, ...event.validated]);
      faults?.reach('txn.afterDecide');
      return { ...decision, outcome: txns.outcome(event.execution, event.prepared, decision) };
    }
    case 'decideAfterFailure': {
      const abort = failureAbort(event.failure);
      const decision = await txns.decide(event.execution, [{ abort }]);
      return { ...decision, outcome: txns.outcome(event.execution, [], decision) };
    }
    case 'commit':
      await txns.commit(event.execution, event.table);
      return null;
    case 'abort':
      await txns.abort(event.execution, event.table);
      return null;
  }
}

/** The abort a failed step before the decision stands for, from the machine's error and cause. */
function failureAbort(failure: { Error?: string; Cause?: string }): Abort {
  const message = failure.Cause ?? failure.Error ?? 'a step failed';
  return failure.Error === 'Ringstore.Retryable' ? { reason: 'unavailable', message } : { reason: 'conflict', message };
}

export interface TxnStepDeps {
  txns: TransactionService;
  /** The crash points of a test run; undefined everywhere else. */
  faults: FaultInjector | undefined;
}

export function txnStepHandler({ txns, faults }: TxnStepDeps) {
  return middy<TxnStepEvent, unknown>().handler(async (event) => {
    try {
      return await step(txns, faults, event);
    } catch (error) {
      if (!isRingstoreError(error)) throw error;
      const renamed = new Error(JSON.stringify({ code: error.code, message: error.message, abort: abortOf(error) }));
      renamed.name = error.retryable ? 'Ringstore.Retryable' : 'Ringstore.Failed';
      throw renamed;
    }
  });
}
