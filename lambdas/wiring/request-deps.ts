// Builders of what the API handlers' requests go through (handlers/request-guards.ts): the services that map a
// SigV4-signed caller to its principal and take its namespace's rate; and the ring handler's deps, which need no more.
import type { CallerAuthDeps, RequestGuardDeps } from '../handlers/request-guards';
import type { RingDeps } from '../handlers/ring';
import { iamPrincipalService, namespaceSettings, ringSource } from './control';
import { quotaStats, rateLimiter } from './quotas';
import type { Wiring } from './wiring';

export function callerAuthDeps(wiring: Wiring): CallerAuthDeps {
  return {
    principals: iamPrincipalService(wiring),
    namespaces: namespaceSettings(wiring),
    clock: wiring.clock,
    ttlSeconds: wiring.config.iamCacheTtlSeconds,
  };
}

export function requestGuardDeps(wiring: Wiring): RequestGuardDeps {
  return { callers: callerAuthDeps(wiring), rateLimiter: rateLimiter(wiring), quotaMetrics: quotaStats(wiring) };
}

export function ringDeps(wiring: Wiring): RingDeps {
  return { ring: ringSource(wiring), logger: wiring.logger, guards: requestGuardDeps(wiring) };
}
