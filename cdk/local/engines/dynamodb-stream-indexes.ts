// Stream indexes for DynamoDB Local. DynamoDB Local keeps every stream record of every table in one
// SQLite table (`us`) keyed by sequence number alone, and finds a stream's or a shard's records by
// scanning it: getStreamDescription, which runs on every write to a table with a stream, takes
// MIN(SequenceNumber) WHERE StreamID = ?, and every GetRecords, of a reader that is caught up too, reads
// WHERE StreamID = ? AND ShardID = ? AND SequenceNumber >= ?. So every write and every poll read every
// record the engine held (records stay 24 hours), and the engine slowed as its streams grew: in a
// 20,000-key rebalance the copy fell to about 16 items/s with 9,000 records in `us` (jstack: the engine's
// one SQLite thread in getStreamDescription and GetRecords), and ran at about 180 items/s once indexes
// were added to the running engine. Real DynamoDB Streams cost does not grow with the stream.
//
// The indexes are one column each (StreamIndexes.java says why: a second column made the bundled
// SQLite 3.8.7 read a stream's every record per GetRecords). They are added by StreamIndexes.java with
// the engine's own sqlite4java, once the engine has created its database. The class is compiled once
// per machine into the vendor directory. Without a JDK (javac) the engine runs as it comes, slower, and
// a line in the log says so.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { javaExecutable, QUICK_START_JVM_FLAGS } from './java';
import { which } from './child';

const run = promisify(execFile);
const source = join(__dirname, 'StreamIndexes.java');
/** sqlite4java as DynamoDB Local ships it (vendor.ts checks the file is there). */
const sqliteJar = 'sqlite4java-1.0.392.jar';
/** DynamoDB Local's database file with -sharedDb. */
export const sharedDatabaseFile = 'shared-local-instance.db';

/**
 * Adds the stream-record indexes to the database in `dataDir` of a DynamoDB Local that answers.
 * Resolves true once they are there; false (with a log line) when they could not be added.
 *
 * @example
 * const engineDir = '.ringstore/vendor/DynamoDBLocal-2.6.1';
 * await addStreamIndexes({ engineDir, vendorDir: '.ringstore/vendor', dataDir, log: console.log });
 */
export async function addStreamIndexes(options: StreamIndexOptions & { log: (line: string) => void }): Promise<boolean> {
  const { log } = options;
  try {
    if ((await runHelper(options, [])) === undefined) {
      log('DynamoDB Local: no javac (a JDK) on this machine, so its stream records stay unindexed: writes slow as streams grow');
      return false;
    }
    return true;
  } catch (error) {
    const detail = error instanceof Error ? error.message.split('\n')[0] : String(error);
    log(`DynamoDB Local: could not index its stream records (${detail}): writes slow as streams grow`);
    return false;
  }
}

/**
 * The names of the indexes on DynamoDB Local's stream-record table in `dataDir` (read only); undefined
 * without javac. For tests and diagnosis.
 *
 * @example
 * await streamIndexesOf({ engineDir, vendorDir, dataDir }); // ['ringstore_us_shard', 'ringstore_us_stream']
 */
export async function streamIndexesOf(options: StreamIndexOptions): Promise<string[] | undefined> {
  const output = await runHelper(options, ['--check']);
  return output?.split('\n').filter((line) => line.length > 0);
}

export interface StreamIndexOptions {
  /** DynamoDB Local's directory (its jars and sqlite4java's native library). */
  engineDir: string;
  /** Where the compiled helper is kept. */
  vendorDir: string;
  /** DynamoDB Local's -dbPath. */
  dataDir: string;
}

/** Runs StreamIndexes.java on the database; its output, or undefined without javac. */
async function runHelper({ engineDir, vendorDir, dataDir }: StreamIndexOptions, args: readonly string[]): Promise<string | undefined> {
  const classDir = await compiledHelper(engineDir, vendorDir);
  if (!classDir) return undefined;
  const { stdout } = await run(
    javaExecutable(),
    [
      ...QUICK_START_JVM_FLAGS,
      '-Xmx64m',
      `-Djava.library.path=${engineDir}`,
      '-cp',
      [classDir, join(engineDir, sqliteJar)].join(delimiter),
      'StreamIndexes',
      ...args,
      join(dataDir, sharedDatabaseFile),
    ],
    { timeout: 60_000 },
  );
  return stdout;
}

/** The directory holding StreamIndexes.class, compiled now if this source was not compiled before; undefined without javac. */
async function compiledHelper(engineDir: string, vendorDir: string): Promise<string | undefined> {
  const digest = createHash('sha256').update(readFileSync(source)).digest('hex').slice(0, 12);
  const classDir = join(vendorDir, `ringstore-stream-indexes-${digest}`);
  if (existsSync(join(classDir, 'StreamIndexes.class'))) return classDir;
  const javac = javacExecutable();
  if (!javac) return undefined;
  // Compiled aside and renamed into place: engines started at once each compile, the first rename wins.
  const temp = `${classDir}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await mkdir(temp, { recursive: true });
  try {
    await run(javac, ['-nowarn', '-cp', join(engineDir, sqliteJar), '-d', temp, source], { timeout: 120_000 });
    await rename(temp, classDir).catch((error: unknown) => {
      if (!existsSync(join(classDir, 'StreamIndexes.class'))) throw error;
    });
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
  return classDir;
}

/** `javac` beside the `java` that runs the engines, else on PATH. */
function javacExecutable(): string | undefined {
  const beside = join(dirname(javaExecutable()), 'javac');
  return existsSync(beside) ? beside : which('javac');
}
