// Lambda entry of the `drPromotionStep` function: its handler, wired from the function's environment at init.
import { drPromotionStepHandler } from '../handlers/dr-promotion-step';
import { Wiring } from '../wiring/wiring';

export const handler = drPromotionStepHandler(Wiring.forLambda('drPromotionStep'));
