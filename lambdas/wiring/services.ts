// Builders of the core's services from the adapters they need. Each handler calls only the builders of
// the services it uses, so its cold start builds (and its bundle holds) nothing else.
import { limits, replicationDefaults, txnLimits } from '../../schemas/topology';
import { KvService } from '../core/kv';
import { MaintenanceService } from '../core/maintenance';
import { ReplicationService } from '../core/replication';
import { TransactionService } from '../core/transactions';
import { maintenanceState, ringSource, shardHealth } from './control';
import { blobStore, hintStore, replicationStats, shardStore, txnRecordStore, valueCache } from './data';
import type { Wiring } from './wiring';

/** The fault injector, passed to the core only when present. */
const injected = (wiring: Wiring) => (wiring.faults ? { faults: wiring.faults } : {});

export function replicationService(wiring: Wiring): ReplicationService {
  return wiring.perHandler(
    'replication',
    () =>
      new ReplicationService({
        shards: shardStore(wiring),
        hints: hintStore(wiring),
        health: shardHealth(wiring),
        clock: wiring.clock,
        metrics: replicationStats(wiring),
        ...injected(wiring),
      }),
  );
}

export function transactionService(wiring: Wiring): TransactionService {
  return wiring.perHandler('txns', () => {
    const cache = valueCache(wiring);
    return new TransactionService({
      shards: shardStore(wiring),
      records: txnRecordStore(wiring),
      ring: ringSource(wiring),
      clock: wiring.clock,
      ids: wiring.ids,
      replication: replicationService(wiring),
      limits: { ...limits, ...txnLimits },
      ...(cache ? { cache } : {}),
      ...injected(wiring),
    });
  });
}

export function kvService(wiring: Wiring): KvService {
  return wiring.perHandler(
    'kv',
    () =>
      new KvService({
        // Plain reads and writes resolve the intents they meet the way transactions do.
        intents: transactionService(wiring).intents,
        cache: valueCache(wiring),
        shards: shardStore(wiring),
        blobs: blobStore(wiring),
        ring: ringSource(wiring),
        clock: wiring.clock,
        ids: wiring.ids,
        limits,
        replication: replicationService(wiring),
        health: shardHealth(wiring),
        ...injected(wiring),
      }),
  );
}

export function maintenanceService(wiring: Wiring): MaintenanceService {
  return wiring.perHandler(
    'maintenance',
    () =>
      new MaintenanceService({
        shards: shardStore(wiring),
        hints: hintStore(wiring),
        health: shardHealth(wiring),
        state: maintenanceState(wiring),
        clock: wiring.clock,
        limits: replicationDefaults,
        ...injected(wiring),
      }),
  );
}
