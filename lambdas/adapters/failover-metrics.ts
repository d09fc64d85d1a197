// Failover observations as CloudWatch metrics through Powertools (EMF log lines in Lambda), with counts
// kept in process for tests and the local cloud. Names and units: docs/operations.md, "Failover metrics".
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { publishGathered } from './powertools-metrics';
import type { FailoverAction, FailoverMetrics, FailoverStatus } from '../ports';

export interface FailoverCounts {
  fencedRequests: number;
  staleRoutes: number;
  failovers: number;
  divergentWrites: number;
}

export class FailoverStats implements FailoverMetrics {
  readonly counts: FailoverCounts = { fencedRequests: 0, staleRoutes: 0, failovers: 0, divergentWrites: 0 };

  constructor(private readonly metrics?: Metrics) {}

  routeRefused(reason: 'fenced' | 'stale'): void {
    if (reason === 'fenced') this.counts.fencedRequests += 1;
    else this.counts.staleRoutes += 1;
    this.metrics?.addMetric(reason === 'fenced' ? 'FailoverFencedRequests' : 'FailoverStaleRoutes', MetricUnit.Count, 1);
  }

  failoverFinished(outcome: { status: FailoverStatus; action: FailoverAction; durationMs: number; rangesMoved: number }): void {
    this.counts.failovers += 1;
    if (!this.metrics) return;
    // One metric per outcome, so an alarm can watch completed and aborted failovers apart.
    const single = this.metrics.singleMetric();
    single.addDimension('Action', outcome.action);
    single.addDimension('Status', outcome.status);
    single.addMetric('Failovers', MetricUnit.Count, 1);
    this.metrics.addMetric('FailoverDuration', MetricUnit.Milliseconds, outcome.durationMs);
    this.metrics.addMetric('FailoverRangesMoved', MetricUnit.Count, outcome.rangesMoved);
  }

  divergentFound(count: number): void {
    this.counts.divergentWrites += count;
    this.metrics?.addMetric('RejoinDivergentWrites', MetricUnit.Count, count);
  }

  /** Flushes what one invocation gathered (EMF lines); a no-op without Powertools. */
  publish(): void {
    publishGathered(this.metrics);
  }
}
