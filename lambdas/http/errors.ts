// The only place error codes become HTTP statuses (design §6), and the middy middleware that does it.
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { type ErrorCode, RingstoreError } from '../core/errors';
import { isCrashInjected } from '../core/faults';

export const statusOf: Record<ErrorCode, number> = {
  'request.invalid': 400,
  'kv.keyInvalid': 400,
  'kv.ttlInvalid': 400,
  'kv.cursorInvalid': 400,
  'kv.checksumMismatch': 400,
  'auth.missingKey': 401,
  'auth.invalidKey': 403,
  'auth.forbidden': 403,
  'route.notFound': 404,
  'kv.notFound': 404,
  'kv.uploadNotFound': 404,
  'admin.keyNotFound': 404,
  'kv.preconditionFailed': 412,
  'txn.conflict': 409,
  'txn.timeout': 409,
  'txn.outcomeUnknown': 503,
  'kv.valueTooLarge': 413,
  'request.tooLarge': 413,
  throttled: 429,
  'shard.unavailable': 503,
  internal: 500,
};

/** Seconds a client should wait before retrying a 429/503. */
export const retryAfterSeconds = 1;

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
      const method = request.event?.httpMethod;
      if (error instanceof RingstoreError && error.code !== 'internal') {
        request.response = errorResponse(error, method);
        return;
      }
      logger.error('request failed', { error: error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error) });
      request.response = errorResponse(
        error instanceof RingstoreError ? error : new RingstoreError('internal', 'internal error', { cause: error }),
        method,
      );
    },
  };
}
