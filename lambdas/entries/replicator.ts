// Lambda entry of the `replicator` function: its handler, wired from the function's environment at init.
import { replicatorHandler } from '../handlers/replicator';
import { Wiring } from '../wiring/wiring';

export const handler = replicatorHandler(Wiring.forLambda('replicator'));
