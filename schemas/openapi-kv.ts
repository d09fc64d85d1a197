// The OpenAPI operations of the KV routes that act on several keys or on a value's content: batch reads and
// counters. schemas/openapi.ts gathers them with the others.
import { ConditionalHeaders } from './api';
import { BatchGetBody, BatchGetResponse } from './kv-batch';
import { IncrementAck, IncrementBody } from './kv-increment';
import { error, json, jsonBody, keyParam, type Operation } from './openapi-helpers';
import { limits } from './topology';

export const kvBatchAndCounterOperations: Record<string, Operation> = {
  batchGet: {
    summary:
      `Read up to ${limits.batchGetKeysMax} keys at once, each as GET reads it (query consistency as GET's), ` +
      'answered in request order: found with its value, or not found',
    request: { body: jsonBody(BatchGetBody, { keys: ['user/1', 'user/2', 'config'] }) },
    responses: {
      200: json(
        BatchGetResponse,
        `One item per key, in request order. A value comes inline (base64) while the answer holds under ` +
          `${limits.batchGetValueBytesMax} bytes of values; a value kept in S3 comes as a presigned url; one past the ` +
          'budget as valueOmitted (read it with GET)',
      ),
      400: error(
        `No keys, more than ${limits.batchGetKeysMax}, a key named twice (details.duplicates), or a key a GET would refuse ` +
          '(kv.keyInvalid, details.field keys.<index>): nothing is read',
      ),
      429: error(`The namespace's rate: a batch of n keys counts as n requests (quota.rate)`),
      503: error(
        'A key could not be read as a GET of it could not (shard.unavailable: no replica answered; shard.failingOver under a ' +
          'strong read): details.key names it, retryable; nothing partial is answered',
      ),
    },
  },
  incrementValue: {
    summary:
      'Add to a counter atomically (as DynamoDB ADD, Redis INCRBY): the key holds a decimal integer as text/plain, a missing ' +
      'key counts as 0; one versioned write, replicated and conditional as a PUT',
    request: { params: keyParam, headers: ConditionalHeaders, body: jsonBody(IncrementBody, { by: 5 }) },
    responses: {
      200: {
        ...json(IncrementAck, 'Written: the new value and version (also the ETag)'),
        headers: { ETag: { schema: { type: 'string' } } },
      },
      400: error('by is not an integer from -(2^53-1) to 2^53-1 (details.field by), or a bad header: nothing is written'),
      409: error(
        'The key holds no decimal integer (kv.notAnInteger) or the sum would leave the safe integers (kv.outOfRange): nothing ' +
          'is written. Or the key is written by others at the same instant, round after round (txn.conflict, retryable)',
      ),
      412: error('If-Match or If-None-Match did not hold on the key as read (details.field names it). Nothing was written'),
      503: error('Strong write: no replica could take the version (not acknowledged; the owner may hold it). Or the owner is unavailable'),
    },
  },
};
