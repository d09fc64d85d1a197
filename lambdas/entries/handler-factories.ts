// Every handler by its topology name, composed as its Lambda entry beside this file composes it: the handler
// factory over the deps the wiring builds, observed. The local cloud builds them all in one process; no Lambda
// bundle imports this file.
import type { MiddyfiedHandler } from '@middy/core';
import type { HandlerName } from '../../schemas/topology';
import { adminDeps } from '../wiring/admin-deps';
import { authorizerDeps, bootstrapDeps } from '../wiring/control-deps';
import { kvReadDeps, kvWriteDeps, txnDeps } from '../wiring/data-api-deps';
import { drKeyApplierDeps, drPromotionStepDeps, drShipperDeps, drValueApplierDeps } from '../wiring/dr-deps';
import { failoverStepDeps, maintenanceDeps, replicatorDeps, txnApplierDeps, txnStepDeps, txnSweeperDeps } from '../wiring/job-deps';
import { docsDeps, observeDeps } from '../wiring/observability';
import { rebalanceStepDeps } from '../wiring/rebalance-deps';
import { ringDeps } from '../wiring/request-deps';
import { volumesDeps } from '../wiring/volume-deps';
import { watchDeps } from '../wiring/watch';
import type { Wiring } from '../wiring/wiring';
import { observe } from '../handlers/observe';
import { authorizerHandler } from '../handlers/authorizer';
import { kvReadHandler } from '../handlers/kv-read';
import { kvWriteHandler } from '../handlers/kv-write';
import { ringHandler } from '../handlers/ring';
import { adminHandler } from '../handlers/admin';
import { docsHandler } from '../handlers/docs';
import { bootstrapHandler } from '../handlers/bootstrap';
import { replicatorHandler } from '../handlers/replicator';
import { maintenanceHandler } from '../handlers/maintenance';
import { txnHandler } from '../handlers/txn';
import { volumesHandler } from '../handlers/volumes';
import { txnStepHandler } from '../handlers/txn-step';
import { txnSweeperHandler } from '../handlers/txn-sweeper';
import { txnApplierHandler } from '../handlers/txn-applier';
import { failoverStepHandler } from '../handlers/failover-step';
import { rebalanceStepHandler } from '../handlers/rebalance-step';
import { drShipperHandler } from '../handlers/dr-shipper';
import { drKeyApplierHandler } from '../handlers/dr-key-applier';
import { drValueApplierHandler } from '../handlers/dr-value-applier';
import { drPromotionStepHandler } from '../handlers/dr-promotion-step';
import { watchHandler } from '../handlers/watch';

/**
 * A factory of the local cloud: from a handler's view of the wiring, its deps, its handler, observed as in Lambda.
 *
 * @example
 * const kvWrite = composed(kvWriteHandler, kvWriteDeps);
 * const handler = kvWrite(host.forHandler('kvWrite'));
 */
function composed<Deps, Event, Result>(factory: (deps: Deps) => MiddyfiedHandler<Event, Result>, depsOf: (wiring: Wiring) => Deps) {
  return (wiring: Wiring) => observe(factory(depsOf(wiring)), observeDeps(wiring));
}

export const handlerFactories = {
  authorizer: composed(authorizerHandler, authorizerDeps),
  kvRead: composed(kvReadHandler, kvReadDeps),
  kvWrite: composed(kvWriteHandler, kvWriteDeps),
  ring: composed(ringHandler, ringDeps),
  admin: composed(adminHandler, adminDeps),
  docs: composed(docsHandler, docsDeps),
  bootstrap: composed(bootstrapHandler, bootstrapDeps),
  replicator: composed(replicatorHandler, replicatorDeps),
  maintenance: composed(maintenanceHandler, maintenanceDeps),
  txn: composed(txnHandler, txnDeps),
  volumes: composed(volumesHandler, volumesDeps),
  txnStep: composed(txnStepHandler, txnStepDeps),
  txnSweeper: composed(txnSweeperHandler, txnSweeperDeps),
  txnApplier: composed(txnApplierHandler, txnApplierDeps),
  failoverStep: composed(failoverStepHandler, failoverStepDeps),
  rebalanceStep: composed(rebalanceStepHandler, rebalanceStepDeps),
  drShipper: composed(drShipperHandler, drShipperDeps),
  drKeyApplier: composed(drKeyApplierHandler, drKeyApplierDeps),
  drValueApplier: composed(drValueApplierHandler, drValueApplierDeps),
  drPromotionStep: composed(drPromotionStepHandler, drPromotionStepDeps),
  watch: composed(watchHandler, watchDeps),
} satisfies Record<HandlerName, (wiring: Wiring) => unknown>;
