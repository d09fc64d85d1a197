// Builders of the deps of the data path's API handlers (kvRead, kvWrite, txn): their service, the guards every
// API request goes through, and the metrics flushed after each request. Each builds what its handler built at init.
import type { KvReadDeps } from '../handlers/kv-read';
import type { KvWriteDeps } from '../handlers/kv-write';
import type { TxnDeps } from '../handlers/txn';
import { failoverStats, replicationStats } from './data';
import { drStats } from './dr';
import { txnStats } from './observability';
import { orchestrator } from './orchestrator';
import { rateLimiter } from './quotas';
import { requestGuardDeps } from './request-deps';
import { kvService, transactionService } from './services';
import type { Wiring } from './wiring';

export function kvReadDeps(wiring: Wiring): KvReadDeps {
  return {
    kv: kvService(wiring),
    rateLimiter: rateLimiter(wiring),
    logger: wiring.logger,
    guards: requestGuardDeps(wiring),
    metrics: [replicationStats(wiring), failoverStats(wiring)],
  };
}

export function kvWriteDeps(wiring: Wiring): KvWriteDeps {
  return {
    kv: kvService(wiring),
    logger: wiring.logger,
    guards: requestGuardDeps(wiring),
    metrics: [replicationStats(wiring), failoverStats(wiring), drStats(wiring)],
  };
}

export function txnDeps(wiring: Wiring): TxnDeps {
  return {
    txns: transactionService(wiring),
    transactions: orchestrator(wiring),
    stats: txnStats(wiring),
    clock: wiring.clock,
    logger: wiring.logger,
    guards: requestGuardDeps(wiring),
  };
}
