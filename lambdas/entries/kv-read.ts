// Lambda entry of the `kvRead` function: its handler, wired from the function's environment at init,
// observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { kvReadHandler } from '../handlers/kv-read';
import { observe } from '../handlers/observe';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('kvRead');
export const handler = observe(kvReadHandler(wiring), wiring);
