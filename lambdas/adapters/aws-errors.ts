// Translates AWS SDK exceptions into Ringstore errors, so no SDK type leaks upward, and the one helper
// every adapter runs its calls through.
import type { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
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

/**
 * A socket error known only by its message: the SDK's retry wraps an error thrown from another realm (a
 * test VM) as "AWS SDK error wrapper for Error: connect ECONNREFUSED ...", dropping its code.
 */
const networkFailure = /\b(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT)\b/;

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
  if (
    unavailableNames.has(name) ||
    unavailableNames.has(code) ||
    fault === 'server' ||
    name === 'AbortError' ||
    networkFailure.test(message)
  ) {
    return new RingstoreError('shard.unavailable', `${what} failed: ${message}`, { retryable: true, cause: error });
  }
  return new RingstoreError('internal', `${what} failed: ${name || 'Error'}: ${message}`, { cause: error });
}

/**
 * Runs one AWS call and translates its failure, so every adapter reports errors the same way.
 *
 * @example
 * const { Item } = await awsCall('ring read', () => rings.build(GetItemCommand).key(ringKey).send());
 */
export async function awsCall<T>(what: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    throw translateAwsError(error, what);
  }
}

/**
 * A DynamoDB write whose condition did not hold: an expected outcome, not a failure. Narrows to the SDK's
 * exception, whose `Item` is the item as it stood when the write asked for it (returnValuesOnConditionFalse).
 */
export function isConditionalCheckFailure(error: unknown): error is ConditionalCheckFailedException {
  return (error as { name?: string } | undefined)?.name === 'ConditionalCheckFailedException';
}

/**
 * Runs a conditional write: `true` when it happened, `false` when its condition did not hold; any other
 * failure is translated.
 *
 * @example
 * const created = await conditionalWrite('ring creation', () => put.options({ condition: { attr: 'pk', exists: false } }).send());
 */
export async function conditionalWrite(what: string, action: () => Promise<unknown>): Promise<boolean> {
  try {
    await action();
    return true;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return false;
    throw translateAwsError(error, what);
  }
}
