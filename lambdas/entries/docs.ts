// Lambda entry of the `docs` function: its handler over the deps the wiring builds from the function's environment
// at init, observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { docsHandler } from '../handlers/docs';
import { observe } from '../handlers/observe';
import { docsDeps, observeDeps } from '../wiring/observability';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('docs');
export const handler = observe(docsHandler(docsDeps(wiring)), observeDeps(wiring));
