// Lambda entry of the `drPromotionStep` function: its handler over the deps the wiring builds from the function's environment
// at init, observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { drPromotionStepHandler } from '../handlers/dr-promotion-step';
import { observe } from '../handlers/observe';
import { drPromotionStepDeps } from '../wiring/dr-deps';
import { observeDeps } from '../wiring/observability';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('drPromotionStep');
export const handler = observe(drPromotionStepHandler(drPromotionStepDeps(wiring)), observeDeps(wiring));
