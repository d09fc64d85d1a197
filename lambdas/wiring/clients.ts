// The AWS SDK clients, one of each per instance set, pointed at local engines when the config says so.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { traced } from './observability';
import type { Wiring } from './wiring';

/** SDK attempts per call (the SDK's own jittered backoff between them). */
const sdkAttemptsMax = 3;

/** Options shared by every AWS client; endpoints are overridden only for local engines. */
export function clientOptions(wiring: Wiring, endpoint: string | undefined) {
  const credentials = wiring.awsCredentials ? { credentials: { ...wiring.awsCredentials } } : {};
  return { region: wiring.config.region, ...(endpoint ? { endpoint } : {}), ...credentials, maxAttempts: sdkAttemptsMax };
}

export function documentClient(wiring: Wiring): DynamoDBDocumentClient {
  return wiring.shared('dynamodb', () =>
    DynamoDBDocumentClient.from(traced(wiring, new DynamoDBClient(clientOptions(wiring, wiring.config.dynamodbEndpoint))), {
      marshallOptions: { removeUndefinedValues: true },
    }),
  );
}

const isDestroyable = (value: unknown): value is { destroy(): void } =>
  typeof value === 'object' && value !== null && 'destroy' in value && typeof value.destroy === 'function';

/** Closes the clients an instance set opened (scripts and the bench end their process cleanly). */
export function destroyClients(wiring: Wiring): void {
  for (const name of ['dynamodb', 's3', 'sfn'] as const) {
    const client = wiring.built(name);
    if (isDestroyable(client)) client.destroy();
  }
}
