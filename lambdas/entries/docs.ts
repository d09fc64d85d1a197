// Lambda entry of the `docs` function: its handler, wired from the function's environment at init.
import { docsHandler } from '../handlers/docs';
import { Wiring } from '../wiring/wiring';

export const handler = docsHandler(Wiring.forLambda('docs'));
