// Lambda entry of the `bootstrap` function: its handler over the deps the wiring builds from the function's environment
// at init, observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { bootstrapHandler } from '../handlers/bootstrap';
import { observe } from '../handlers/observe';
import { bootstrapDeps } from '../wiring/control-deps';
import { observeDeps } from '../wiring/observability';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('bootstrap');
export const handler = observe(bootstrapHandler(bootstrapDeps(wiring)), observeDeps(wiring));
