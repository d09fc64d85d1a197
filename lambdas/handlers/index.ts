// Every handler factory by its topology name: the local cloud builds them all in one process.
import type { HandlerName } from '../../schemas/topology';
import type { Wiring } from '../wiring/wiring';
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
export const handlerFactories = {
  authorizer: authorizerHandler,
  kvRead: kvReadHandler,
  kvWrite: kvWriteHandler,
  ring: ringHandler,
  admin: adminHandler,
  docs: docsHandler,
  bootstrap: bootstrapHandler,
  replicator: replicatorHandler,
  maintenance: maintenanceHandler,
  txn: txnHandler,
  txnStep: txnStepHandler,
  txnSweeper: txnSweeperHandler,
  txnApplier: txnApplierHandler,
  failoverStep: failoverStepHandler,
  rebalanceStep: rebalanceStepHandler,
  drShipper: drShipperHandler,
  drKeyApplier: drKeyApplierHandler,
  drValueApplier: drValueApplierHandler,
  drPromotionStep: drPromotionStepHandler,
} satisfies Record<HandlerName, (wiring: Wiring) => unknown>;
