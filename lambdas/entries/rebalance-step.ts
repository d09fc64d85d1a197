// Lambda entry of the `rebalanceStep` function: its handler, wired from the function's environment at init,
// observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { rebalanceStepHandler } from '../handlers/rebalance-step';
import { observe } from '../handlers/observe';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('rebalanceStep');
export const handler = observe(rebalanceStepHandler(wiring), wiring);
