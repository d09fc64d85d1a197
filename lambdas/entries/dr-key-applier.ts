// Lambda entry of the `drKeyApplier` function: its handler over the deps the wiring builds from the function's environment
// at init, observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { drKeyApplierHandler } from '../handlers/dr-key-applier';
import { observe } from '../handlers/observe';
import { drKeyApplierDeps } from '../wiring/dr-deps';
import { observeDeps } from '../wiring/observability';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('drKeyApplier');
export const handler = observe(drKeyApplierHandler(drKeyApplierDeps(wiring)), observeDeps(wiring));
