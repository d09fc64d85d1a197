// Builders of the core's services from the adapters they need. Each handler calls only the builders of
// the services it uses, so its cold start builds (and its bundle holds) nothing else.
import { failoverDefaults, limits, replicationDefaults, txnLimits, volumeLimits } from '../../schemas/topology';
import { FailoverService } from '../core/failover-service';
import { RejoinService } from '../core/rejoin';
import { ringLeaseMarginMs, ringLeaseMs } from '../core/ring-source';
import { KvService } from '../core/kv';
import { type MaintenanceDeps, MaintenanceService } from '../core/maintenance';
import { startAutomaticFailover } from '../core/failover-trigger';
import { ReplicationService } from '../core/replication';
import { TransactionService, type TxnServiceLimits } from '../core/transactions';
import { InProcessTxnRunner } from '../core/txn-runner';
import { VolumeService, volumeTxnLimits } from '../core/volumes';
import { automaticFailoverStarter, failoverLog, maintenanceState, ringSource, ringStore, shardHealth, shardHealthRecords } from './control';
import { blobStore, failoverStats, hintStore, replicationStats, shardStore, txnRecordStore, valueCache } from './data';
import { drKvHooks, drTxnHooksOf } from './dr';
import { StorageChargingWriter } from '../core/quotas';
import { sleep, type Wiring } from './wiring';

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
  return wiring.perHandler('txns', () => newTransactionService(wiring, { ...limits, ...txnLimits }));
}

/**
 * The volume service: its blocks' transactions run in the handler (txn-runner.ts) on a transaction service of their
 * own, whose limits take a whole 256 KiB write (its values never travel through the state machine's payload), and
 * which puts no block in the value cache: a block is only ever read strongly, in a transaction, never from the cache,
 * so a cached copy would cost a Redis round trip per block written and ElastiCache memory the KV keys need.
 */
export function volumeService(wiring: Wiring): VolumeService {
  return wiring.perHandler('volumes', () => {
    const txns = newTransactionService(wiring, volumeTxnLimits({ ...limits, ...txnLimits }, volumeLimits), { cached: false });
    return new VolumeService({
      kv: kvService(wiring),
      txns: new InProcessTxnRunner(txns),
      ids: wiring.ids,
      clock: wiring.clock,
      limits: volumeLimits,
      ...injected(wiring),
    });
  });
}

function newTransactionService(wiring: Wiring, txnServiceLimits: TxnServiceLimits, options = { cached: true }): TransactionService {
  const cache = options.cached ? valueCache(wiring) : undefined;
  const hooks = drTxnHooksOf(wiring);
  return new TransactionService({
    shards: shardStore(wiring),
    records: txnRecordStore(wiring),
    ring: ringSource(wiring),
    clock: wiring.clock,
    ids: wiring.ids,
    replication: replicationService(wiring),
    limits: txnServiceLimits,
    ...(cache ? { cache } : {}),
    ...(hooks ? { hooks } : {}),
    ...injected(wiring),
  });
}

export function kvService(wiring: Wiring): KvService {
  return wiring.perHandler('kv', () => {
    const shards = shardStore(wiring);
    return new KvService({
      // Plain reads and writes resolve the intents they meet the way transactions do.
      intents: transactionService(wiring).intents,
      cache: valueCache(wiring),
      shards,
      blobs: blobStore(wiring),
      ring: ringSource(wiring),
      clock: wiring.clock,
      ids: wiring.ids,
      limits,
      replication: replicationService(wiring),
      health: shardHealth(wiring),
      failoverMetrics: failoverStats(wiring),
      sleep,
      owners: new StorageChargingWriter({ shards, sleep }),
      ...drKvHooks(wiring),
      ...injected(wiring),
    });
  });
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
        rejoin: (table) => rejoinService(wiring).rejoin(table),
        metrics: replicationStats(wiring),
        ...automaticFailoverProbe(wiring),
        ...injected(wiring),
      }),
  );
}

export function failoverService(wiring: Wiring): FailoverService {
  return wiring.perHandler(
    'failover',
    () =>
      new FailoverService({
        rings: ringStore(wiring),
        shards: shardStore(wiring),
        hints: hintStore(wiring),
        records: txnRecordStore(wiring),
        health: shardHealthRecords(wiring),
        clock: wiring.clock,
        log: failoverLog(wiring),
        sleep,
        limits: {
          ...failoverDefaults,
          confirmProbes: wiring.config.failoverConfirm.probes,
          confirmIntervalMs: wiring.config.failoverConfirm.intervalMs,
          leaseWaitMs: ringLeaseMs + ringLeaseMarginMs,
        },
        ...injected(wiring),
      }),
  );
}

export function rejoinService(wiring: Wiring): RejoinService {
  return wiring.perHandler(
    'rejoin',
    () =>
      new RejoinService({
        rings: ringStore(wiring),
        shards: shardStore(wiring),
        log: failoverLog(wiring),
        clock: wiring.clock,
        // The keys of eventual writes the shard acknowledged and never replicated (or stray writes): an
        // operator's starting point; the failover's record keeps the first ones too.
        onDivergent: (report) => {
          failoverStats(wiring).divergentFound(report.divergent);
          wiring.logger.warn('rejoin found writes the new owners never saw', {
            shard: report.shard,
            failover: report.failover,
            divergent: report.divergent,
            copies: report.divergentCopies,
          });
        },
        limits: failoverDefaults.rejoin,
      }),
  );
}

/** With automatic failover on, the maintenance probe starts the failover of a shard that stays down. */
function automaticFailoverProbe(wiring: Wiring): Pick<MaintenanceDeps, 'stillDown'> {
  const failovers = automaticFailoverStarter(wiring);
  if (!failovers) return {};
  const ring = ringSource(wiring);
  return {
    stillDown: async (table, nowMs) => {
      await startAutomaticFailover(ring, failovers, table, 'the maintenance probe found it still down', nowMs).catch((error: unknown) =>
        wiring.logger.warn('automatic failover could not start', { error }),
      );
    },
  };
}
