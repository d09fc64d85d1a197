// Lambda entry of the `txnSweeper` function: its handler, wired from the function's environment at init.
import { txnSweeperHandler } from '../handlers/txn-sweeper';
import { Wiring } from '../wiring/wiring';

export const handler = txnSweeperHandler(Wiring.forLambda('txnSweeper'));
