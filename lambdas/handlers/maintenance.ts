// Scheduled: probes unavailable shards, replays their hints before they serve again, then compares the
// next slice of token ranges across replicas and repairs what differs (anti-entropy).
import middy from '@middy/core';
import type { ScheduledEvent } from 'aws-lambda';
import type { MaintenanceReport } from '../core/maintenance';
import { ringSource } from '../wiring/control';
import { maintenanceService } from '../wiring/services';
import { failoverStats } from '../wiring/data';
import { drStats, initialSync, pendingSweep } from '../wiring/dr';
import type { Wiring } from '../wiring/wiring';

export function maintenanceHandler(wiring: Wiring) {
  const maintenance = maintenanceService(wiring);
  const ring = ringSource(wiring);
  const { logger } = wiring;

  const metrics = failoverStats(wiring);
  const sweep = pendingSweep(wiring);
  const sync = initialSync(wiring);
  const dr = wiring.config.dr.role === 'none' ? undefined : drStats(wiring);

  return middy<ScheduledEvent, MaintenanceReport>().handler(async () => {
    const report = await maintenance.run(await ring.current()).finally(() => metrics.publish());
    const { antiEntropy, handoff } = report;
    if (handoff.length || antiEntropy.repairedCount) logger.info('maintenance repaired replicas', { ...report });
    await sync?.step(await ring.current());
    const swept = await sweep?.().finally(() => dr?.publish());
    if (swept && (swept.applied || swept.cleared)) logger.warn('DR sweep applied values whose events were lost', { ...swept });
    return report;
  });
}
