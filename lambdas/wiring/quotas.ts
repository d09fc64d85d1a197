// Builders of the per-namespace quotas: the shared rate buckets and the usage counters. Every rate-limited
// handler imports this module, so it imports nothing of the data path.
import { DynamoNamespaceUsageStore } from '../adapters/dynamodb-namespace-usage-store';
import { DynamoRateLimitStore } from '../adapters/dynamodb-rate-limit-store';
import { QuotaStats } from '../adapters/quota-metrics';
import { powertoolsMetrics } from '../adapters/powertools-metrics';
import { NamespaceRateLimiter } from '../core/quotas';
import type { NamespaceUsageStore, RateLimitStore } from '../ports';
import { documentClient } from './clients';
import type { Wiring } from './wiring';

/**
 * The rate limiter of the handlers whose spec says `rateLimited`: IAM lets them update the rate buckets'
 * partitions of the control table only (cdk/constructs/access.ts), whatever else they may do there.
 */
export function rateLimiter(wiring: Wiring): NamespaceRateLimiter {
  return wiring.shared('rateLimiter', () => {
    const store = wiring.shared<RateLimitStore>(
      'rateLimitStore',
      () => new DynamoRateLimitStore(documentClient(wiring), wiring.config.controlTable),
    );
    return new NamespaceRateLimiter({ store, clock: wiring.clock });
  });
}

/** Per-namespace refusals as metrics (EMF in Lambda). */
export function quotaStats(wiring: Wiring): QuotaStats {
  return wiring.shared('quotaStats', () => new QuotaStats(wiring.config.inLambda ? powertoolsMetrics() : undefined));
}

export function namespaceUsageStore(wiring: Wiring): NamespaceUsageStore {
  return wiring.port<NamespaceUsageStore>(
    'controlTable',
    'readWrite',
    'namespaceUsage',
    () => new DynamoNamespaceUsageStore(documentClient(wiring), wiring.config.controlTable),
  );
}
