// Lambda entry of the `authorizer` function: its handler, wired from the function's environment at init,
// observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { authorizerHandler } from '../handlers/authorizer';
import { observe } from '../handlers/observe';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('authorizer');
export const handler = observe(authorizerHandler(wiring), wiring);
