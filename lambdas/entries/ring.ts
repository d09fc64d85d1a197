// Lambda entry of the `ring` function: its handler, wired from the function's environment at init.
import { ringHandler } from '../handlers/ring';
import { Wiring } from '../wiring/wiring';

export const handler = ringHandler(Wiring.forLambda('ring'));
