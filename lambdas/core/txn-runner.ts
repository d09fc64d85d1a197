// A transaction run to its outcome inside the calling handler: on one shard by one atomic write, else by
// two-phase commit run in this process (the state machine's steps, in order). Used where the state machine's
// payload cannot carry the values (a block volume's write of up to 256 KiB) or its start would double the
// latency; a coordinator that dies mid-way is recovered by the sweeper from its record, as a state machine's
// would be (docs/transactions.md, "Recovery").
import type { Consistency, DrMode, TxnOutcome } from '../ports';
import type { TransactionService } from './transactions';
import type { TxnOp } from './txn-plan';

export interface TxnRunOptions {
  consistency: Consistency;
  /** How a DR primary tells its backup of the writes before the answer (docs/dr.md). */
  drMode?: DrMode;
}

/** Runs a transaction and answers its outcome; a committed one only once it may be acknowledged. */
export interface TxnRunner {
  run(namespace: string, ops: readonly TxnOp[], options: TxnRunOptions): Promise<TxnOutcome>;
}

export class InProcessTxnRunner implements TxnRunner {
  constructor(private readonly txns: TransactionService) {}

  async run(namespace: string, ops: readonly TxnOp[], options: TxnRunOptions): Promise<TxnOutcome> {
    const execution = await this.txns.plan(namespace, ops, { consistency: options.consistency });
    const outcome = (await this.txns.commitOnOneShard(execution)) ?? (await this.txns.runInProcess(execution));
    if (outcome.status === 'committed') {
      await this.txns.decided(execution, outcome, options.drMode);
      await this.txns.assertAcknowledgeable();
    }
    return outcome;
  }
}
