// Lambda entry of the `authorizer` function: its handler, wired from the function's environment at init.
import { authorizerHandler } from '../handlers/authorizer';
import { Wiring } from '../wiring/wiring';

export const handler = authorizerHandler(Wiring.forLambda('authorizer'));
