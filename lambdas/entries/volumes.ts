// Lambda entry of the `volumes` function: its handler over the deps the wiring builds from the function's environment
// at init, observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { volumesHandler } from '../handlers/volumes';
import { observe } from '../handlers/observe';
import { volumesDeps } from '../wiring/volume-deps';
import { observeDeps } from '../wiring/observability';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('volumes');
export const handler = observe(volumesHandler(volumesDeps(wiring)), observeDeps(wiring));
