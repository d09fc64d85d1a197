// The integration project's one local cloud, started by the first integration test file a jest worker runs and
// found by the others, rather than by jest's global setup: jest runs every project's global setup before its first
// file, and the integration files run last (test/sequencer.cjs), so a cloud started there idled through the unit,
// cdk and fault projects, about a tenth of a core for six minutes (docs/testing.md, "Time").
//
// Synchronous on purpose: a test file reads RINGSTORE_IT_* as it loads (a client made at module level), which is
// after its setup files but before any `beforeAll`, so the setup file (test/integration/cloud.ts) must have the
// cloud's facts when it returns. The worker has nothing else to do while the cloud starts.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultOrphanGuard, guardedCommand, pidAlive } from '../../cdk/local/engines/child';
import { factLine, startTimeoutMs } from './local-cloud-process';
import { npmStartArgs } from './npm-start';

const root = join(__dirname, '..', '..');

/** Where global-setup.ts put the cloud's home; the cloud's files live in it. */
function homeOf(): string {
  const home = process.env.RINGSTORE_IT_HOME;
  if (!home) throw new Error('RINGSTORE_IT_HOME is not set: integration tests run through jest global setup');
  return home;
}

const files = (home: string) => ({
  /** Created exclusively by the one caller that starts the cloud. */
  lock: join(home, 'cloud.lock'),
  pid: join(home, 'cloud.pid'),
  /** The facts as RINGSTORE_IT_* variables, written whole once the cloud is ready. */
  facts: join(home, 'cloud.json'),
});

/** The cloud's whole output (stdout and stderr), which the audit suites read (RINGSTORE_IT_CLOUD_LOG). */
function logOf(): string {
  const log = process.env.RINGSTORE_IT_CLOUD_LOG;
  if (!log) throw new Error('RINGSTORE_IT_CLOUD_LOG is not set: integration tests run through jest global setup');
  return log;
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function tail(file: string): string {
  return existsSync(file) ? readFileSync(file, 'utf8').slice(-4_000) : '(no output)';
}

/** The cloud's facts printed so far (`API: …` lines), as the variables the tests read, once all are there. */
function factsPrinted(log: string, home: string): Record<string, string> | undefined {
  if (!existsSync(log)) return undefined;
  const found: Record<string, string> = {};
  for (const line of readFileSync(log, 'utf8').split('\n')) {
    const match = factLine.exec(line.trim());
    if (match) found[match[1]!] ??= match[2]!;
  }
  if (!(found.API && found['API key'] && found['Admin key'] && found.DynamoDB)) return undefined;
  return {
    RINGSTORE_IT_URL: found.API,
    RINGSTORE_IT_API_KEY: found['API key'],
    RINGSTORE_IT_ADMIN_KEY: found['Admin key'],
    // For fixtures no request can make (a transaction whose coordinator is gone): its table items.
    RINGSTORE_IT_DYNAMODB: found.DynamoDB,
    RINGSTORE_IT_HOME: home,
  };
}

/** Starts the cloud in `home`, its output appended to `log`; it dies with this process (the engines' orphan guard). */
function startCloud(home: string, log: string): void {
  const output = openSync(log, 'a');
  const { file, argv } = guardedCommand(defaultOrphanGuard(), process.execPath, npmStartArgs());
  const child = spawn(file, argv, {
    cwd: root,
    env: {
      ...process.env,
      RINGSTORE_PORT: '0',
      RINGSTORE_HOME: home,
      // A short authorizer cache keeps the revocation test quick; the default (60 s) is tested in unit tests.
      RINGSTORE_AUTH_CACHE_TTL_SECONDS: '1',
      // No automatic failover: a request slowed past its timeout on a busy machine must not move ranges
      // under the other suites (failover has its own, in test/fault).
      RINGSTORE_AUTO_FAILOVER: '0',
      // At INFO, so the audit lines are in the log the audit suites read.
      POWERTOOLS_LOG_LEVEL: 'INFO',
    },
    stdio: ['ignore', output, output],
  });
  closeSync(output);
  child.unref();
  writeFileSync(files(home).pid, String(child.pid));
}

/**
 * The integration cloud's RINGSTORE_IT_* variables: started by the first caller of the run (an exclusive lock in its
 * home), waited for by the others, within the bound of a local cloud's start.
 */
export function integrationCloudEnv(): Record<string, string> {
  const home = homeOf();
  const log = logOf();
  const paths = files(home);
  if (existsSync(paths.facts)) return JSON.parse(readFileSync(paths.facts, 'utf8')) as Record<string, string>;
  let starter = false;
  try {
    closeSync(openSync(paths.lock, 'wx'));
    starter = true;
  } catch {
    // Another file started it: wait for its facts below.
  }
  if (starter) startCloud(home, log);
  for (const deadline = Date.now() + startTimeoutMs; Date.now() < deadline;) {
    if (existsSync(paths.facts)) return JSON.parse(readFileSync(paths.facts, 'utf8')) as Record<string, string>;
    const pid = existsSync(paths.pid) ? Number(readFileSync(paths.pid, 'utf8')) : undefined;
    if (starter) {
      const facts = factsPrinted(log, home);
      if (facts) {
        // Written whole, then renamed: a reader never sees half of it.
        writeFileSync(`${paths.facts}.partial`, JSON.stringify(facts));
        renameSync(`${paths.facts}.partial`, paths.facts);
        return facts;
      }
    }
    if (pid !== undefined && !pidAlive(pid))
      throw new Error(`the integration cloud (pid ${pid}) exited before it was ready:\n${tail(log)}`);
    sleepSync(100);
  }
  throw new Error(`the integration cloud did not start in ${startTimeoutMs} ms:\n${tail(log)}`);
}

/** Stops the integration cloud if one was started (global teardown): SIGTERM, then SIGKILL after `graceMs`. */
export async function stopIntegrationCloud(home: string, graceMs = 30_000): Promise<void> {
  const pidFile = files(home).pid;
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8'));
  if (!pidAlive(pid)) return;
  process.kill(pid, 'SIGTERM');
  for (const deadline = Date.now() + graceMs; pidAlive(pid); await new Promise((resolve) => setTimeout(resolve, 100))) {
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      break;
    }
  }
  rmSync(pidFile, { force: true });
}
