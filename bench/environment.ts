// What every benchmark run shares: a throwaway local-cloud home, and the facts that say what was
// measured on what (the code, the machine), recorded beside the results.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import * as z from 'zod';
import { localCredentials, localRegion } from '../cdk/local/engines/aws';
import { DYNAMODB_LOCAL, startDynamoDbLocal } from '../cdk/local/engines/dynamodb-local';
import { freePort } from '../cdk/local/engines/free-port';
import { QUICK_START_JVM_FLAGS } from '../cdk/local/engines/java';
import type { DynamoDbJournal } from '../cdk/local/engines/types';

export const benchRoot = resolve(__dirname, '..');
/**
 * Where results and plots are written: bench/results and docs/ (the runs of record), or BENCH_OUTPUT_DIR for
 * a run that must leave them alone (the CI's smoke run of every bench, scripts/bench-smoke.mjs).
 */
export const benchResultsDir = process.env.BENCH_OUTPUT_DIR ? resolve(process.env.BENCH_OUTPUT_DIR) : join(benchRoot, 'bench', 'results');
export const benchPlotsDir = process.env.BENCH_OUTPUT_DIR ? resolve(process.env.BENCH_OUTPUT_DIR) : join(benchRoot, 'docs');

/** A throwaway home whose vendor/ is the shared jar cache, so the engines start from a clean database. */
export function benchHome(vendorDir: string): string {
  const home = mkdtempSync(join(tmpdir(), 'ringstore-bench-'));
  if (!existsSync(vendorDir)) mkdirSync(vendorDir, { recursive: true });
  symlinkSync(vendorDir, join(home, 'vendor'), 'dir');
  return home;
}

/** What an AWS SDK client needs to reach a bare engine of withBareDynamoDbLocal. */
export interface EngineClientOptions {
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
}

/**
 * Runs `work` against a DynamoDB Local of its own (a throwaway home, a free port, no local cloud around
 * it), then stops the engine and removes the home, however `work` ended.
 */
export async function withBareDynamoDbLocal<T>(vendorDir: string, work: (options: EngineClientOptions) => Promise<T>): Promise<T> {
  const home = benchHome(vendorDir);
  try {
    const engine = await startDynamoDbLocal({
      journal: benchDynamoDbJournal,
      vendorDir,
      dataDir: join(home, 'dynamodb'),
      port: await freePort(),
      log: (line) => console.error(line),
    });
    try {
      return await work({ endpoint: engine.endpoint, region: localRegion, credentials: { ...localCredentials } });
    } finally {
      await engine.stop();
    }
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/** The code measured: the commit, and the server-side paths that differ from it (uncommitted work). */
export function codeVersion(): { commit: string; uncommitted: string[] } {
  const git = (...args: string[]) => {
    try {
      // trimEnd only: porcelain lines start with a status column that may be a space.
      return execFileSync('git', args, { cwd: benchRoot, encoding: 'utf8' }).trimEnd();
    } catch {
      return '';
    }
  };
  const status = git('status', '--porcelain', '--', 'lambdas', 'cdk', 'schemas');
  // A copy of the tree without .git (git archive) names its commit in BENCH_CODE_VERSION.
  const commit = git('rev-parse', '--short', 'HEAD') || process.env.BENCH_CODE_VERSION || 'unknown';
  return { commit, uncommitted: status ? status.split('\n').map((line) => line.slice(3)) : [] };
}

/**
 * DynamoDB Local's journal in every benchmark's engine (RINGSTORE_DYNAMODB_JOURNAL, as for `npm start`):
 * the engine's own rollback journal unless `wal` is asked for.
 */
export const benchDynamoDbJournal: DynamoDbJournal = z
  .enum(['wal', 'rollback'])
  .default('rollback')
  .parse(process.env.RINGSTORE_DYNAMODB_JOURNAL);

/** The machine and engine a run measured on. */
export function machineFacts() {
  return {
    nproc: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? 'unknown',
    totalMemoryMb: Math.round(totalmem() / 2 ** 20),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    dynamodbLocal: DYNAMODB_LOCAL.version,
    dynamodbJournal: benchDynamoDbJournal,
    dynamodbLocalQuickStartJvmFlags: QUICK_START_JVM_FLAGS,
  };
}

/** The settings every benchmark takes from the environment; each adds its own to this shape. */
/** BENCH_LABEL: names a run's results file (bench/results/<bench>-<label>.json). */
export const benchLabelSetting = z
  .string()
  .regex(/^[a-z0-9-]+$/)
  .default('latest');

export const commonSettingsShape = {
  BENCH_ROUNDS: z.coerce.number().int().min(1).max(9).default(5),
  /**
   * Bound on the whole run; a stuck engine ends it instead of hanging CI. Twice the longest default run on a slow day
   * (bench:txn took 15 minutes at 2 rounds on 2026-12-06, where it took 4.5 at 5 rounds on 2026-11-24).
   */
  BENCH_TIMEOUT_SECONDS: z.coerce.number().int().min(30).default(3600),
  RINGSTORE_VENDOR_DIR: z.string().default(join(benchRoot, '.ringstore', 'vendor')),
};

/** Ends the process (exit 2) after `seconds`, so a stuck engine ends the run instead of hanging it. */
export function startWatchdog(seconds: number, tag: string): void {
  const watchdog = setTimeout(() => {
    console.error(`[${tag}] gave up after ${seconds} s`);
    process.exit(2);
  }, seconds * 1000);
  watchdog.unref();
}

/**
 * Writes bench/results/<name>-<label>.json: the label, the code and the machine, the settings, then `data`.
 * Returns the file's path.
 */
export async function writeResults(name: string, settings: { BENCH_LABEL: string }, data: Record<string, unknown>): Promise<string> {
  const directory = benchResultsDir;
  await mkdir(directory, { recursive: true });
  const file = join(directory, `${name}-${settings.BENCH_LABEL}.json`);
  const record = { label: settings.BENCH_LABEL, code: codeVersion(), machine: machineFacts(), settings, ...data };
  await writeFile(file, `${JSON.stringify(record, null, 2)}\n`);
  return file;
}

/** Runs a bench's main and ends the process: 0 once it is done, 1 (the error printed) if it failed. */
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
