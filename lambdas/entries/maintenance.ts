// Lambda entry of the `maintenance` function: its handler, wired from the function's environment at init.
import { maintenanceHandler } from '../handlers/maintenance';
import { Wiring } from '../wiring/wiring';

export const handler = maintenanceHandler(Wiring.forLambda('maintenance'));
