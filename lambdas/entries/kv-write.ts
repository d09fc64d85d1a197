// Lambda entry of the `kvWrite` function: its handler, wired from the function's environment at init.
import { kvWriteHandler } from '../handlers/kv-write';
import { Wiring } from '../wiring/wiring';

export const handler = kvWriteHandler(Wiring.forLambda('kvWrite'));
