// Lambda entry of the `txnStep` function: its handler over the deps the wiring builds from the function's environment
// at init, observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { txnStepHandler } from '../handlers/txn-step';
import { observe } from '../handlers/observe';
import { txnStepDeps } from '../wiring/job-deps';
import { observeDeps } from '../wiring/observability';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('txnStep');
export const handler = observe(txnStepHandler(txnStepDeps(wiring)), observeDeps(wiring));
