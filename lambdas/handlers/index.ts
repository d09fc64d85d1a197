// Every handler factory by its topology name: the local cloud builds them all in one process.
import type { MiddyfiedHandler } from '@middy/core';
import type { HandlerName } from '../../schemas/topology';
import type { Wiring } from '../wiring/wiring';
import { observe } from './observe';
import { authorizerHandler } from './authorizer';
import { kvReadHandler } from './kv-read';
import { kvWriteHandler } from './kv-write';
import { ringHandler } from './ring';
import { adminHandler } from './admin';
import { docsHandler } from './docs';
import { bootstrapHandler } from './bootstrap';
import { replicatorHandler } from './replicator';
import { maintenanceHandler } from './maintenance';
import { txnHandler } from './txn';
import { txnStepHandler } from './txn-step';
import { txnSweeperHandler } from './txn-sweeper';
import { txnApplierHandler } from './txn-applier';
import { failoverStepHandler } from './failover-step';
import { rebalanceStepHandler } from './rebalance-step';
import { drShipperHandler } from './dr-shipper';
import { drKeyApplierHandler } from './dr-key-applier';
import { drValueApplierHandler } from './dr-value-applier';
import { drPromotionStepHandler } from './dr-promotion-step';

/** The factories; each takes the wiring (a handler's view of the instances) and returns the middy handler. */
/** A factory whose handler is observed as in Lambda (the entries do the same): what the local cloud runs. */
function observed<Event, Result>(factory: (wiring: Wiring) => MiddyfiedHandler<Event, Result>) {
  return (wiring: Wiring) => observe(factory(wiring), wiring);
}

export const handlerFactories = {
  authorizer: observed(authorizerHandler),
  kvRead: observed(kvReadHandler),
  kvWrite: observed(kvWriteHandler),
  ring: observed(ringHandler),
  admin: observed(adminHandler),
  docs: observed(docsHandler),
  bootstrap: observed(bootstrapHandler),
  replicator: observed(replicatorHandler),
  maintenance: observed(maintenanceHandler),
  txn: observed(txnHandler),
  txnStep: observed(txnStepHandler),
  txnSweeper: observed(txnSweeperHandler),
  txnApplier: observed(txnApplierHandler),
  failoverStep: observed(failoverStepHandler),
  rebalanceStep: observed(rebalanceStepHandler),
  drShipper: observed(drShipperHandler),
  drKeyApplier: observed(drKeyApplierHandler),
  drValueApplier: observed(drValueApplierHandler),
  drPromotionStep: observed(drPromotionStepHandler),
} satisfies Record<HandlerName, (wiring: Wiring) => unknown>;
