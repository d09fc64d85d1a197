// The daemon behind shared-engines.ts: starts DynamoDB Local with its data in `directory`, writes its endpoint (and
// the daemon's pid) to `directory/endpoints.json` once it answers, and runs until it is stopped or its
// jest worker dies (the orphan guard it was started under), taking the engines with it.
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDynamoDbLocal } from '../../cdk/local/engines/dynamodb-local';
import { freePorts } from '../../cdk/local/engines/free-port';

async function main(directory: string): Promise<void> {
  const vendorDir = process.env.RINGSTORE_VENDOR_DIR!;
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const [dynamodbPort] = await freePorts(1);
  const dynamodb = await startDynamoDbLocal({ vendorDir, log, dataDir: join(directory, 'dynamodb'), port: dynamodbPort! });
  // Stopped (stopSharedEngines), the daemon takes its data with it; killed with its worker, it leaves the
  // directory to the next run's first start.
  const stop = () => {
    void Promise.allSettled([dynamodb.stop()]).then(() => {
      rmSync(directory, { recursive: true, force: true });
      process.exit(0);
    });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // Written whole, then renamed: a reader never sees half of it.
  const partial = join(directory, 'endpoints.json.partial');
  writeFileSync(partial, JSON.stringify({ pid: process.pid, dynamodb: dynamodb.endpoint }));
  renameSync(partial, join(directory, 'endpoints.json'));
}

main(process.argv[2]!).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
