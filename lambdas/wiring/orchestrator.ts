// The workflow starters (transactions, failovers, DR promotions) and their Step Functions client, in their own module
// so that only the handlers that start workflows bundle the client.
import { SfnFailoverStarter } from '../adapters/sfn-failover-starter';
import { SfnOrchestrator } from '../adapters/sfn-orchestrator';
import { SfnPromotionStarter } from '../adapters/sfn-promotion-starter';
import type { FailoverStarter, Orchestrator, PromotionStarter } from '../ports';
import { SFNClient } from '@aws-sdk/client-sfn';
import { clientOptions, withoutRequestLogging } from './clients';
import { traced } from './observability';
import type { Wiring } from './wiring';

export function sfnClient(wiring: Wiring): SFNClient {
  return wiring.shared('sfn', () => traced(wiring, withoutRequestLogging(new SFNClient(clientOptions(wiring, undefined)))));
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

/** Step Functions when the config names the failover state machine; otherwise what the host passed in, if anything. */
export function failoverStarter(wiring: Wiring): FailoverStarter | undefined {
  if (wiring.failovers) return wiring.failovers;
  const arn = wiring.config.failoverStateMachineArn;
  if (!arn) return undefined;
  const automatic = wiring.config.autoFailover && wiring.spec?.startsAutomaticFailovers === true;
  if (wiring.spec && !wiring.spec.startsFailovers && !automatic) {
    throw new Error(
      `handler ${wiring.spec.name} may not start failovers: its HandlerSpec says neither startsFailovers nor startsAutomaticFailovers`,
    );
  }
  return wiring.shared('failoverStarter', () => new SfnFailoverStarter(sfnClient(wiring), arn));
}

/** Step Functions when the config names a DR backup's promotion state machine; otherwise undefined. */
export function sfnPromotionStarter(wiring: Wiring): PromotionStarter | undefined {
  const { dr } = wiring.config;
  if (dr.role !== 'backup' || !dr.promotionStateMachineArn) return undefined;
  const arn = dr.promotionStateMachineArn;
  return wiring.shared('promotionStarter', () => new SfnPromotionStarter(sfnClient(wiring), arn));
}
