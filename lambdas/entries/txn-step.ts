// Lambda entry of the `txnStep` function: its handler, wired from the function's environment at init.
import { txnStepHandler } from '../handlers/txn-step';
import { Wiring } from '../wiring/wiring';

export const handler = txnStepHandler(Wiring.forLambda('txnStep'));
