// Lambda entry of the `drShipper` function: its handler over the deps the wiring builds from the function's environment
// at init, observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { drShipperHandler } from '../handlers/dr-shipper';
import { observe } from '../handlers/observe';
import { drShipperDeps } from '../wiring/dr-deps';
import { observeDeps } from '../wiring/observability';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('drShipper');
export const handler = observe(drShipperHandler(drShipperDeps(wiring)), observeDeps(wiring));
