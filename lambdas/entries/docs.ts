// Lambda entry of the `docs` function: its handler, wired from the function's environment at init,
// observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { docsHandler } from '../handlers/docs';
import { observe } from '../handlers/observe';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('docs');
export const handler = observe(docsHandler(wiring), wiring);
