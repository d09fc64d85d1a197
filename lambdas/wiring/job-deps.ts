// Builders of the deps of the handlers that streams, schedules and the state machines run (replication,
// maintenance, the failover and transaction steps, the sweeper, the applier); each builds what its handler
// built at init. DR's are in dr-deps.ts and rebalancing's in rebalance-deps.ts, so that these bundles hold neither.
import type { FailoverStepDeps } from '../handlers/failover-step';
import type { MaintenanceDeps } from '../handlers/maintenance';
import type { ReplicatorDeps } from '../handlers/replicator';
import type { TxnApplierDeps } from '../handlers/txn-applier';
import type { TxnStepDeps } from '../handlers/txn-step';
import type { TxnSweeperDeps } from '../handlers/txn-sweeper';
import { ringSource, sweeperState } from './control';
import { failoverStats, replicationStats, streamOwnership } from './data';
import { drStats, initialSync, noticeSettler, pendingSweep } from './dr';
import { txnStats } from './observability';
import { failoverService, maintenanceService, replicationService, transactionService } from './services';
import { feedWriter } from './watch';
import type { Wiring } from './wiring';

export function replicatorDeps(wiring: Wiring): ReplicatorDeps {
  return {
    replication: replicationService(wiring),
    feed: feedWriter(wiring, streamOwnership(wiring)),
    ownership: streamOwnership(wiring),
    stats: replicationStats(wiring),
    logger: wiring.logger,
  };
}

export function maintenanceDeps(wiring: Wiring): MaintenanceDeps {
  return {
    maintenance: maintenanceService(wiring),
    ring: ringSource(wiring),
    logger: wiring.logger,
    metrics: failoverStats(wiring),
    sweep: pendingSweep(wiring),
    sync: initialSync(wiring),
    notices: noticeSettler(wiring),
    dr: wiring.config.dr.role === 'none' ? undefined : drStats(wiring),
  };
}

export function failoverStepDeps(wiring: Wiring): FailoverStepDeps {
  return { failovers: failoverService(wiring), metrics: failoverStats(wiring), logger: wiring.logger };
}

export function txnStepDeps(wiring: Wiring): TxnStepDeps {
  return { txns: transactionService(wiring), faults: wiring.faults };
}

export function txnSweeperDeps(wiring: Wiring): TxnSweeperDeps {
  return {
    txns: transactionService(wiring),
    sweep: sweeperState(wiring),
    stats: txnStats(wiring),
    clock: wiring.clock,
    logger: wiring.logger,
  };
}

export function txnApplierDeps(wiring: Wiring): TxnApplierDeps {
  return { txns: transactionService(wiring), logger: wiring.logger };
}
