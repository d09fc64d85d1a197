// Scheduled: probes unavailable shards, replays their hints before they serve again, then compares the
// next slice of token ranges across replicas and repairs what differs (anti-entropy).
import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { ScheduledEvent } from 'aws-lambda';
import type { PendingSweepReport } from '../core/dr-applier';
import type { InitialSync } from '../core/dr-initial-sync';
import type { NoticeSettler } from '../core/dr-notice-settler';
import type { MaintenanceReport, MaintenanceService } from '../core/maintenance';
import type { RingSource } from '../core/ring-source';
import type { MetricsSink } from '../http/metrics';

export interface MaintenanceDeps {
  maintenance: MaintenanceService;
  ring: RingSource;
  logger: Logger;
  /** The failover metrics (a rejoin's divergent writes), flushed after each run. */
  metrics: MetricsSink;
  /** A DR backup's sweep of old pending entries; undefined in any other region. */
  sweep: (() => Promise<PendingSweepReport>) | undefined;
  /** A DR primary's initial sync, one slice per run; undefined in any other region. */
  sync: InitialSync | undefined;
  /** A DR primary's settling of its backup's old write notices; undefined in any other region. */
  notices: Pick<NoticeSettler, 'settleOld'> | undefined;
  /** The DR metrics, flushed after the sweep; undefined without DR. */
  dr: MetricsSink | undefined;
}

export function maintenanceHandler({ maintenance, ring, logger, metrics, sweep, sync, notices, dr }: MaintenanceDeps) {
  return middy<ScheduledEvent, MaintenanceReport>().handler(async () => {
    const report = await maintenance.run(await ring.current()).finally(() => metrics.publish());
    const { antiEntropy, handoff } = report;
    if (handoff.length || antiEntropy.repairedCount) logger.info('maintenance repaired replicas', { ...report });
    await sync?.step(await ring.current());
    const settled = await notices?.settleOld();
    if (settled?.examined) logger.warn('DR: settled write notices their writers left in the backup', { ...settled });
    const swept = await sweep?.().finally(() => dr?.publish());
    if (swept && (swept.applied || swept.cleared)) logger.warn('DR sweep applied values whose events were lost', { ...swept });
    return report;
  });
}
