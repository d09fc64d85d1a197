// Starts `npm start`'s launcher as a child process on free ports and reads the facts it prints.
// Integration tests use the very launcher users run, in its own process (as Lambda is to API Gateway).
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultOrphanGuard, guardedCommand } from '../../cdk/local/engines/child';
import { npmStartArgs } from './npm-start';
import { reportAfterFile, stopAfterFile } from './teardown';

export interface LocalCloudProcess {
  url: string;
  apiKey: string;
  adminKey: string;
  /** The DynamoDB Local endpoint the cloud's tables live on (`DynamoDB:` line). */
  dynamodbEndpoint: string;
  /** The L2 cache (`Redis:` line); undefined when the machine has no redis-server. */
  redisUrl: string | undefined;
  /** `GET`/`PUT` the fault plan here (`Faults:` line); undefined unless started with RINGSTORE_FAULT_INJECTION=1. */
  faultsUrl: string | undefined;
  pid: number;
  stop(): Promise<void>;
}

const root = join(__dirname, '..', '..');
/** Bounded wait for a start (the first start on a fresh machine may also fetch jars). */
export const startTimeoutMs = 240_000;

/** The `Name: value` lines main.ts prints, one fact each. */
export const factLine = /^(API|API key|Admin key|DynamoDB|Redis|Faults): (\S+)$/;

export async function startLocalCloudProcess(options: {
  home: string;
  env?: Record<string, string>;
  /** Arguments after `npm start --`, e.g. `--accept-demoted`. */
  args?: readonly string[];
}): Promise<LocalCloudProcess> {
  const env: NodeJS.ProcessEnv = { ...process.env, RINGSTORE_PORT: '0', RINGSTORE_HOME: options.home, ...options.env };
  // Node, as `npm start` runs it: one process, so a signal reaches the launcher itself.
  // Tied to this process (the orphan guard engines use): a test process that is killed takes its cloud with it.
  const { file, argv } = guardedCommand(defaultOrphanGuard(), process.execPath, [...npmStartArgs(), ...(options.args ?? [])]);
  const child: ChildProcess = spawn(file, argv, {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  // The cloud's whole log, for a failure the last 20 kB do not explain: RINGSTORE_TEST_CLOUD_LOG=<file>.
  const logFile = process.env.RINGSTORE_TEST_CLOUD_LOG;
  child.stderr!.on('data', (chunk: Buffer) => {
    if (logFile) appendFileSync(logFile, chunk);
    stderr += chunk.toString();
    if (stderr.length > 20_000) stderr = stderr.slice(-20_000);
  });
  // The handlers' ERROR lines (a 500's cause), printed after the test file when there are any.
  const errorLines = keepErrorLines(child);
  reportAfterFile(`the local cloud in ${options.home}`, errorLines);
  // main.ts prints Redis (when it runs) before Faults, and both right after DynamoDB; with fault
  // injection requested, the Faults line is the last one to wait for.
  const faultsRequested = env.RINGSTORE_FAULT_INJECTION === '1';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = stopAfterFile(`the local cloud in ${options.home} (pid ${child.pid})`, async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  const ready = new Promise<Record<string, string>>((resolve, reject) => {
    const found: Record<string, string> = {};
    // The line not ended yet: each line is read once, however long the cloud runs and logs.
    let partial = '';
    const timer = setTimeout(() => reject(new Error(`local cloud did not start in ${startTimeoutMs} ms:\n${stderr}`)), startTimeoutMs);
    child.stdout!.on('data', (chunk: Buffer) => {
      if (logFile) appendFileSync(logFile, chunk);
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const match = factLine.exec(line.trim());
        if (match) found[match[1]!] = match[2]!;
      }
      if (found.API && found['API key'] && found['Admin key'] && found.DynamoDB && (!faultsRequested || found.Faults)) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`local cloud exited with ${code} before it was ready:\n${stderr}`));
    });
  });
  let facts: Record<string, string>;
  try {
    facts = await ready;
  } catch (error) {
    // A cloud that never became ready is stopped here: no caller holds it to stop.
    await stop();
    throw error;
  }
  return {
    url: facts.API!,
    apiKey: facts['API key']!,
    adminKey: facts['Admin key']!,
    dynamodbEndpoint: facts.DynamoDB!,
    // Read on access: without fault injection the Redis line may arrive just after the ones awaited.
    get redisUrl() {
      return facts.Redis;
    },
    get faultsUrl() {
      return facts.Faults;
    },
    pid: child.pid!,
    stop,
  };
}

/** How many of a cloud's ERROR lines are kept for the report after the file (the latest). */
const errorLinesKept = 20;

/** Collects the lines of the child's output that log at ERROR; answers the latest of them. */
function keepErrorLines(child: ChildProcess): () => string[] {
  const kept: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) {
    let partial = '';
    stream.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line.includes('"level":"ERROR"')) kept.push(line.slice(0, 2_000));
      if (kept.length > errorLinesKept) kept.splice(0, kept.length - errorLinesKept);
    });
  }
  return () => [...kept];
}
