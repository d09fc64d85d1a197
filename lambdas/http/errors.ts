// Turns thrown errors into the JSON error shape with the status the contract gives each code
// (schemas/errors.ts): the middy middleware every HTTP handler uses.
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { retryAfterSeconds, statusOf } from '../../schemas/errors';
import { RingstoreError } from '../core/errors';
import { isCrashInjected } from '../core/faults';
import { requestIdOf } from './request-id';

/** The error code of each error answer built here, for the request metrics (HEAD answers carry no body to read it from). */
const answeredCodes = new WeakMap<APIGatewayProxyResult, string>();

/** The error code an answer carries, if errorResponse built it. */
export function errorCodeOf(response: APIGatewayProxyResult): string | undefined {
  return answeredCodes.get(response);
}

export function errorResponse(error: RingstoreError, method?: string): APIGatewayProxyResult {
  const statusCode = statusOf[error.code];
  const body = {
    error: { code: error.code, message: error.message, retryable: error.retryable, ...(error.details ? { details: error.details } : {}) },
  };
  const response = {
    statusCode,
    headers: {
      'content-type': 'application/json',
      ...(statusCode === 429 || statusCode === 503 ? { 'retry-after': String(retryAfterOf(error)) } : {}),
    },
    // HEAD responses carry no body, as in HTTP.
    body: method === 'HEAD' ? '' : JSON.stringify(body),
  };
  answeredCodes.set(response, error.code);
  return response;
}

/** The wait an error names (a namespace's rate knows when its bucket grants again), else the contract's default. */
function retryAfterOf(error: RingstoreError): number {
  const named = error.details?.retryAfterSeconds;
  return typeof named === 'number' && Number.isInteger(named) && named > 0 ? named : retryAfterSeconds;
}

export interface ErrorLogger {
  error(message: string, details: Record<string, unknown>): void;
}

/** Turns any thrown error into the JSON error shape; only unexpected errors are logged and answer 500. */
export function httpErrors<Event extends { httpMethod?: string; requestContext?: { requestId?: string } }>(
  logger: ErrorLogger,
): MiddlewareObj<Event, APIGatewayProxyResult> {
  return {
    onError: async (request) => {
      const error = request.error;
      // An injected crash is a dying function, not an error response: let it propagate (API Gateway: 502).
      if (isCrashInjected(error)) return;
      // A direct invoke may carry a null event: the error still gets an answer.
      const method = request.event?.httpMethod;
      if (error instanceof RingstoreError && error.code !== 'internal') {
        request.response = errorResponse(error, method);
        return;
      }
      logger.error('request failed', {
        // Named on the line itself: the local cloud plays every function in one process, where the logger's
        // own correlation id may be another request's; in Lambda both are the same id.
        correlation_id: requestIdOf(request.event, request.context),
        error: error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error),
      });
      request.response = errorResponse(
        error instanceof RingstoreError ? error : new RingstoreError('internal', 'internal error', { cause: error }),
        method,
      );
    },
  };
}
