// Lambda entry of the `kvWrite` function: its handler, wired from the function's environment at init,
// observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { kvWriteHandler } from '../handlers/kv-write';
import { observe } from '../handlers/observe';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('kvWrite');
export const handler = observe(kvWriteHandler(wiring), wiring);
