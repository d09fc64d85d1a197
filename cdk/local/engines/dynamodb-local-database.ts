// What the local cloud does to DynamoDB Local's SQLite database, with EngineDatabase.java and the engine's
// own sqlite4java. The class is compiled once per machine into the vendor directory. Without a JDK (javac)
// the engine runs as it comes, slower, and a line in the log says so.
//
// Write-ahead log (`setJournal`, before the engine starts). DynamoDB Local opens its database in
// SQLite's rollback-journal mode with full syncs: each commit writes and syncs a journal, the database, and
// deletes the journal, and a reader and a commit exclude each other. In write-ahead-log mode a commit
// appends to the log and syncs it once, and reads run beside a write. SQLite keeps the mode in the file,
// so the engine opens it that way. Measured on this machine (`npm run bench:copy-shape`, a bare engine,
// items of 1 KiB, the shard schema): raw BatchWriteItem 1,196 items/s against 645, medians of three rounds
// (docs/benchmarks.md, "The engine's journal", which also says why it is not the default). A
// database made now also gets pages of 4 KiB (the bundled SQLite 3.8.7 makes 1 KiB pages, so each 1 KiB
// item spread over overflow pages); a kept database keeps its page size.
//
// Stream indexes (`addStreamIndexes`, once the engine answers). DynamoDB Local keeps every stream record
// of every table in one SQLite table (`us`) keyed by sequence number alone, and finds a stream's or a
// shard's records by scanning it: getStreamDescription, which runs on every write to a table with a
// stream, takes MIN(SequenceNumber) WHERE StreamID = ?, and every GetRecords, of a reader that is caught
// up too, reads WHERE StreamID = ? AND ShardID = ? AND SequenceNumber >= ?. So every write and every poll
// read every record the engine held (records stay 24 hours), and the engine slowed as its streams grew: in
// a 20,000-key rebalance the copy fell to about 16 items/s with 9,000 records in `us` (jstack: the engine's
// one SQLite thread in getStreamDescription and GetRecords), and ran at about 180 items/s once indexes were
// added to the running engine. Real DynamoDB Streams cost does not grow with the stream. The indexes are
// one column each (EngineDatabase.java says why: a second column made the bundled SQLite read a stream's
// every record per GetRecords).
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { type FileHandle, mkdir, open, rename, rm } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { javaExecutable, QUICK_START_JVM_FLAGS } from './java';
import { which } from './child';
import type { DynamoDbJournal } from './types';

const run = promisify(execFile);
const source = join(__dirname, 'EngineDatabase.java');
/** sqlite4java as DynamoDB Local ships it (vendor.ts checks the file is there). */
const sqliteJar = 'sqlite4java-1.0.392.jar';
/** DynamoDB Local's database file with -sharedDb. */
export const sharedDatabaseFile = 'shared-local-instance.db';
const noJavac = 'no javac (a JDK) on this machine';

export interface EngineDatabaseOptions {
  /** DynamoDB Local's directory (its jars and sqlite4java's native library). */
  engineDir: string;
  /** Where the compiled helper is kept. */
  vendorDir: string;
  /** DynamoDB Local's -dbPath. */
  dataDir: string;
}

type Logged = EngineDatabaseOptions & { log: (line: string) => void };

/**
 * Puts the database in `dataDir` (made now if there is none) in `journal` mode (engines/types.ts). Run before
 * the engine starts. Resolves true once it is; false (with a log line) when it could not be, and the engine
 * then runs in the mode the database had.
 *
 * @example
 * const engineDir = '.ringstore/vendor/DynamoDBLocal-2.6.1';
 * await setJournal('wal', { engineDir, vendorDir: '.ringstore/vendor', dataDir, log: console.log });
 */
export async function setJournal(journal: DynamoDbJournal, options: Logged): Promise<boolean> {
  // The engine makes a database in its rollback journal: only a kept one in the write-ahead log needs
  // changing back, and most starts need no JVM for it.
  if (journal === 'rollback' && (await journalOfFile(join(options.dataDir, sharedDatabaseFile))) !== 'wal') return true;
  return runLogged(
    options,
    journal,
    `its database stays in the journal mode it had, not ${journal === 'wal' ? 'the write-ahead log' : 'rollback'}`,
  );
}

/**
 * Adds the stream-record indexes to the database in `dataDir` of a DynamoDB Local that answers.
 * Resolves true once they are there; false (with a log line) when they could not be added.
 */
export function addStreamIndexes(options: Logged): Promise<boolean> {
  return runLogged(options, 'index', 'its stream records stay unindexed: writes slow as streams grow');
}

/** The database's journal mode, page size and stream-record indexes (read only); undefined without javac. For tests and diagnosis. */
export async function engineDatabaseFacts(
  options: EngineDatabaseOptions,
): Promise<{ journalMode: string; pageBytes: number; streamIndexes: string[] } | undefined> {
  const output = await runHelper(options, 'check');
  if (output === undefined) return undefined;
  const [journalMode = '', pageBytes = '0', ...streamIndexes] = output.split('\n').filter((line) => line.length > 0);
  return { journalMode, pageBytes: Number(pageBytes), streamIndexes };
}

/**
 * The journal a SQLite database file is in, from its header (bytes 18 and 19, the file format's read and
 * write versions: 1 for the rollback journal, 2 for the write-ahead log); undefined when there is no file.
 */
async function journalOfFile(file: string): Promise<DynamoDbJournal | undefined> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(file, 'r');
    const header = Buffer.alloc(20);
    const { bytesRead } = await handle.read(header, 0, header.length, 0);
    if (bytesRead < header.length) return undefined;
    return header[18] === 2 ? 'wal' : 'rollback';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  } finally {
    await handle?.close();
  }
}

async function runLogged(options: Logged, command: DynamoDbJournal | 'index', without: string): Promise<boolean> {
  try {
    if ((await runHelper(options, command)) === undefined) {
      options.log(`DynamoDB Local: ${noJavac}, so ${without}`);
      return false;
    }
    return true;
  } catch (error) {
    const detail = error instanceof Error ? error.message.split('\n')[0] : String(error);
    options.log(`DynamoDB Local: ${command} of its database failed (${detail}), so ${without}`);
    return false;
  }
}

/** Runs EngineDatabase.java's `command` on the database; its output, or undefined without javac. */
async function runHelper({ engineDir, vendorDir, dataDir }: EngineDatabaseOptions, command: string): Promise<string | undefined> {
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
      'EngineDatabase',
      command,
      join(dataDir, sharedDatabaseFile),
    ],
    { timeout: 60_000 },
  );
  return stdout;
}

/** The directory holding EngineDatabase.class, compiled now if this source was not compiled before; undefined without javac. */
async function compiledHelper(engineDir: string, vendorDir: string): Promise<string | undefined> {
  const digest = createHash('sha256').update(readFileSync(source)).digest('hex').slice(0, 12);
  const classDir = join(vendorDir, `ringstore-engine-database-${digest}`);
  if (existsSync(join(classDir, 'EngineDatabase.class'))) return classDir;
  const javac = javacExecutable();
  if (!javac) return undefined;
  // Compiled aside and renamed into place: engines started at once each compile, the first rename wins.
  const temp = `${classDir}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await mkdir(temp, { recursive: true });
  try {
    await run(javac, ['-nowarn', '-cp', join(engineDir, sqliteJar), '-d', temp, source], { timeout: 120_000 });
    await rename(temp, classDir).catch((error: unknown) => {
      if (!existsSync(join(classDir, 'EngineDatabase.class'))) throw error;
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
