// Builders of what makes a handler observable: the X-Ray tracer (Lambda only), and the metrics of API requests and of
// transactions (the replication, failover, cache and DR ones are built in data.ts and dr.ts). Each is
// built once per instance set; every metric is published only inside Lambda (locally EMF lines would
// flood the console), and `publishAll` flushes whatever a handler's invocation gathered. `observeDeps` gives
// handlers/observe.ts all of it.
import type { Tracer } from '@aws-lambda-powertools/tracer';
import type { DocsDeps } from '../handlers/docs';
import type { ObserveDeps } from '../handlers/observe';
import { ApiStats } from '../adapters/api-metrics';
import { powertoolsMetrics } from '../adapters/powertools-metrics';
import { TxnStats } from '../adapters/txn-metrics';
import type { Wiring } from './wiring';

/** The clients an instance set may have built before the tracer loads. */
const clientsTracedOnceLoaded = ['dynamodb', 's3', 'sfn'] as const;

/**
 * X-Ray through Powertools, inside Lambda only: its module is imported there and nowhere else (xray.ts says
 * why). Started at init by `observe`, so the import is paid in the init phase, not by a request.
 */
export function tracing(wiring: Wiring): Promise<Tracer | undefined> | undefined {
  if (!wiring.config.inLambda) return undefined;
  return import('./xray')
    .then(({ xrayTracer }) => {
      const tracer = xrayTracer(wiring);
      // The clients built before the tracer have their calls traced from now on.
      for (const name of clientsTracedOnceLoaded) {
        const client = wiring.built(name);
        if (client !== undefined) traced(wiring, client, tracer);
      }
      return tracer;
    })
    .catch((error: unknown) => {
      // Tracing is worth less than the requests: they are served untraced.
      wiring.logger.error('X-Ray tracer not loaded: invocations are not traced', { error: String(error) });
      return undefined;
    });
}

/** The tracer, if it is loaded (Lambda only). */
function loadedTracer(wiring: Wiring): Tracer | undefined {
  return wiring.built('tracer') as Tracer | undefined;
}

/**
 * Adds an AWS SDK client's calls to the trace (a subsegment per call), once per client, when the tracer is
 * loaded and on; the clients built before it are added when it loads (`tracing`).
 */
export function traced<Client>(wiring: Wiring, client: Client, tracer = loadedTracer(wiring)): Client {
  const captured = wiring.shared('tracedClients', () => new WeakSet<object>());
  if (!tracer?.isTracingEnabled() || typeof client !== 'object' || client === null || captured.has(client)) return client;
  captured.add(client);
  return tracer.captureAWSv3Client(client);
}

/** Annotates the invocation's trace (searchable in X-Ray), when tracing is on. */
export function annotate(wiring: Wiring, key: string, value: string): void {
  loadedTracer(wiring)?.putAnnotation(key, value);
}

/** Requests, their duration and errors per operation (the HTTP handlers). */
export function apiStats(wiring: Wiring): ApiStats {
  return wiring.shared('apiStats', () => new ApiStats(wiring.config.inLambda ? powertoolsMetrics() : undefined));
}

/** Transaction outcomes and durations (POST /v1/txn) and the sweeper's recoveries and backlog. */
export function txnStats(wiring: Wiring): TxnStats {
  return wiring.shared('txnStats', () => new TxnStats(wiring.config.inLambda ? powertoolsMetrics() : undefined));
}

/** The names every metrics holder is built under (here, in data.ts, dr.ts and quotas.ts). */
const metricSinks = ['apiStats', 'txnStats', 'cacheStats', 'stats', 'failoverStats', 'drStats', 'quotaStats'] as const;

const isSink = (value: unknown): value is { publish(): void } =>
  typeof value === 'object' && value !== null && 'publish' in value && typeof value.publish === 'function';

/** Flushes every metric the instance set gathered, whichever handler's code observed it. */
export function publishAll(wiring: Wiring): void {
  for (const name of metricSinks) {
    const sink = wiring.built(name);
    if (isSink(sink)) sink.publish();
  }
}

/**
 * What `observe` wraps every handler with. The tracer starts loading here, at init; the API metrics are built
 * only for a handler with routes.
 */
export function observeDeps(wiring: Wiring): ObserveDeps {
  return {
    handlerName: wiring.spec?.name,
    tracer: tracing(wiring),
    inLambda: wiring.config.inLambda,
    logger: wiring.logger,
    clock: wiring.clock,
    apiMetrics: () => apiStats(wiring),
    publishAll: () => publishAll(wiring),
    annotate: (key, value) => annotate(wiring, key, value),
  };
}

/** The docs handler needs only the logger: built here, with what every entry imports, so its bundle holds no AWS client. */
export function docsDeps(wiring: Wiring): DocsDeps {
  return { logger: wiring.logger };
}
