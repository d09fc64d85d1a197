// Lambda entry of the `ring` function: its handler over the deps the wiring builds from the function's environment
// at init, observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { ringHandler } from '../handlers/ring';
import { observe } from '../handlers/observe';
import { ringDeps } from '../wiring/request-deps';
import { observeDeps } from '../wiring/observability';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('ring');
export const handler = observe(ringHandler(ringDeps(wiring)), observeDeps(wiring));
