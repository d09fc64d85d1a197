// Lambda entry of the `failoverStep` function: its handler over the deps the wiring builds from the function's environment
// at init, observed: traced, its metrics flushed, an API answer stamped with its request id (handlers/observe.ts).
import { failoverStepHandler } from '../handlers/failover-step';
import { observe } from '../handlers/observe';
import { failoverStepDeps } from '../wiring/job-deps';
import { observeDeps } from '../wiring/observability';
import { Wiring } from '../wiring/wiring';

const wiring = Wiring.forLambda('failoverStep');
export const handler = observe(failoverStepHandler(failoverStepDeps(wiring)), observeDeps(wiring));
