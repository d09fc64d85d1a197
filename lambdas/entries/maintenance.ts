// Lambda entry of the `maintenance` function: its handler, wired from the function's environment at init,
// observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { maintenanceHandler } from '../handlers/maintenance';
import { observe } from '../handlers/observe';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('maintenance');
export const handler = observe(maintenanceHandler(wiring), wiring);
