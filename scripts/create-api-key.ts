// `npm run create-api-key -- --namespace team-a [--role admin] [--stage dev]`: the operator's way to
// mint the first admin key of a deployment, with the operator's own AWS credentials (the admin
// API needs an admin key to create more). Writes the hashed key to the stage's control table.
import { parseArgs } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoControlStore } from '../lambdas/adapters/dynamodb-control-store';
import { ApiKeyService } from '../lambdas/core/auth';
import { randomIds, systemClock } from '../lambdas/runtime';
import { namesFor } from '../schemas/topology';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      namespace: { type: 'string' },
      role: { type: 'string', default: 'user' },
      stage: { type: 'string', default: 'dev' },
      description: { type: 'string' },
      endpoint: { type: 'string' },
    },
  });
  if (!values.namespace || (values.role !== 'user' && values.role !== 'admin')) {
    console.error('usage: npm run create-api-key -- --namespace <ns> [--role user|admin] [--stage dev] [--endpoint url]');
    process.exit(2);
  }
  const client = new DynamoDBClient(values.endpoint ? { endpoint: values.endpoint } : {});
  const control = new DynamoControlStore(DynamoDBDocumentClient.from(client), namesFor(values.stage).controlTable);
  const service = new ApiKeyService({ keys: control, ids: randomIds, clock: systemClock });
  const { apiKey, record } = await service.create({
    namespace: values.namespace,
    role: values.role,
    ...(values.description ? { description: values.description } : {}),
  });
  console.log(`API key: ${apiKey}`);
  console.log(`keyId: ${record.keyId} namespace: ${record.namespace} role: ${record.role}`);
}

main().catch((error: unknown) => {
  console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
