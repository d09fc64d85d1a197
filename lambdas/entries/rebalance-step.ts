// Lambda entry of the `rebalanceStep` function: its handler, wired from the function's environment at init.
import { rebalanceStepHandler } from '../handlers/rebalance-step';
import { Wiring } from '../wiring/wiring';

export const handler = rebalanceStepHandler(Wiring.forLambda('rebalanceStep'));
