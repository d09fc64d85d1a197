// Replication observations: CloudWatch metrics through Powertools (EMF log lines in Lambda) and a
// bounded in-process summary that the status page and the local cloud show.
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { ReplicationMetrics } from '../ports';
import type { HintBacklogMetrics } from '../ports/observability';
import { publishGathered } from './powertools-metrics';

/** Lag samples kept for the in-process percentiles (a ring buffer). */
export const lagSamplesMax = 2_000;

export interface ReplicationSummary {
  replicasApplied: number;
  hintsWritten: number;
  lagMs: { p50: number; p99: number; max: number; samples: number };
}

export class ReplicationStats implements ReplicationMetrics, HintBacklogMetrics {
  private readonly samples: number[] = [];
  private next = 0;
  private applied = 0;
  private hints = 0;

  constructor(private readonly metrics?: Metrics) {}

  replicaApplied(lagMs: number): void {
    this.applied += 1;
    if (this.samples.length < lagSamplesMax) this.samples.push(lagMs);
    else this.samples[this.next] = lagMs;
    this.next = (this.next + 1) % lagSamplesMax;
    this.metrics?.addMetric('ReplicationLag', MetricUnit.Milliseconds, lagMs);
  }

  hintWritten(_target: string): void {
    this.hints += 1;
    this.metrics?.addMetric('HintsWritten', MetricUnit.Count, 1);
  }

  /** The last backlog seen per shard table (the status page's numbers, and what tests read). */
  readonly pendingHints = new Map<string, number>();

  hintsPending(target: string, count: number): void {
    this.pendingHints.set(target, count);
    if (!this.metrics) return;
    // Per table, so the dashboard shows which shard's log grows; the total (below) is what the alarm watches.
    const single = this.metrics.singleMetric();
    single.addDimension('Table', target);
    single.addMetric('HintsPending', MetricUnit.Count, count);
    this.metrics.addMetric('HintsPending', MetricUnit.Count, count);
  }

  /** Flushes the metrics gathered by one invocation (EMF lines); a no-op without Powertools. */
  publish(): void {
    publishGathered(this.metrics);
  }

  summary(): ReplicationSummary {
    const sorted = [...this.samples].sort((a, b) => a - b);
    const at = (q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : 0);
    return {
      replicasApplied: this.applied,
      hintsWritten: this.hints,
      lagMs: { p50: at(0.5), p99: at(0.99), max: sorted.length ? sorted[sorted.length - 1]! : 0, samples: sorted.length },
    };
  }
}
