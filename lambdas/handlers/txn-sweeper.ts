// Scheduled: finishes transactions whose coordinator stopped: aborts the pending ones past their
// deadline, rolls committed ones forward, clears what aborted ones left (lambdas/core/transactions.ts).
import middy from '@middy/core';
import type { ScheduledEvent } from 'aws-lambda';
import type { SweepReport } from '../core/transactions';
import { sweeperState } from '../wiring/control';
import { txnStats } from '../wiring/observability';
import { transactionService } from '../wiring/services';
import type { Wiring } from '../wiring/wiring';
import { txnLimits } from '../../schemas/topology';

/** Deadlines are swept this long after they pass, so a coordinator finishing on time is never raced. */
const sweepGraceMs = 1_000;
/** A first sweep looks back this far. */
const firstLookBackMs = 3_600_000;

export function txnSweeperHandler(wiring: Wiring) {
  const txns = transactionService(wiring);
  const sweep = sweeperState(wiring);
  const stats = txnStats(wiring);
  const { clock, logger } = wiring;

  return middy<ScheduledEvent, SweepReport>().handler(async () => {
    const now = clock.nowMs();
    const state = await sweep.readSweeperState();
    const report = await txns.sweep(state?.sweptUntilMs ?? now - firstLookBackMs, now - sweepGraceMs, txnLimits.sweepBatchMax);
    await sweep.saveSweeperState({ sweptUntilMs: report.sweptUntilMs });
    // Behind by more than the grace: transactions past their deadline wait for a later run (the backlog alarm).
    stats.swept({ ...report, behindMs: Math.max(0, now - sweepGraceMs - report.sweptUntilMs) });
    if (report.aborted + report.rolledForward + report.cleared > 0) logger.info('transactions recovered', { ...report });
    return report;
  });
}
