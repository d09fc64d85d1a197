// One DynamoDB Local for all the fault clouds of a jest worker (docs/testing.md, "Time"): a cloud started on it
// (RINGSTORE_DYNAMODB_ENDPOINT, a stage of its own) skips the engine's JVM start and warm-up, about 4 CPU-seconds a
// cloud. (A cloud without cross-region DR runs no queues, so no ElasticMQ.) They run in a daemon (shared-engines-daemon.ts)
// that the worker starts detached, holding none of its handles, and that dies with the worker (the engines' orphan
// guard); the next file of the worker finds it by the worker's pid.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultOrphanGuard, guardedCommand, pidAlive } from '../../cdk/local/engines/child';

export interface SharedEngines {
  dynamodb: string;
}

const root = join(__dirname, '..', '..');
const prefix = 'ringstore-shared-engines-';
/** The first start on a machine may fetch the jars; later ones take a few seconds. */
const startBoundMs = 240_000;

const directoryOf = (pid: number) => join(tmpdir(), `${prefix}${pid}`);

/** The engines this worker's earlier files started, if their daemon still runs. */
function running(directory: string): SharedEngines | undefined {
  const endpoints = join(directory, 'endpoints.json');
  if (!existsSync(endpoints)) return undefined;
  const found = JSON.parse(readFileSync(endpoints, 'utf8')) as SharedEngines & { pid: number };
  return pidAlive(found.pid) ? { dynamodb: found.dynamodb } : undefined;
}

/** Directories of daemons whose worker is gone (killed with it, they could not remove their own). */
function removeStale(): void {
  for (const entry of readdirSync(tmpdir())) {
    const pid = Number(entry.slice(prefix.length));
    if (!entry.startsWith(prefix) || !Number.isInteger(pid) || pidAlive(pid)) continue;
    rmSync(join(tmpdir(), entry), { recursive: true, force: true });
  }
}

/** Waits for a daemon this worker stopped (stopSharedEngines) to have removed its directory. */
async function stoppedEarlier(directory: string): Promise<void> {
  const stopping = join(directory, 'stopping.pid');
  if (!existsSync(stopping)) return;
  const pid = Number(readFileSync(stopping, 'utf8'));
  for (const deadline = Date.now() + 30_000; pidAlive(pid) && Date.now() < deadline;)
    await new Promise((resolve) => setTimeout(resolve, 100));
}

/** Whether this run shares engines: on unless RINGSTORE_TEST_SHARED_ENGINES=0. */
export function sharingEngines(): boolean {
  return process.env.RINGSTORE_TEST_SHARED_ENGINES !== '0';
}

/** The worker's shared engines, started by its first caller. */
export async function sharedEngines(): Promise<SharedEngines> {
  const directory = directoryOf(process.pid);
  const found = running(directory);
  if (found) return found;
  await stoppedEarlier(directory);
  removeStale();
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true });
  const log = openSync(join(directory, 'daemon.log'), 'a');
  const { file, argv } = guardedCommand(defaultOrphanGuard(), process.execPath, [
    '--import',
    'tsx',
    join(__dirname, 'shared-engines-daemon.ts'),
    directory,
  ]);
  const daemon = spawn(file, argv, {
    cwd: root,
    detached: true,
    stdio: ['ignore', log, log],
    env: { ...process.env, RINGSTORE_VENDOR_DIR: process.env.RINGSTORE_VENDOR_DIR ?? join(root, '.ringstore', 'vendor') },
  });
  closeSync(log);
  daemon.unref();
  for (const deadline = Date.now() + startBoundMs; Date.now() < deadline;) {
    const started = running(directory);
    if (started) return started;
    if (daemon.exitCode !== null || daemon.signalCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const output = existsSync(join(directory, 'daemon.log')) ? readFileSync(join(directory, 'daemon.log'), 'utf8').slice(-4_000) : '';
  throw new Error(`the shared engines did not start (exit ${daemon.exitCode ?? daemon.signalCode ?? 'none yet'}):\n${output}`);
}

/**
 * Stops this worker's shared engines, if its earlier files started them: called when the worker turns to files
 * that do not use them (the integration project, after every fault suite), so that they do not idle to the run's
 * end. A later fault file of the worker would start them again.
 */
export function stopSharedEngines(): void {
  const directory = directoryOf(process.pid);
  const endpoints = join(directory, 'endpoints.json');
  if (!existsSync(endpoints)) return;
  const { pid } = JSON.parse(readFileSync(endpoints, 'utf8')) as { pid: number };
  // No later file finds them; the daemon stops its engines on SIGTERM and then removes the directory, which a new
  // daemon of this worker waits for (stopping.pid).
  writeFileSync(join(directory, 'stopping.pid'), String(pid));
  rmSync(endpoints, { force: true });
  if (pidAlive(pid)) process.kill(pid, 'SIGTERM');
}
