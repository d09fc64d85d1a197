// Pass or fail: the thresholds that make k6 exit non-zero (99) when a run misses them. Latency limits are
// per script (defaults sized for the local cloud on 2 shared cores) and moved by RS_P95_MS / RS_P99_MS for
// a deployment; error and check rates by RS_ERROR_RATE / RS_CHECKS_RATE.
import type { Options } from 'k6/options';
import { numberEnv } from './env.ts';

export interface Limits {
  p95Ms: number;
  p99Ms: number;
  /** Highest share of failed requests (statuses not expected by the request). Default 1 %. */
  errorRate?: number;
  /** Lowest share of checks that held. Default 99 %. */
  checksRate?: number;
}

type Thresholds = NonNullable<Options['thresholds']>;

/**
 * p95, p99, error rate and checks rate over the requests of the scenarios (tag `phase:run`), plus any
 * script-specific ones (`extra`), e.g. txn-bank's `audit_mismatches: ['count==0']`.
 */
export function thresholds(limits: Limits, extra: Thresholds = {}): Thresholds {
  const p95 = numberEnv('RS_P95_MS', limits.p95Ms);
  const p99 = numberEnv('RS_P99_MS', limits.p99Ms);
  const errorRate = numberEnv('RS_ERROR_RATE', limits.errorRate ?? 0.01);
  const checksRate = numberEnv('RS_CHECKS_RATE', limits.checksRate ?? 0.99);
  return {
    'http_req_duration{phase:run}': [`p(95)<${p95}`, `p(99)<${p99}`],
    'http_req_failed{phase:run}': [`rate<${errorRate}`],
    checks: [`rate>=${checksRate}`],
    ...extra,
  };
}
