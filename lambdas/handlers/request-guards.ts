// What API requests go through after `httpErrors`, built from the wiring's services: the mapping of a
// SigV4-signed caller to its principal, and the namespace's request rate. The middlewares live in
// lambdas/http; the wiring builds services only, so the composition is here, on the handlers' side.
import { iamCallers } from '../http/iam-callers';
import { namespaceQuotas } from '../http/quotas';
import { iamPrincipalService, namespaceSettings } from '../wiring/control';
import { quotaStats, rateLimiter } from '../wiring/quotas';
import type { Wiring } from '../wiring/wiring';

/** The middleware that maps a SigV4-signed caller (API Gateway `AWS_IAM`) to its namespace and role. */
export function iamCallerAuth(wiring: Wiring) {
  return iamCallers({
    principals: iamPrincipalService(wiring),
    namespaces: namespaceSettings(wiring),
    clock: wiring.clock,
    ttlSeconds: wiring.config.iamCacheTtlSeconds,
  });
}

/** What every rate-limited API handler runs: the caller becomes its principal, then its namespace's rate is taken. */
export function callerAndQuotas(wiring: Wiring) {
  return [iamCallerAuth(wiring), namespaceQuotas(rateLimiter(wiring), quotaStats(wiring))];
}
