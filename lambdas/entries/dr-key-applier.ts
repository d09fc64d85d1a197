// Lambda entry of the `drKeyApplier` function: its handler, wired from the function's environment at init.
import { drKeyApplierHandler } from '../handlers/dr-key-applier';
import { Wiring } from '../wiring/wiring';

export const handler = drKeyApplierHandler(Wiring.forLambda('drKeyApplier'));
