// The value cache's observations as CloudWatch metrics (Powertools EMF in Lambda): hits by level, misses, and
// L2 errors, with counts kept in process for tests. Names and units: docs/operations.md, "Metrics".
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { CacheLevel, CacheMetrics } from '../ports/observability';
import { publishGathered } from './powertools-metrics';

/** What an L2 command was doing when it failed: reading, writing, or renewing its IAM token. */
export type CacheOperation = 'get' | 'put' | 'auth';

export interface CacheCounts {
  l1: number;
  l2: number;
  miss: number;
  errors: number;
}

const levelDimension: Record<CacheLevel, string> = { l1: 'L1', l2: 'L2' };

export class CacheStats implements CacheMetrics {
  readonly counts: CacheCounts = { l1: 0, l2: 0, miss: 0, errors: 0 };
  /** Hits of this invocation by level, published as one metric per level (a dimension each) at the flush. */
  private readonly hitsToPublish: Record<CacheLevel, number> = { l1: 0, l2: 0 };

  constructor(private readonly metrics?: Metrics) {}

  lookedUp(result: CacheLevel | 'miss'): void {
    this.counts[result] += 1;
    if (result === 'miss') this.metrics?.addMetric('CacheMisses', MetricUnit.Count, 1);
    else this.hitsToPublish[result] += 1;
  }

  /** An L2 command failed (a miss or a lost write-through for the caller, never an error it sees). */
  failed(_operation: CacheOperation): void {
    this.counts.errors += 1;
    this.metrics?.addMetric('CacheErrors', MetricUnit.Count, 1);
  }

  /** Flushes what one invocation gathered (EMF lines); a no-op without Powertools. */
  publish(): void {
    for (const level of ['l1', 'l2'] as const) {
      const hits = this.hitsToPublish[level];
      this.hitsToPublish[level] = 0;
      if (hits === 0 || !this.metrics) continue;
      const single = this.metrics.singleMetric();
      single.addDimension('Level', levelDimension[level]);
      single.addMetric('CacheHits', MetricUnit.Count, hits);
    }
    publishGathered(this.metrics);
  }
}
