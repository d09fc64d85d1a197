// Lambda entry of the `maintenance` function: its handler over the deps the wiring builds from the function's environment
// at init, observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { maintenanceHandler } from '../handlers/maintenance';
import { observe } from '../handlers/observe';
import { maintenanceDeps } from '../wiring/job-deps';
import { observeDeps } from '../wiring/observability';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('maintenance');
export const handler = observe(maintenanceHandler(maintenanceDeps(wiring)), observeDeps(wiring));
