// The X-Ray tracer, in its own module: importing Powertools' Tracer loads aws-xray-sdk-core, whose context
// tracking (an async hook) slows every await of the process about tenfold. Only Lambda loads it (see
// `tracing` in observability.ts); the local cloud, the tests and the bench never do.
import { Tracer } from '@aws-lambda-powertools/tracer';
import { traced } from './observability';
import type { Wiring } from './wiring';

/** The clients an instance set may have built before the tracer: each gets its calls traced once it is. */
const clientNames = ['dynamodb', 's3', 'sfn'] as const;

/** The tracer of an instance set, built once; the clients built so far are traced from now on. */
export function xrayTracer(wiring: Wiring): Tracer {
  const tracer = wiring.shared('tracer', () => new Tracer({ serviceName: 'ringstore', enabled: wiring.config.inLambda }));
  for (const name of clientNames) {
    const client = wiring.built(name);
    if (client !== undefined) traced(wiring, client, tracer);
  }
  return tracer;
}
