// Lambda entry of the `txnApplier` function: its handler, wired from the function's environment at init.
import { txnApplierHandler } from '../handlers/txn-applier';
import { Wiring } from '../wiring/wiring';

export const handler = txnApplierHandler(Wiring.forLambda('txnApplier'));
