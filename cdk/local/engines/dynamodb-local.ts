// DynamoDB Local (AWS's own engine) as a child JVM, persisted on disk with one shared database, in its own
// rollback journal or SQLite's write-ahead log (dynamodb-local-database.ts).
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { probeClientConfig } from './aws';
import { spawnManaged } from './child';
import { javaExecutable, NO_VERIFY_JVM_FLAGS, QUICK_START_JVM_FLAGS } from './java';
import { addStreamIndexes, setJournal } from './dynamodb-local-database';
import { waitReady } from './ready';
import { ensureArtifact, type MavenArtifact } from './vendor';
import type { DynamoDbJournal, StartedEngine, EngineStartOptions } from './types';
import { LOCAL_HOST } from './free-port';

/** DynamoDB Local from Maven Central, with the sqlite4java native library it loads via JNI. */
export const DYNAMODB_LOCAL: MavenArtifact = {
  label: 'DynamoDB Local',
  groupId: 'com.amazonaws',
  artifactId: 'DynamoDBLocal',
  version: '2.6.1',
  requiredFiles: ['DynamoDBLocal-2.6.1.jar', 'sqlite4java-1.0.392.jar', 'libsqlite4java-linux-amd64-1.0.392.so'],
};

const MAIN_CLASS = 'com.amazonaws.services.dynamodbv2.local.main.ServerRunner';
/** Heap bound: DynamoDB Local keeps data in SQLite, the heap only holds requests in flight. */
const HEAP_MAX = '-Xmx512m';

/**
 * Starts DynamoDB Local on `port` with `-sharedDb -dbPath <dataDir>`, its database in `journal` mode,
 * and resolves once ListTables answers and its stream records are indexed (dynamodb-local-database.ts). DynamoDB Local has no
 * bind-address option: it listens on all interfaces, and we always talk to it through 127.0.0.1.
 *
 * @example
 * const ddb = await startDynamoDbLocal({ vendorDir, dataDir: '.ringstore/data/dynamodb', port: 8000 });
 */
export async function startDynamoDbLocal(opts: EngineStartOptions & { journal?: DynamoDbJournal }): Promise<StartedEngine> {
  const lib = await ensureArtifact(DYNAMODB_LOCAL, opts.vendorDir, opts.log);
  await mkdir(opts.dataDir, { recursive: true });
  await setJournal(opts.journal ?? 'rollback', { engineDir: lib, vendorDir: opts.vendorDir, dataDir: opts.dataDir, log: opts.log });
  const args = [
    ...QUICK_START_JVM_FLAGS,
    ...NO_VERIFY_JVM_FLAGS,
    HEAP_MAX,
    `-Djava.library.path=${lib}`,
    '-cp',
    join(lib, '*'),
    MAIN_CLASS,
    '-port',
    String(opts.port),
    '-sharedDb',
    '-dbPath',
    opts.dataDir,
    '-disableTelemetry',
  ];
  const child = spawnManaged('DynamoDB Local', javaExecutable(), args, { cwd: opts.dataDir });
  const endpoint = `http://${LOCAL_HOST}:${opts.port}`;
  const client = new DynamoDBClient(probeClientConfig(endpoint));
  try {
    await waitReady({
      name: 'DynamoDB Local',
      child,
      probe: (abortSignal) => client.send(new ListTablesCommand({ Limit: 1 }), { abortSignal }),
      timeoutMs: opts.timeoutMs,
    });
    // Before anything writes to a streamed table: without them every write scans every stream record.
    await addStreamIndexes({ engineDir: lib, vendorDir: opts.vendorDir, dataDir: opts.dataDir, log: opts.log });
  } catch (e) {
    await child.stop();
    throw e;
  } finally {
    client.destroy();
  }
  return { name: 'dynamodb', endpoint, stop: () => child.stop() };
}
