// Flushes the metrics a request gathered (Powertools EMF lines in Lambda) once it is answered, failed or not.
import type middy from '@middy/core';

export interface MetricsSink {
  publish(): void;
}

export function flushMetrics(...sinks: readonly MetricsSink[]): middy.MiddlewareObj {
  const flush = async () => {
    for (const sink of sinks) sink.publish();
  };
  return { after: flush, onError: flush };
}
