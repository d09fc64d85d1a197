// The per-namespace quotas of a request (docs/security.md, "Quotas"): its namespace's request rate is
// taken before the route runs, and every refusal, rate or storage, is counted per namespace.
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { isRingstoreError } from '../core/errors';
import type { NamespaceRateLimiter } from '../core/quotas';
import type { RequestPrincipal } from '../core/auth';
import type { QuotaLimit, QuotaMetrics } from '../ports';
import type { MetricsSink } from './metrics';
import { principalOf } from './request';

const limitOfCode = { 'quota.rate': 'rate', 'quota.keys': 'keys', 'quota.bytes': 'bytes' } as const satisfies Record<string, QuotaLimit>;

/**
 * Admits the request at its namespace's rate (a refusal is `quota.rate`, answered 429 by `httpErrors`,
 * which must come before this middleware) and counts requests and refusals per namespace.
 */
export function namespaceQuotas(
  limiter: NamespaceRateLimiter,
  stats: QuotaMetrics & MetricsSink,
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return {
    before: async (request) => {
      const principal = principalOf(request.event);
      if (principal.rate) await limiter.admit(principal.namespace, principal.rate);
      stats.admitted(principal.namespace);
    },
    after: async () => stats.publish(),
    onError: async (request) => {
      const { error } = request;
      for (const [code, limit] of Object.entries(limitOfCode)) {
        if (isRingstoreError(error) && error.code === code) stats.refused(principalOf(request.event).namespace, limit);
      }
      stats.publish();
    },
  };
}

/**
 * The admission of a request that makes several reads (a batch get): `namespaceQuotas` took one token for the
 * request, this takes one for each further read, so a batch of n keys costs the namespace's rate what n GETs do.
 */
export function admitReads(limiter: NamespaceRateLimiter, principal: RequestPrincipal): (reads: number) => Promise<void> {
  return async (reads) => {
    if (principal.rate && reads > 1) await limiter.admit(principal.namespace, principal.rate, reads - 1);
  };
}
