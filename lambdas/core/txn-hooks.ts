// What a capability adds around a transaction, as hooks with a no-op default (write-hooks.ts does the same for
// a single key's write): TransactionService runs them at the points below and knows nothing of what they do.
// DR's are in dr-hooks.ts (drTxnHooks).
import type { DrMode, StoredItem, TxnExecution, TxnOutcome } from '../ports';

export interface TxnHooks {
  /**
   * Throws when this region may not run a transaction now, or acknowledge its outcome: checked when it is
   * planned and again before its outcome is answered.
   */
  assertAcknowledgeable(): Promise<void>;
  /**
   * Throws when a planned transaction touches a key this region must not serve; `stored` reads the key's
   * copy on its owner, strongly. Absent: every key is served (no read is made).
   */
  assertKeyServable?(namespace: string, key: string, stored: () => Promise<StoredItem | undefined>): Promise<void>;
  /** After a transaction's outcome is decided and before it is answered; a throw is the client's answer. */
  decided(execution: TxnExecution, outcome: TxnOutcome, settings: { drMode: DrMode }): Promise<void>;
}

export const noTxnHooks: TxnHooks = {
  assertAcknowledgeable: async () => undefined,
  decided: async () => undefined,
};

/** How many keys a transaction writes: each written version records it, and so does its DR key message. */
export function writeCountOf(execution: TxnExecution): number {
  return execution.participants.reduce((count, participant) => count + participant.keys.filter((key) => key.write).length, 0);
}
