// Lambda entry of the `txn` function: its handler, wired from the function's environment at init,
// observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { txnHandler } from '../handlers/txn';
import { observe } from '../handlers/observe';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('txn');
export const handler = observe(txnHandler(wiring), wiring);
