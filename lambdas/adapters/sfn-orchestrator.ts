// Orchestrator on AWS Step Functions: an Express state machine run synchronously (StartSyncExecution),
// so the API answers with the transaction's outcome while every step is retried and recorded.
import { SFNClient, StartSyncExecutionCommand } from '@aws-sdk/client-sfn';
import { RingstoreError } from '../core/errors';
import type { Orchestrator, TxnExecution, TxnOutcome } from '../ports';
import { translateAwsError } from './aws-errors';

export class SfnOrchestrator implements Orchestrator {
  constructor(
    private readonly client: SFNClient,
    private readonly stateMachineArn: string,
  ) {}

  async run(execution: TxnExecution): Promise<TxnOutcome> {
    let result;
    try {
      result = await this.client.send(
        new StartSyncExecutionCommand({
          stateMachineArn: this.stateMachineArn,
          name: execution.txid,
          input: JSON.stringify({ execution }),
        }),
      );
    } catch (error) {
      throw translateAwsError(error, `transaction ${execution.txid}`);
    }
    if (result.status === 'SUCCEEDED' && result.output) return JSON.parse(result.output) as TxnOutcome;
    throw outcomeUnknown(execution, `${result.status ?? 'unknown'}: ${result.error ?? ''} ${result.cause ?? ''}`.trim());
  }
}

/** The coordinator stopped before answering: the sweeper finishes the transaction after its deadline. */
export function outcomeUnknown(execution: TxnExecution, detail: string): RingstoreError {
  return new RingstoreError(
    'txn.outcomeUnknown',
    `transaction ${execution.txid} stopped before its outcome was known (${detail}); it is committed or aborted as a whole ` +
      `by ${new Date(execution.deadlineMs).toISOString()} plus one sweep, so read its keys strongly before retrying`,
    { details: { txid: execution.txid, deadline: new Date(execution.deadlineMs).toISOString() } },
  );
}
