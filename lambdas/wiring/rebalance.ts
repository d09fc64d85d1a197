// Builders of rebalancing (docs/rebalancing.md): the service the workflow's step and the admin API share,
// and the starter of its workflow.
import { DynamoRangeStore } from '../adapters/dynamodb-range-store';
import { DynamoRebalanceJobStore } from '../adapters/dynamodb-rebalance-job-store';
import { SfnRebalanceStarter } from '../adapters/sfn-rebalance-starter';
import { RebalanceService } from '../core/rebalance-service';
import { cutoverLeaseMs, ringLeaseMarginMs, ringLeaseMs } from '../core/ring-source';
import type { RangeStore, RebalanceJobStore, RebalanceStarter, ShardStore } from '../ports';
import { namesFor, rebalanceDefaults } from '../../schemas/topology';
import { documentClient, moverDocumentClient } from './clients';
import { ringStore } from './control';
import { shardStoreThrough } from './data';
import { sfnClient } from './orchestrator';
import { failoverService } from './services';
import { sleep, type Wiring } from './wiring';

export function rebalanceJobs(wiring: Wiring): RebalanceJobStore {
  return wiring.port(
    'controlTable',
    'read',
    'rebalanceJobs',
    () => new DynamoRebalanceJobStore(documentClient(wiring), wiring.config.controlTable),
  );
}

function rangeStore(wiring: Wiring): RangeStore {
  return wiring.port('shardTables', 'readWrite', 'ranges', () => new DynamoRangeStore(moverDocumentClient(wiring)));
}

/** The shard tables as the move reads them: through the mover client, with its bound on requests in flight. */
function moverShardStore(wiring: Wiring): ShardStore {
  return shardStoreThrough(wiring, 'moverShards', moverDocumentClient(wiring));
}

export function rebalanceService(wiring: Wiring): RebalanceService {
  return wiring.perHandler(
    'rebalance',
    () =>
      new RebalanceService({
        rings: ringStore(wiring),
        shards: moverShardStore(wiring),
        ranges: rangeStore(wiring),
        jobs: rebalanceJobs(wiring),
        transactions: failoverService(wiring),
        clock: wiring.clock,
        sleep,
        tableOf: (shardId) => namesFor(wiring.config.stage).shardTable(shardId),
        limits: {
          ...rebalanceDefaults,
          leaseWaitMs: ringLeaseMs + ringLeaseMarginMs,
          cutoverLeaseWaitMs: cutoverLeaseMs + ringLeaseMarginMs,
          ringRefreshWaitMs: wiring.config.ringRefreshMs + ringLeaseMarginMs,
        },
        ...(wiring.faults ? { faults: wiring.faults } : {}),
      }),
  );
}

/** Step Functions when the config names the rebalance state machine; otherwise what the host passed in, if anything. */
export function rebalanceStarter(wiring: Wiring): RebalanceStarter | undefined {
  if (wiring.spec && !wiring.spec.startsRebalances) {
    throw new Error(`handler ${wiring.spec.name} may not start rebalances: its HandlerSpec does not say startsRebalances`);
  }
  if (wiring.rebalances) return wiring.rebalances;
  const arn = wiring.config.rebalanceStateMachineArn;
  if (!arn) return undefined;
  return wiring.shared('rebalanceStarter', () => new SfnRebalanceStarter(sfnClient(wiring), arn));
}
