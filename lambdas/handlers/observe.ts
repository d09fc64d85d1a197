// Every handler as Lambda and the local cloud run it: traced (X-Ray), its log lines carrying the invocation's
// context, every metric it gathered flushed after each invocation, and for the API handlers the request id
// returned in `x-request-id` (and carried by the logs as their correlation id) and each answer counted.
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import middy, { type MiddlewareObj, type MiddyfiedHandler } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { type HandlerName, routes } from '../../schemas/topology';
import type { Clock } from '../ports';
import { errorCodeOf } from '../http/errors';
import { requestIdHeader, requestIdOf } from '../http/request-id';

/** What an API answer reports to the metrics. */
export interface ApiMetrics {
  answered(request: { operation: string; status: number; code?: string; durationMs: number }): void;
}

/** What observing a handler needs (built by wiring/observability.ts). */
export interface ObserveDeps {
  /** The handler's topology name: its routes are the operations counted (none for a handler without routes). */
  handlerName: HandlerName | undefined;
  /** X-Ray, loading since init; undefined outside Lambda. */
  tracer: Promise<Tracer | undefined> | undefined;
  inLambda: boolean;
  logger: Logger;
  clock: Clock;
  /** The API requests' metrics, built only for a handler with routes. */
  apiMetrics: () => ApiMetrics;
  /** Flushes every metric the instance set gathered, whichever handler's code observed it. */
  publishAll: () => void;
  /** Annotates the invocation's trace, when tracing is on. */
  annotate: (key: string, value: string) => void;
}

/** What API Gateway answers for a function that threw instead of answering (an injected crash, a bug). */
const crashedStatus = 502;

/**
 * Wraps a handler from outside: the API middleware sees the answer the handler's own error middleware made
 * (an error answer included), which a middleware added to the handler itself would see only after it.
 *
 * @example
 * const wiring = Wiring.forLambda('kvRead');
 * export const handler = observe(kvReadHandler(kvReadDeps(wiring)), observeDeps(wiring));
 */
export function observe<Event, Result>(handler: MiddyfiedHandler<Event, Result>, deps: ObserveDeps): MiddyfiedHandler<Event, Result> {
  // The inner handler keeps its own deadline (middy's early timeout); a second one here would race it.
  const outer = middy<Event, Result>((event: Event, context: Context) => handler(event, context), { timeoutEarlyInMillis: 0 });
  // Used first, so its `after` runs last (middy unwinds in reverse): the flush carries what the others counted.
  const flush = async () => deps.publishAll();
  outer.use({ after: flush, onError: flush });
  if (deps.tracer) outer.use(traceInvocation(deps.tracer));
  // In Lambda only: the local cloud plays every function in one process, where one logger's keys would mix requests.
  if (deps.inLambda) outer.use(injectLambdaContext(deps.logger, { resetKeys: true }));
  const operations = operationsOf(deps.handlerName);
  if (operations.size > 0) outer.use(apiAnswers(deps, operations) as unknown as MiddlewareObj<Event, Result>);
  return outer;
}

/** Powertools' X-Ray middleware, once the tracer (loading since init) is there. Responses are not captured: they hold values. */
function traceInvocation<Event, Result>(loading: Promise<Tracer | undefined>): MiddlewareObj<Event, Result> {
  let capture: MiddlewareObj | undefined;
  return {
    before: async (request) => {
      const tracer = await loading;
      if (!tracer) return;
      capture ??= captureLambdaHandler(tracer, { captureResponse: false }) as MiddlewareObj;
      await capture.before?.(request);
    },
    after: async (request) => {
      await capture?.after?.(request);
    },
    onError: async (request) => {
      await capture?.onError?.(request);
    },
  };
}

/** The operationId of each `<method> <resource>` the handler serves. */
function operationsOf(name: HandlerName | undefined): Map<string, string> {
  return new Map(routes.filter((route) => route.handler === name).map((route) => [`${route.method} ${route.path}`, route.operationId]));
}

function apiAnswers(deps: ObserveDeps, operations: Map<string, string>): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  const { clock, logger } = deps;
  const stats = deps.apiMetrics();
  const startedAt = new WeakMap<object, number>();
  const operationOf = (event: APIGatewayProxyEvent | null) =>
    operations.get(`${event?.httpMethod ?? ''} ${event?.resource ?? ''}`) ?? 'unrouted';
  const elapsedMs = (request: { context: object }) => Math.max(0, clock.monotonicMs() - (startedAt.get(request.context) ?? 0));
  return {
    before: (request) => {
      startedAt.set(request.context, clock.monotonicMs());
      const requestId = requestIdOf(request.event, request.context);
      if (deps.inLambda) logger.setCorrelationId(requestId);
      deps.annotate('requestId', requestId);
    },
    after: (request) => {
      const response = request.response;
      if (!response) return;
      response.headers = { ...response.headers, [requestIdHeader]: requestIdOf(request.event, request.context) };
      const code = errorCodeOf(response);
      stats.answered({
        operation: operationOf(request.event),
        status: response.statusCode,
        ...(code ? { code } : {}),
        durationMs: elapsedMs(request),
      });
    },
    // The handler threw past its error middleware: no answer to stamp, and API Gateway answers 502.
    onError: (request) => {
      stats.answered({ operation: operationOf(request.event), status: crashedStatus, code: 'internal', durationMs: elapsedMs(request) });
    },
  };
}
