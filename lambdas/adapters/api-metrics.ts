// Each API request's outcome as CloudWatch metrics (Powertools EMF in Lambda): requests and their duration per
// operation, and errors per operation and error code, with counts kept in process for tests and the local
// cloud. Names, units and dimensions: docs/operations.md, "Metrics".
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { publishGathered } from './powertools-metrics';

export interface AnsweredRequest {
  /** The route's operationId (schemas/topology.ts), e.g. `getValue`. */
  operation: string;
  status: number;
  /** The error code the answer carries (schemas/errors.ts); absent on a success. */
  code?: string;
  durationMs: number;
}

export class ApiStats {
  /** Answers per `<operation> <status>`, and errors per code, since the instance started. */
  readonly answers = new Map<string, number>();
  readonly errors = new Map<string, number>();

  constructor(private readonly metrics?: Metrics) {}

  answered(request: AnsweredRequest): void {
    const answer = `${request.operation} ${request.status}`;
    this.answers.set(answer, (this.answers.get(answer) ?? 0) + 1);
    if (request.code) this.errors.set(request.code, (this.errors.get(request.code) ?? 0) + 1);
    if (!this.metrics) return;
    // A Lambda instance answers one request at a time, so the flush after it carries only its dimension.
    this.metrics.addDimension('Operation', request.operation);
    this.metrics.addMetric('Requests', MetricUnit.Count, 1);
    this.metrics.addMetric('RequestDuration', MetricUnit.Milliseconds, request.durationMs);
    if (request.code) {
      // Errors by code in their own line: one more dimension than the requests.
      const single = this.metrics.singleMetric();
      single.addDimensions({ Operation: request.operation, Code: request.code });
      single.addMetric('Errors', MetricUnit.Count, 1);
    }
  }

  /** Flushes what one invocation gathered (EMF lines); a no-op without Powertools. */
  publish(): void {
    publishGathered(this.metrics);
  }
}
