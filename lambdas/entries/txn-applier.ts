// Lambda entry of the `txnApplier` function: its handler over the deps the wiring builds from the function's environment
// at init, observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { txnApplierHandler } from '../handlers/txn-applier';
import { observe } from '../handlers/observe';
import { txnApplierDeps } from '../wiring/job-deps';
import { observeDeps } from '../wiring/observability';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('txnApplier');
export const handler = observe(txnApplierHandler(txnApplierDeps(wiring)), observeDeps(wiring));
