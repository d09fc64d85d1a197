// Lambda entry of the `txnSweeper` function: its handler, wired from the function's environment at init,
// observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { txnSweeperHandler } from '../handlers/txn-sweeper';
import { observe } from '../handlers/observe';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('txnSweeper');
export const handler = observe(txnSweeperHandler(wiring), wiring);
