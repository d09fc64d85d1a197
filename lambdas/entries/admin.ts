// Lambda entry of the `admin` function: its handler, wired from the function's environment at init,
// observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { adminHandler } from '../handlers/admin';
import { observe } from '../handlers/observe';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('admin');
export const handler = observe(adminHandler(wiring), wiring);
