// Lambda entry of the `drValueApplier` function: its handler over the deps the wiring builds from the function's environment
// at init, observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { drValueApplierHandler } from '../handlers/dr-value-applier';
import { observe } from '../handlers/observe';
import { drValueApplierDeps } from '../wiring/dr-deps';
import { observeDeps } from '../wiring/observability';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('drValueApplier');
export const handler = observe(drValueApplierHandler(drValueApplierDeps(wiring)), observeDeps(wiring));
