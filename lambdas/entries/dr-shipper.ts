// Lambda entry of the `drShipper` function: its handler, wired from the function's environment at init.
import { drShipperHandler } from '../handlers/dr-shipper';
import { Wiring } from '../wiring/wiring';

export const handler = drShipperHandler(Wiring.forLambda('drShipper'));
