// Lambda entry of the `rebalanceStep` function: its handler over the deps the wiring builds from the function's environment
// at init, observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { rebalanceStepHandler } from '../handlers/rebalance-step';
import { observe } from '../handlers/observe';
import { rebalanceStepDeps } from '../wiring/rebalance-deps';
import { observeDeps } from '../wiring/observability';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('rebalanceStep');
export const handler = observe(rebalanceStepHandler(rebalanceStepDeps(wiring)), observeDeps(wiring));
