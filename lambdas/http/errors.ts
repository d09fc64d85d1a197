// Turns thrown errors into the JSON error shape with the status the contract gives each code
// (schemas/errors.ts): the middy middleware every HTTP handler uses.
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { retryAfterSeconds, statusOf } from '../../schemas/errors';
import { RingstoreError } from '../core/errors';
import { isCrashInjected } from '../core/faults';

export function errorResponse(error: RingstoreError, method?: string): APIGatewayProxyResult {
  const statusCode = statusOf[error.code];
  const body = {
    error: { code: error.code, message: error.message, retryable: error.retryable, ...(error.details ? { details: error.details } : {}) },
  };
  return {
    statusCode,
    headers: {
      'content-type': 'application/json',
      ...(statusCode === 429 || statusCode === 503 ? { 'retry-after': String(retryAfterSeconds) } : {}),
    },
    // HEAD responses carry no body, as in HTTP.
    body: method === 'HEAD' ? '' : JSON.stringify(body),
  };
}

export interface ErrorLogger {
  error(message: string, details: Record<string, unknown>): void;
}

/** Turns any thrown error into the JSON error shape; only unexpected errors are logged and answer 500. */
export function httpErrors<Event extends { httpMethod?: string }>(logger: ErrorLogger): MiddlewareObj<Event, APIGatewayProxyResult> {
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
        error: error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error),
      });
      request.response = errorResponse(
        error instanceof RingstoreError ? error : new RingstoreError('internal', 'internal error', { cause: error }),
        method,
      );
    },
  };
}
