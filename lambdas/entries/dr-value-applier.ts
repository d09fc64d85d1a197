// Lambda entry of the `drValueApplier` function: its handler, wired from the function's environment at init.
import { drValueApplierHandler } from '../handlers/dr-value-applier';
import { Wiring } from '../wiring/wiring';

export const handler = drValueApplierHandler(Wiring.forLambda('drValueApplier'));
