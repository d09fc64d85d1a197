// Builders of what makes a handler observable: the X-Ray tracer, and the metrics of API requests and of
// transactions (the replication, failover, cache and DR ones are built in data.ts and dr.ts). Each is
// built once per instance set; every metric is published only inside Lambda (locally EMF lines would
// flood the console), and `publishAll` flushes whatever a handler's invocation gathered.
import { Tracer } from '@aws-lambda-powertools/tracer';
import { ApiStats } from '../adapters/api-metrics';
import { powertoolsMetrics } from '../adapters/powertools-metrics';
import { TxnStats } from '../adapters/txn-metrics';
import type { Wiring } from './wiring';

/** X-Ray through Powertools; enabled only inside Lambda, where the function's active tracing receives it. */
export function tracer(wiring: Wiring): Tracer {
  return wiring.shared('tracer', () => new Tracer({ serviceName: 'ringstore', enabled: wiring.config.inLambda }));
}

/** Adds an AWS SDK client's calls to the trace (one subsegment per call) when tracing is on. */
export function traced<Client>(wiring: Wiring, client: Client): Client {
  const instance = tracer(wiring);
  return instance.isTracingEnabled() ? instance.captureAWSv3Client(client) : client;
}

/** Requests, their duration and errors per operation (the HTTP handlers). */
export function apiStats(wiring: Wiring): ApiStats {
  return wiring.shared('apiStats', () => new ApiStats(wiring.config.inLambda ? powertoolsMetrics() : undefined));
}

/** Transaction outcomes and durations (POST /v1/txn) and the sweeper's recoveries and backlog. */
export function txnStats(wiring: Wiring): TxnStats {
  return wiring.shared('txnStats', () => new TxnStats(wiring.config.inLambda ? powertoolsMetrics() : undefined));
}

/** The names every metrics holder is built under (here, in data.ts and in dr.ts). */
const metricSinks = ['apiStats', 'txnStats', 'cacheStats', 'stats', 'failoverStats', 'drStats'] as const;

const isSink = (value: unknown): value is { publish(): void } =>
  typeof value === 'object' && value !== null && 'publish' in value && typeof value.publish === 'function';

/** Flushes every metric the instance set gathered, whichever handler's code observed it. */
export function publishAll(wiring: Wiring): void {
  for (const name of metricSinks) {
    const sink = wiring.built(name);
    if (isSink(sink)) sink.publish();
  }
}
