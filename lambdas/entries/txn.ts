// Lambda entry of the `txn` function: its handler over the deps the wiring builds from the function's environment
// at init, observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { txnHandler } from '../handlers/txn';
import { observe } from '../handlers/observe';
import { txnDeps } from '../wiring/data-api-deps';
import { observeDeps } from '../wiring/observability';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('txn');
export const handler = observe(txnHandler(txnDeps(wiring)), observeDeps(wiring));
