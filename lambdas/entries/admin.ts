// Lambda entry of the `admin` function: its handler, wired from the function's environment at init.
import { adminHandler } from '../handlers/admin';
import { Wiring } from '../wiring/wiring';

export const handler = adminHandler(Wiring.forLambda('admin'));
