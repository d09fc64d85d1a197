// The X-Ray tracer, in its own module: importing Powertools' Tracer loads aws-xray-sdk-core, whose context
// tracking (an async hook) slows every await of the process about tenfold. Only Lambda loads it (see
// `tracing` in observability.ts); the local cloud, the tests and the bench never do.
import { Tracer } from '@aws-lambda-powertools/tracer';
import type { Wiring } from './wiring';

/** The tracer of an instance set, built once (observability.ts then traces the clients built before it). */
export function xrayTracer(wiring: Wiring): Tracer {
  return wiring.shared('tracer', () => new Tracer({ serviceName: 'ringstore', enabled: wiring.config.inLambda }));
}
