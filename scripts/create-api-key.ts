// `npm run create-api-key -- --namespace team-a [--role admin] [--stage dev]`: the operator's way to
// mint the first admin key of a deployment, with the operator's own AWS credentials (the admin
// API needs an admin key to create more). Writes the hashed key to the stage's control table.
import { parseArgs } from 'node:util';
import { loadConfig } from '../lambdas/config';
import { apiKeyService } from '../lambdas/wiring/control';
import { closeConnections } from '../lambdas/wiring/data';
import { Wiring } from '../lambdas/wiring/wiring';
import { envVars } from '../schemas/topology';

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
  // The handlers' own configuration schema and builder, pointed at the stage (and a local endpoint if given).
  const config = loadConfig({
    ...process.env,
    [envVars.stage]: values.stage,
    ...(values.endpoint ? { [envVars.dynamodbEndpoint]: values.endpoint } : {}),
  });
  const wiring = Wiring.create({ config });
  const { apiKey, record } = await apiKeyService(wiring).create({
    namespace: values.namespace,
    role: values.role,
    ...(values.description ? { description: values.description } : {}),
  });
  console.log(`API key: ${apiKey}`);
  console.log(`keyId: ${record.keyId} namespace: ${record.namespace} role: ${record.role}`);
  await closeConnections(wiring);
}

main().catch((error: unknown) => {
  console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
