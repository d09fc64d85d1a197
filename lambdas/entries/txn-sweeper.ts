// Lambda entry of the `txnSweeper` function: its handler over the deps the wiring builds from the function's environment
// at init, observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { txnSweeperHandler } from '../handlers/txn-sweeper';
import { observe } from '../handlers/observe';
import { txnSweeperDeps } from '../wiring/job-deps';
import { observeDeps } from '../wiring/observability';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('txnSweeper');
export const handler = observe(txnSweeperHandler(txnSweeperDeps(wiring)), observeDeps(wiring));
