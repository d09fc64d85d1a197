// BatchGetItem over any number of keys on any tables: split into requests of DynamoDB's 100 keys, each
// key once, unprocessed keys (throttling) retried with backoff, and an outage after too many attempts.
// Through lib-dynamodb rather than dynamodb-toolbox: toolbox batches are built per Table instance, while
// one call here may span several tables routed by name (the shard tables of a transaction's keys).
import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { RingstoreError } from '../core/errors';
import { awsCall } from './aws-errors';

/** DynamoDB's bound on keys per BatchGetItem request. */
const batchGetKeysMax = 100;
/** Requests per batch of keys before unprocessed keys (throttling) count as an outage. */
const batchGetAttemptsMax = 5;

export interface BatchGetRequest {
  table: string;
  key: Record<string, string>;
}

export interface BatchGetOptions {
  /** Attribute names to read (a projection: other attributes do not cross the wire). */
  attributes?: readonly string[];
  consistent: boolean;
  /** What the reads are, for errors. */
  what: string;
}

/**
 * The items found, per table, in no particular order (absent keys are simply missing).
 *
 * @example
 * const found = await batchGetItems(client, [{ table: 't', key: { pk: 'a#1' } }], { consistent: true, what: 'intents' });
 */
export async function batchGetItems(
  documentClient: DynamoDBDocumentClient,
  requests: readonly BatchGetRequest[],
  options: BatchGetOptions,
): Promise<Array<{ table: string; item: Record<string, unknown> }>> {
  const found: Array<{ table: string; item: Record<string, unknown> }> = [];
  const projection = options.attributes
    ? {
        ProjectionExpression: options.attributes.map((_, index) => `#a${index}`).join(', '),
        ExpressionAttributeNames: Object.fromEntries(options.attributes.map((name, index) => [`#a${index}`, name])),
      }
    : {};
  for (let start = 0; start < requests.length; start += batchGetKeysMax) {
    let pending: Record<string, { Keys: Array<Record<string, string>> }> = {};
    const seen = new Set<string>();
    for (const { table, key } of requests.slice(start, start + batchGetKeysMax)) {
      // BatchGetItem refuses a key twice in one request.
      const id = `${table}\u0000${JSON.stringify(key)}`;
      if (seen.has(id)) continue;
      seen.add(id);
      (pending[table] ??= { Keys: [] }).Keys.push(key);
    }
    for (let attempt = 0; Object.keys(pending).length > 0; attempt += 1) {
      if (attempt >= batchGetAttemptsMax) {
        throw new RingstoreError('shard.unavailable', `${options.what}: keys left unprocessed after ${attempt} attempts`, {
          retryable: true,
        });
      }
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 2 ** attempt * 10));
      const requestItems = Object.fromEntries(
        Object.entries(pending).map(([table, { Keys }]) => [table, { Keys, ConsistentRead: options.consistent, ...projection }]),
      );
      const { Responses = {}, UnprocessedKeys = {} } = await awsCall(options.what, () =>
        documentClient.send(new BatchGetCommand({ RequestItems: requestItems })),
      );
      for (const [table, items] of Object.entries(Responses)) for (const item of items) found.push({ table, item });
      pending = Object.fromEntries(
        Object.entries(UnprocessedKeys).map(([table, { Keys = [] }]) => [table, { Keys: Keys as Array<Record<string, string>> }]),
      );
    }
  }
  return found;
}
