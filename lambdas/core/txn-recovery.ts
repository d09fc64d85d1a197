// Finishing transactions their coordinator left: the sweeper's walk of deadlines, and the roll-forward or
// clearing of a decided transaction's intents (docs/transactions.md, "Recovery").
import type { TxnRecord } from '../ports';
import { forAllBounded } from './bounded';
import type { IntentResolver } from './intents';
import type { TxnDeps } from './txn-deps';

export interface SweepReport {
  examined: number;
  aborted: number;
  rolledForward: number;
  cleared: number;
  /** Deadlines before this are done; the next sweep starts here. */
  sweptUntilMs: number;
}

export class TxnRecovery {
  constructor(
    private readonly deps: Pick<TxnDeps, 'records' | 'shards' | 'limits'>,
    private readonly intents: IntentResolver,
  ) {}

  /**
   * The recovery sweeper: every transaction whose deadline fell in [fromMs, toMs) is finished. A
   * pending one (its coordinator is gone) is aborted and its intents cleared; a committed one whose
   * intents are still there is rolled forward; an aborted one has any intent left cleared.
   */
  async sweep(fromMs: number, toMs: number, limit: number): Promise<SweepReport> {
    const report: SweepReport = { examined: 0, aborted: 0, rolledForward: 0, cleared: 0, sweptUntilMs: toMs };
    const found = await this.deps.records.dueBetween(fromMs, toMs, limit);
    if (found.length === limit) report.sweptUntilMs = found[found.length - 1]!.deadlineMs;
    const records = [];
    for (const record of found) {
      report.examined += 1;
      if (record.status !== 'pending') {
        records.push(record);
        continue;
      }
      const decided = (await this.deps.records.decide(record.txid, 'aborted', { reason: 'timeout' })) ?? record;
      if (decided.status === 'aborted') report.aborted += 1;
      records.push(decided);
    }
    const finished = await this.finishDecided(records);
    report.rolledForward = finished.rolledForward;
    report.cleared = finished.cleared;
    return report;
  }

  /**
   * Finishes decided transactions: every intent a committed one still has becomes its key's value, every
   * intent an aborted one still has is removed. One batched read of all their keys comes first, so a
   * transaction already finished (by its workflow or by readers) costs a read of its keys and no write.
   * The sweeper calls it after deadlines; the applier calls it for each decision on the transaction
   * table's stream (an eventual transaction is answered at its decision and applied there).
   */
  async finishDecided(records: readonly TxnRecord[]): Promise<{ rolledForward: number; cleared: number }> {
    const counts = { rolledForward: 0, cleared: 0 };
    const decided = records.filter((record) => record.status !== 'pending');
    const refs = decided.flatMap((record) => record.keys.map((ref) => ({ record, ref })));
    if (refs.length === 0) return counts;
    const intents = await this.deps.shards.intentsOf(refs.map(({ ref }) => ref));
    const left = refs.flatMap(({ record, ref }, index) => {
      const intent = intents[index];
      return intent?.txid === record.txid ? [{ record, ref, intent }] : [];
    });
    await forAllBounded(left, this.deps.limits.intentConcurrencyMax, async ({ record, ref, intent }) => {
      if (record.status === 'committed') {
        await this.intents.rollForward(ref.table, ref, intent);
        counts.rolledForward += 1;
      } else if (await this.deps.shards.clearIntent(ref.table, { namespace: ref.namespace, key: ref.key, txid: record.txid })) {
        counts.cleared += 1;
      }
    });
    return counts;
  }
}
