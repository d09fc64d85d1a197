// Transaction observations as CloudWatch metrics (Powertools EMF in Lambda): outcomes and their duration as
// POST /v1/txn answers them, and the sweeper's recoveries and backlog, with counts kept in process for tests.
// Names, units and dimensions: docs/operations.md, "Metrics".
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MetricUnit as Unit } from '@aws-lambda-powertools/metrics/types';
import type { TxnOutcome } from '../ports';
import { publishGathered } from './powertools-metrics';

/** How a transaction was run: one shard's atomic write, or the two-phase commit state machine. */
export type TxnPath = 'oneShard' | 'stateMachine';

export interface SweepObservation {
  aborted: number;
  rolledForward: number;
  cleared: number;
  /** How far the sweep's walk is behind the sweepable present: deadlines older than this are done. */
  behindMs: number;
}

export class TxnStats {
  /** Outcomes per `<status>` or `aborted:<reason>`, since the instance started. */
  readonly outcomes = new Map<string, number>();
  lastSweep: SweepObservation | undefined;

  constructor(private readonly metrics?: Metrics) {}

  ended(outcome: TxnOutcome, path: TxnPath, durationMs: number): void {
    const key = outcome.status === 'aborted' ? `aborted:${outcome.reason}` : outcome.status;
    this.outcomes.set(key, (this.outcomes.get(key) ?? 0) + 1);
    const byOutcome = { Status: outcome.status, Path: path };
    this.emit(byOutcome, 'Transactions', MetricUnit.Count, 1);
    this.emit(byOutcome, 'TransactionDuration', MetricUnit.Milliseconds, durationMs);
    if (outcome.status === 'aborted') this.emit({ Reason: outcome.reason }, 'TransactionAborts', MetricUnit.Count, 1);
  }

  /** One metric with its own dimensions, printed at once (a single metric flushes, and forgets them, on its add). */
  private emit(dimensions: Record<string, string>, name: string, unit: Unit, value: number): void {
    if (!this.metrics) return;
    const single = this.metrics.singleMetric();
    single.addDimensions(dimensions);
    single.addMetric(name, unit, value);
  }

  swept(observation: SweepObservation): void {
    this.lastSweep = observation;
    if (!this.metrics) return;
    this.metrics.addMetric('TxnSweeperAborted', MetricUnit.Count, observation.aborted);
    this.metrics.addMetric('TxnSweeperRolledForward', MetricUnit.Count, observation.rolledForward);
    this.metrics.addMetric('TxnSweeperCleared', MetricUnit.Count, observation.cleared);
    this.metrics.addMetric('TxnSweeperBacklog', MetricUnit.Milliseconds, observation.behindMs);
  }

  /** Flushes what one invocation gathered (EMF lines); a no-op without Powertools. */
  publish(): void {
    publishGathered(this.metrics);
  }
}
