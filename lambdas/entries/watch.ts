// Lambda entry of the `watch` function: its handler over the deps the wiring builds from the function's environment
// at init, observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { watchHandler } from '../handlers/watch';
import { observe } from '../handlers/observe';
import { watchDeps } from '../wiring/watch';
import { observeDeps } from '../wiring/observability';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('watch');
export const handler = observe(watchHandler(watchDeps(wiring)), observeDeps(wiring));
