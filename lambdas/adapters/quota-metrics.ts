// Per-namespace request and refusal counts as CloudWatch metrics through Powertools (EMF log lines in
// Lambda), with the namespace as a dimension, so a dashboard shows which tenant is busy or throttled.
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { QuotaLimit, QuotaMetrics } from '../ports';

/** Distinct namespace and limit pairs gathered between two flushes; more are counted under `other`. */
export const quotaSeriesMax = 100;

export class QuotaStats implements QuotaMetrics {
  /** Counts gathered since the last flush, by `metric namespace limit`. */
  private readonly gathered = new Map<string, { metric: string; namespace: string; limit?: QuotaLimit; count: number }>();

  constructor(private readonly metrics?: Metrics) {}

  admitted(namespace: string): void {
    this.count('NamespaceRequests', namespace);
  }

  refused(namespace: string, limit: QuotaLimit): void {
    this.count('NamespaceThrottled', namespace, limit);
  }

  /**
   * One EMF line per namespace (and limit) seen: the namespace is a dimension of its own metrics only,
   * which Powertools gives a single metric, not the shared instance's dimensions.
   */
  publish(): void {
    if (this.metrics) {
      for (const { metric, namespace, limit, count } of this.gathered.values()) {
        const single = this.metrics.singleMetric();
        single.addDimension('Namespace', namespace);
        if (limit) single.addDimension('Limit', limit);
        single.addMetric(metric, MetricUnit.Count, count);
      }
    }
    this.gathered.clear();
  }

  private count(metric: string, namespace: string, limit?: QuotaLimit): void {
    const idOf = (name: string) => `${metric} ${name} ${limit ?? ''}`;
    // Past the bound, new namespaces share one series (one per metric and limit, so a few beyond the bound).
    const name = this.gathered.has(idOf(namespace)) || this.gathered.size < quotaSeriesMax ? namespace : 'other';
    const series = this.gathered.get(idOf(name));
    if (series) series.count += 1;
    else this.gathered.set(idOf(name), { metric, namespace: name, ...(limit ? { limit } : {}), count: 1 });
  }
}
