// Builders of the admin handler's deps: what every admin request goes through (the caller's mapping, the audit
// trail) and each route group's. What a route built per request before is still built per request (a function).
import type { AdminDeps } from '../handlers/admin';
import type { AccessRoutesDeps } from '../handlers/admin-access-routes';
import type { DrRoutesDeps } from '../handlers/admin-dr-routes';
import type { ShardRoutesDeps } from '../handlers/admin-shard-routes';
import { apiKeyService, auditLog, failoverLog, iamPrincipalService, ringSource, shardHealth } from './control';
import { replicationStats } from './data';
import { drStateStore, drSyncState, keyQueueProbe, pendingStore, promotionLog, promotionStarter } from './dr';
import { lostKeyReconciler, lostValueOffer } from './dr-reconcile';
import { namespaceAdmin } from './namespace-admin';
import { failoverStarter } from './orchestrator';
import { rebalanceRoutesDeps } from './rebalance-deps';
import { callerAuthDeps } from './request-deps';
import { maintenanceService } from './services';
import type { Wiring } from './wiring';

export function adminDeps(wiring: Wiring): AdminDeps {
  // In the order the handler built them before: the audit log, the caller's mapping, then each route group.
  return {
    audit: auditLog(wiring),
    logger: wiring.logger,
    clock: wiring.clock,
    callers: callerAuthDeps(wiring),
    access: accessRoutesDeps(wiring),
    shards: shardRoutesDeps(wiring),
    dr: drRoutesDeps(wiring),
    rebalance: rebalanceRoutesDeps(wiring),
  };
}

export function accessRoutesDeps(wiring: Wiring): AccessRoutesDeps {
  return {
    apiKeys: apiKeyService(wiring),
    principals: iamPrincipalService(wiring),
    namespaces: namespaceAdmin(wiring),
    audit: auditLog(wiring),
    settingsTtlSeconds: wiring.config.iamCacheTtlSeconds,
  };
}

export function shardRoutesDeps(wiring: Wiring): ShardRoutesDeps {
  return {
    maintenance: maintenanceService(wiring),
    ring: ringSource(wiring),
    health: shardHealth(wiring),
    replication: replicationStats(wiring),
    failovers: failoverLog(wiring),
    failoverStarter: () => failoverStarter(wiring),
    clock: wiring.clock,
  };
}

/** The DR stores exist by the region's role, and building one the role lacks throws: each is built by the request. */
export function drRoutesDeps(wiring: Wiring): DrRoutesDeps {
  const { dr } = wiring.config;
  return {
    role: dr.role,
    ring: ringSource(wiring),
    clock: wiring.clock,
    backupState: () => drStateStore(wiring),
    pending: () => pendingStore(wiring),
    keyQueue: dr.role === 'backup' && dr.keyQueueUrl ? () => keyQueueProbe(wiring) : undefined,
    syncState: () => drSyncState(wiring),
    promotionStarter: () => promotionStarter(wiring),
    promotionLog: () => promotionLog(wiring),
    lostValueOffer: () => lostValueOffer(wiring),
    lostKeyReconciler: () => lostKeyReconciler(wiring),
  };
}
