// Lambda entry of the `drValueApplier` function: its handler, wired from the function's environment at init,
// observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { drValueApplierHandler } from '../handlers/dr-value-applier';
import { observe } from '../handlers/observe';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('drValueApplier');
export const handler = observe(drValueApplierHandler(wiring), wiring);
