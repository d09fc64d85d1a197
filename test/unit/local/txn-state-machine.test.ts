// The transaction state machine's paths (schemas/txn-state-machine.asl.json), run by the local Step
// Functions with a scripted task: which steps a transaction goes through after its decision.
import { join } from 'node:path';
import { localTransactionOrchestrator } from '../../../cdk/local/state-machine';
import type { TxnExecution } from '../../../lambdas/ports';

const root = join(__dirname, '..', '..', '..');

function execution(consistency: 'eventual' | 'strong', kind: TxnExecution['kind'] = 'writeOnly'): TxnExecution {
  return {
    txid: '0-test',
    namespace: 'ns',
    consistency,
    createdAtMs: 0,
    deadlineMs: 5_000,
    kind,
    participants: [
      {
        table: 'shard-0',
        keys: [{ key: 'a', position: 0, token: 1, mustBeLive: false, write: { kind: 'put', contentType: 'x', size: 0, sha256: '' } }],
      },
      {
        table: 'shard-1',
        keys: [{ key: 'b', position: 1, token: 2, mustBeLive: false, write: { kind: 'put', contentType: 'x', size: 0, sha256: '' } }],
      },
    ],
    reads: [],
  };
}

/** Runs the machine with tasks that succeed and decide `status`; returns the actions in the order they ran. */
async function actionsOf(input: TxnExecution, status: 'committed' | 'aborted'): Promise<string[]> {
  const actions: string[] = [];
  const task = async (event: { action: string; table?: string }) => {
    actions.push(event.table ? `${event.action} ${event.table}` : event.action);
    if (event.action === 'prepare') return { table: event.table, observed: [] };
    if (event.action === 'decide') return { status, outcome: { status, txid: input.txid, writes: [], reads: [] } };
    return null;
  };
  const outcome = await localTransactionOrchestrator(task, root).run(input);
  expect(outcome.status).toBe(status);
  return actions.sort();
}

describe('the transaction state machine after its decision', () => {
  it('answers an eventual commit at the decision: its intents are applied from the stream, not by the workflow', async () => {
    expect(await actionsOf(execution('eventual'), 'committed')).toEqual(['begin', 'decide', 'prepare shard-0', 'prepare shard-1']);
  });

  it('applies a strong commit on every participant before it answers (the replicas are written then)', async () => {
    expect(await actionsOf(execution('strong'), 'committed')).toEqual([
      'begin',
      'commit shard-0',
      'commit shard-1',
      'decide',
      'prepare shard-0',
      'prepare shard-1',
    ]);
  });

  it("clears an aborted transaction's intents before it answers, whatever its consistency", async () => {
    for (const consistency of ['eventual', 'strong'] as const) {
      expect(await actionsOf(execution(consistency), 'aborted')).toEqual([
        'abort shard-0',
        'abort shard-1',
        'begin',
        'decide',
        'prepare shard-0',
        'prepare shard-1',
      ]);
    }
  });
});
