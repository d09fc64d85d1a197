// What API requests go through after `httpErrors`: the mapping of a SigV4-signed caller to its principal, and
// the namespace's request rate. The middlewares live in lambdas/http, the services they use are built by the
// wiring (wiring/request-deps.ts); this module only puts them together, as every API handler needs them.
import type { IamPrincipalService } from '../core/iam-principals';
import type { NamespaceSettingsService } from '../core/namespaces';
import type { NamespaceRateLimiter } from '../core/quotas';
import type { Clock, QuotaMetrics } from '../ports';
import { iamCallers } from '../http/iam-callers';
import type { MetricsSink } from '../http/metrics';
import { namespaceQuotas } from '../http/quotas';

/** What maps a SigV4-signed caller to its namespace and role. */
export interface CallerAuthDeps {
  principals: IamPrincipalService;
  namespaces: NamespaceSettingsService;
  clock: Clock;
  /** How long a caller's answer is kept: as long as API Gateway keeps an authorizer's. */
  ttlSeconds: number;
}

/** What a rate-limited API handler runs before its route. */
export interface RequestGuardDeps {
  callers: CallerAuthDeps;
  rateLimiter: NamespaceRateLimiter;
  quotaMetrics: QuotaMetrics & MetricsSink;
}

/** The middleware that maps a SigV4-signed caller (API Gateway `AWS_IAM`) to its namespace and role. */
export function iamCallerAuth(deps: CallerAuthDeps) {
  return iamCallers(deps);
}

/** What every rate-limited API handler runs: the caller becomes its principal, then its namespace's rate is taken. */
export function callerAndQuotas(deps: RequestGuardDeps) {
  return [iamCallerAuth(deps.callers), namespaceQuotas(deps.rateLimiter, deps.quotaMetrics)];
}
