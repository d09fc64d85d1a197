// The one way handlers' observations become CloudWatch metrics: Powertools' embedded metric format (EMF), one
// JSON line per flush in the function's log, namespace `Ringstore` with the default dimension `service`.
import { Metrics } from '@aws-lambda-powertools/metrics';

export const metricNamespace = 'Ringstore';

export function powertoolsMetrics(namespace = metricNamespace): Metrics {
  return new Metrics({ namespace, serviceName: 'ringstore' });
}

/**
 * Flushes what an invocation gathered. Only when it gathered something: Powertools warns on every empty flush,
 * which would put a warning line in the log of every request that observed nothing.
 */
export function publishGathered(metrics: Metrics | undefined): void {
  if (metrics?.hasStoredMetrics()) metrics.publishStoredMetrics();
}
