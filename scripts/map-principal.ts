// `npm run map-principal -- --arn <role or user ARN> --namespace ops [--role admin] [--stage dev]`: the operator's
// way to map the first IAM principal of a deployment that takes IAM-signed requests only (CDK context
// `auth=iam`), with the operator's own AWS credentials; later mappings go through the admin API.
import { parseArgs } from 'node:util';
import { loadConfig } from '../lambdas/config';
import { iamPrincipalService } from '../lambdas/wiring/control';
import { closeConnections } from '../lambdas/wiring/data';
import { Wiring } from '../lambdas/wiring/wiring';
import { envVars } from '../schemas/topology';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      arn: { type: 'string' },
      namespace: { type: 'string' },
      role: { type: 'string', default: 'user' },
      stage: { type: 'string', default: 'dev' },
      description: { type: 'string' },
      endpoint: { type: 'string' },
    },
  });
  if (!values.arn || !values.namespace || (values.role !== 'user' && values.role !== 'admin')) {
    console.error(
      'usage: npm run map-principal -- --arn <role or user ARN> --namespace <ns> [--role user|admin] [--stage dev] [--endpoint url]',
    );
    process.exit(2);
  }
  const config = loadConfig({
    ...process.env,
    [envVars.stage]: values.stage,
    ...(values.endpoint ? { [envVars.dynamodbEndpoint]: values.endpoint } : {}),
  });
  const wiring = Wiring.create({ config });
  // The first mapping may name a namespace nothing uses yet: there is no API key in an IAM-only deployment.
  const mapping = await iamPrincipalService(wiring).create(
    {
      principalArn: values.arn,
      namespace: values.namespace,
      role: values.role,
      ...(values.description ? { description: values.description } : {}),
    },
    { newNamespace: true },
  );
  console.log(`mapped ${mapping.matchArn} -> namespace ${mapping.namespace} (${mapping.role})`);
  await closeConnections(wiring);
}

main().catch((error: unknown) => {
  console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
