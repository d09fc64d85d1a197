// The AWS SDK clients, one of each per instance set, pointed at local engines when the config says so.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Permits } from '../core/bounded';
import { rebalanceDefaults } from '../../schemas/topology';
import { traced } from './observability';
import type { Wiring } from './wiring';

/** SDK attempts per call (the SDK's own jittered backoff between them). */
const sdkAttemptsMax = 3;

/**
 * `client` without the SDK's logger middleware. No Ringstore client is given a logger, but the middleware still
 * builds the log entry of every call for the no-op one: it walks the whole input and output against their schemas
 * to mask sensitive fields (2.4% of a busy local cloud's CPU, measured with --cpu-prof; more for a BatchGetItem of
 * 100 items). Errors still reach the caller, which logs them (lambdas/http).
 */
export function withoutRequestLogging<Client extends { middlewareStack: { remove(name: string): boolean } }>(client: Client): Client {
  client.middlewareStack.remove('loggerMiddleware');
  return client;
}

/** Options shared by every AWS client; endpoints are overridden only for local engines. */
export function clientOptions(wiring: Wiring, endpoint: string | undefined) {
  const credentials = wiring.awsCredentials ? { credentials: { ...wiring.awsCredentials } } : {};
  return { region: wiring.config.region, ...(endpoint ? { endpoint } : {}), ...credentials, maxAttempts: sdkAttemptsMax };
}

/**
 * The DynamoDB client of a rebalance's data work (its copies, reads of ranges, catch-up and cleanup), apart
 * from the handlers': at most `rebalanceDefaults.requestsInFlight` of its requests are in flight at once, and
 * of those at most `rebalanceDefaults.queriesInFlight` queries, so a move's load on the shard tables is
 * bounded, whatever its pages and waves ask for at once. On DynamoDB Local a client's request waits behind
 * the move's requests the engine is serving: a write behind its writes, anything behind its index queries.
 */
export function moverDocumentClient(wiring: Wiring): DynamoDBDocumentClient {
  return wiring.shared('dynamodbMover', () => {
    const client = traced(wiring, withoutRequestLogging(new DynamoDBClient(clientOptions(wiring, wiring.config.dynamodbEndpoint))));
    const { requestsInFlight, queriesInFlight } = rebalanceDefaults;
    return DynamoDBDocumentClient.from(boundRequestsInFlight(client, requestsInFlight, { queries: queriesInFlight }), {
      marshallOptions: { removeUndefinedValues: true },
    });
  });
}

/**
 * `client`, with at most `count` of its requests in flight at once (retries included), and of those at most
 * `bounds.queries` Query requests; the rest wait their turn, in the order they asked.
 */
export function boundRequestsInFlight(client: DynamoDBClient, count: number, bounds: { queries?: number } = {}): DynamoDBClient {
  const permits = new Permits(count);
  const queryPermits = new Permits(Math.min(count, bounds.queries ?? count));
  client.middlewareStack.add(
    (next, context) => async (args) => {
      // A query takes its own permit first, so that one waiting for it holds none of the others.
      const releaseQuery = context.commandName === 'QueryCommand' ? await queryPermits.acquire() : undefined;
      const release = await permits.acquire();
      try {
        return await next(args);
      } finally {
        release();
        releaseQuery?.();
      }
    },
    { step: 'initialize', name: 'ringstoreRequestsInFlight' },
  );
  return client;
}

export function documentClient(wiring: Wiring): DynamoDBDocumentClient {
  return wiring.shared('dynamodb', () =>
    DynamoDBDocumentClient.from(
      traced(wiring, withoutRequestLogging(new DynamoDBClient(clientOptions(wiring, wiring.config.dynamodbEndpoint)))),
      {
        marshallOptions: { removeUndefinedValues: true },
      },
    ),
  );
}

const isDestroyable = (value: unknown): value is { destroy(): void } =>
  typeof value === 'object' && value !== null && 'destroy' in value && typeof value.destroy === 'function';

/** Closes the clients an instance set opened (scripts and the bench end their process cleanly). */
export function destroyClients(wiring: Wiring): void {
  for (const name of ['dynamodb', 'dynamodbMover', 's3', 'sfn'] as const) {
    const client = wiring.built(name);
    if (isDestroyable(client)) client.destroy();
  }
}
