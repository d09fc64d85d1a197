// Scheduled: finishes transactions whose coordinator stopped: aborts the pending ones past their
// deadline, rolls committed ones forward, clears what aborted ones left (lambdas/core/transactions.ts).
import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { ScheduledEvent } from 'aws-lambda';
import type { SweepReport, TransactionService } from '../core/transactions';
import type { Clock, SweeperStateStore } from '../ports';
import { txnLimits } from '../../schemas/topology';

/** Deadlines are swept this long after they pass, so a coordinator finishing on time is never raced. */
const sweepGraceMs = 1_000;
/** A first sweep looks back this far. */
const firstLookBackMs = 3_600_000;

/** What a sweep reports to the metrics: its recoveries, and how far behind the present it is. */
export interface SweepMetrics {
  swept(observation: { aborted: number; rolledForward: number; cleared: number; behindMs: number }): void;
}

export interface TxnSweeperDeps {
  txns: TransactionService;
  /** Where the sweep's walk stopped last time. */
  sweep: SweeperStateStore;
  stats: SweepMetrics;
  clock: Clock;
  logger: Logger;
}

export function txnSweeperHandler({ txns, sweep, stats, clock, logger }: TxnSweeperDeps) {
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
