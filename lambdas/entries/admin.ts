// Lambda entry of the `admin` function: its handler over the deps the wiring builds from the function's environment
// at init, observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { adminHandler } from '../handlers/admin';
import { observe } from '../handlers/observe';
import { adminDeps } from '../wiring/admin-deps';
import { observeDeps } from '../wiring/observability';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('admin');
export const handler = observe(adminHandler(adminDeps(wiring)), observeDeps(wiring));
