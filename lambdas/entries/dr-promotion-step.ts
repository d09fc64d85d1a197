// Lambda entry of the `drPromotionStep` function: its handler, wired from the function's environment at init,
// observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { drPromotionStepHandler } from '../handlers/dr-promotion-step';
import { observe } from '../handlers/observe';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('drPromotionStep');
export const handler = observe(drPromotionStepHandler(wiring), wiring);
