// Lambda entry of the `txn` function: its handler, wired from the function's environment at init.
import { txnHandler } from '../handlers/txn';
import { Wiring } from '../wiring/wiring';

export const handler = txnHandler(Wiring.forLambda('txn'));
