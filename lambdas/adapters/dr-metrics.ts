// DR observations: CloudWatch metrics through Powertools (EMF log lines in Lambda) and bounded in-process
// percentiles of the key and value lags, which the bench and the local cloud read.
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { publishGathered } from './powertools-metrics';
import type { DrMetrics } from '../ports';
import { lagSamplesMax } from './replication-metrics';

/** A bounded sample of durations (a ring buffer) and its percentiles. */
class LagSamples {
  private readonly samples: number[] = [];
  private next = 0;
  count = 0;

  add(ms: number): void {
    this.count += 1;
    if (this.samples.length < lagSamplesMax) this.samples.push(ms);
    else this.samples[this.next] = ms;
    this.next = (this.next + 1) % lagSamplesMax;
  }

  summary(): { count: number; p50: number; p99: number; max: number } {
    const sorted = [...this.samples].sort((a, b) => a - b);
    const at = (q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : 0);
    return { count: this.count, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? 0 };
  }
}

export interface DrSummary {
  keyLagMs: ReturnType<LagSamples['summary']>;
  valueLagMs: ReturnType<LagSamples['summary']>;
  keySyncMs: ReturnType<LagSamples['summary']>;
  corruptValues: number;
  lostKeys: number;
}

export class DrStats implements DrMetrics {
  private readonly keyLag = new LagSamples();
  private readonly valueLag = new LagSamples();
  private readonly keySync = new LagSamples();
  private corrupt = 0;
  private lost = 0;

  constructor(private readonly metrics?: Metrics) {}

  keyReceived(lagMs: number): void {
    this.keyLag.add(lagMs);
    this.metrics?.addMetric('DrKeyLag', MetricUnit.Milliseconds, lagMs);
  }

  valueApplied(lagMs: number): void {
    this.valueLag.add(lagMs);
    this.metrics?.addMetric('DrValueLag', MetricUnit.Milliseconds, lagMs);
  }

  valueCorrupt(): void {
    this.corrupt += 1;
    this.metrics?.addMetric('DrCorruptValues', MetricUnit.Count, 1);
  }

  keysLost(count: number): void {
    this.lost += count;
    this.metrics?.addMetric('DrLostKeys', MetricUnit.Count, count);
  }

  keySyncSent(durationMs: number): void {
    this.keySync.add(durationMs);
    this.metrics?.addMetric('DrKeySyncDuration', MetricUnit.Milliseconds, durationMs);
  }

  pendingObserved(observed: { pending: number; lost: number; oldestPendingAgeMs: number }): void {
    this.metrics?.addMetric('DrPendingKeys', MetricUnit.Count, observed.pending);
    this.metrics?.addMetric('DrLostKeysHeld', MetricUnit.Count, observed.lost);
    this.metrics?.addMetric('DrOldestPendingAge', MetricUnit.Milliseconds, observed.oldestPendingAgeMs);
  }

  /** Flushes the metrics gathered by one invocation (EMF lines); a no-op without Powertools. */
  publish(): void {
    publishGathered(this.metrics);
  }

  summary(): DrSummary {
    return {
      keyLagMs: this.keyLag.summary(),
      valueLagMs: this.valueLag.summary(),
      keySyncMs: this.keySync.summary(),
      corruptValues: this.corrupt,
      lostKeys: this.lost,
    };
  }
}
