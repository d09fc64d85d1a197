// Lambda entry of the `failoverStep` function: its handler, wired from the function's environment at init.
import { failoverStepHandler } from '../handlers/failover-step';
import { Wiring } from '../wiring/wiring';

export const handler = failoverStepHandler(Wiring.forLambda('failoverStep'));
