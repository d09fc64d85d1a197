// Lambda entry of the `kvRead` function: its handler over the deps the wiring builds from the function's environment
// at init, observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { kvReadHandler } from '../handlers/kv-read';
import { observe } from '../handlers/observe';
import { kvReadDeps } from '../wiring/data-api-deps';
import { observeDeps } from '../wiring/observability';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('kvRead');
export const handler = observe(kvReadHandler(kvReadDeps(wiring)), observeDeps(wiring));
