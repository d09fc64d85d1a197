// Lambda entry of the `txnStep` function: its handler, wired from the function's environment at init,
// observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { txnStepHandler } from '../handlers/txn-step';
import { observe } from '../handlers/observe';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('txnStep');
export const handler = observe(txnStepHandler(wiring), wiring);
