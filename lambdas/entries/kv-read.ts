// Lambda entry of the `kvRead` function: its handler, wired from the function's environment at init.
import { kvReadHandler } from '../handlers/kv-read';
import { Wiring } from '../wiring/wiring';

export const handler = kvReadHandler(Wiring.forLambda('kvRead'));
