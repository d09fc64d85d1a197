// The transaction orchestrator and its Step Functions client, in their own module so that only the
// handler that starts transactions bundles the client.
import { SfnOrchestrator } from '../adapters/sfn-orchestrator';
import type { Orchestrator } from '../ports';
import { SFNClient } from '@aws-sdk/client-sfn';
import { clientOptions } from './clients';
import type { Wiring } from './wiring';

function sfnClient(wiring: Wiring): SFNClient {
  return wiring.shared('sfn', () => new SFNClient(clientOptions(wiring, undefined)));
}

/** Step Functions when the config names the state machine; otherwise what the host passed in. */
export function orchestrator(wiring: Wiring): Orchestrator {
  if (wiring.spec && !wiring.spec.startsTransactions) {
    throw new Error(`handler ${wiring.spec.name} may not start transactions: its HandlerSpec does not say startsTransactions`);
  }
  return wiring.shared('orchestrator', () => {
    if (wiring.orchestrator) return wiring.orchestrator;
    const arn = wiring.config.txnStateMachineArn;
    if (!arn) throw new Error('no transaction state machine: set RINGSTORE_TXN_STATE_MACHINE_ARN, or pass an orchestrator in');
    return new SfnOrchestrator(sfnClient(wiring), arn);
  });
}
