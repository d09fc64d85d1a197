// Lambda entry of the `bootstrap` function: its handler, wired from the function's environment at init.
import { bootstrapHandler } from '../handlers/bootstrap';
import { Wiring } from '../wiring/wiring';

export const handler = bootstrapHandler(Wiring.forLambda('bootstrap'));
