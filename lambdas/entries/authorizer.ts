// Lambda entry of the `authorizer` function: its handler over the deps the wiring builds from the function's environment
// at init, observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { authorizerHandler } from '../handlers/authorizer';
import { observe } from '../handlers/observe';
import { authorizerDeps } from '../wiring/control-deps';
import { observeDeps } from '../wiring/observability';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('authorizer');
export const handler = observe(authorizerHandler(authorizerDeps(wiring)), observeDeps(wiring));
