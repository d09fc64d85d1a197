// Translates AWS SDK exceptions into Ringstore errors (conventions §4), so no SDK type leaks upward.
import { RingstoreError } from '../core/errors';

const throttlingNames = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'SlowDown',
  'TooManyRequestsException',
]);

const unavailableNames = new Set([
  'ResourceNotFoundException',
  'InternalServerError',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'TimeoutError',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
]);

/** Maps an SDK failure to a retryable `throttled`/`shard.unavailable`, or `internal` for the unexpected. */
export function translateAwsError(error: unknown, what: string): RingstoreError {
  if (error instanceof RingstoreError) return error;
  const name = (error as { name?: string; code?: string } | undefined)?.name ?? '';
  const code = (error as { code?: string } | undefined)?.code ?? '';
  const fault = (error as { $fault?: string } | undefined)?.$fault;
  const message = error instanceof Error ? error.message : String(error);
  if (throttlingNames.has(name)) {
    return new RingstoreError('throttled', `${what} was throttled; retry with backoff`, { retryable: true, cause: error });
  }
  if (unavailableNames.has(name) || unavailableNames.has(code) || fault === 'server' || name === 'AbortError') {
    return new RingstoreError('shard.unavailable', `${what} failed: ${message}`, { retryable: true, cause: error });
  }
  return new RingstoreError('internal', `${what} failed: ${name || 'Error'}: ${message}`, { cause: error });
}
