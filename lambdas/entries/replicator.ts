// Lambda entry of the `replicator` function: its handler over the deps the wiring builds from the function's environment
// at init, observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { replicatorHandler } from '../handlers/replicator';
import { observe } from '../handlers/observe';
import { replicatorDeps } from '../wiring/job-deps';
import { observeDeps } from '../wiring/observability';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('replicator');
export const handler = observe(replicatorHandler(replicatorDeps(wiring)), observeDeps(wiring));
