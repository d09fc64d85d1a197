// Lambda entry of the `kvWrite` function: its handler over the deps the wiring builds from the function's environment
// at init, observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { kvWriteHandler } from '../handlers/kv-write';
import { observe } from '../handlers/observe';
import { kvWriteDeps } from '../wiring/data-api-deps';
import { observeDeps } from '../wiring/observability';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('kvWrite');
export const handler = observe(kvWriteHandler(kvWriteDeps(wiring)), observeDeps(wiring));
