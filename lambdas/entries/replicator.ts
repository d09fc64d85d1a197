// Lambda entry of the `replicator` function: its handler, wired from the function's environment at init,
// observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { replicatorHandler } from '../handlers/replicator';
import { observe } from '../handlers/observe';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('replicator');
export const handler = observe(replicatorHandler(wiring), wiring);
