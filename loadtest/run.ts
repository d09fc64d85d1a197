// `npm run loadtest -- <script> [k6 args]`: runs one k6 script of loadtest/k6 against RS_URL with RS_KEY,
// or, without RS_URL, against a local cloud started for the run (free ports, a fresh home, a new API key)
// and stopped after it. Records k6's summary export and its CSV time series under .ringstore/loadtest/,
// which `npm run loadtest:report` turns into tables and plots. Exits with k6's code (99: thresholds missed).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_BIN_DIR } from '../cdk/local/engines/go-tool';
import { ensureK6, k6Module } from '../cdk/local/engines/k6';
import { type LocalCloudProcess, startLocalCloudProcess } from '../test/support/local-cloud-process';

const root = join(__dirname, '..');
/** The k6 scripts, one per file (lib/ holds their shared helpers). */
export const scriptsDir = join(__dirname, 'k6');
/** Where runs are recorded: one folder per run, `<script>-<time>`. */
export const resultsRoot = join(root, '.ringstore', 'loadtest');
/** The summary's trend columns (loadtest/k6/lib/load.ts sets the same in each script's options). */
const TREND_STATS = 'avg,min,med,max,p(90),p(95),p(99),count';

/** The names `npm run loadtest --` accepts: the scripts in loadtest/k6. */
export function scriptNames(): string[] {
  return readdirSync(scriptsDir)
    .filter((name) => name.endsWith('.ts'))
    .map((name) => name.slice(0, -'.ts'.length))
    .sort();
}

/** Where the load goes: a deployment's URL and keys (the admin key only for the smoke script's admin routes). */
export interface Target {
  url: string;
  apiKey: string;
  adminKey?: string;
}

/** What a run leaves in its folder beside k6's own files, for the report. */
export interface RunRecord {
  script: string;
  /** `local cloud` when the runner started one, else the deployment's URL. */
  target: string;
  k6: string;
  k6Args: string[];
  /** The RS_* settings of the run (scenario shape, rate, duration...), keys left out. */
  settings: Record<string, string>;
  commit: string;
  startedAt: string;
  finishedAt: string;
  exitCode: number;
}

export interface RunResult {
  exitCode: number;
  /** The run's folder: summary.json, series.csv.gz, run.json. */
  dir: string;
}

async function gitCommit(): Promise<string> {
  return new Promise((resolve) => {
    const git = spawn('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    git.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    git.on('error', () => resolve('unknown'));
    git.on('exit', () => resolve(out.trim() || 'unknown'));
  });
}

/** The RS_* variables that shape a run, without the keys. */
function settingsOf(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter(
      (entry): entry is [string, string] => entry[0].startsWith('RS_') && !/KEY|URL/.test(entry[0]) && entry[1] !== undefined,
    ),
  );
}

/** Creates a user key in a namespace of its own, so the run's keys meet nobody else's. */
async function createApiKey(url: string, adminKey: string, namespace: string): Promise<string> {
  const response = await fetch(`${url}/v1/admin/keys`, {
    method: 'POST',
    headers: { 'x-api-key': adminKey, 'content-type': 'application/json' },
    body: JSON.stringify({ namespace, description: 'npm run loadtest' }),
  });
  if (response.status !== 201) throw new Error(`could not create an API key: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { apiKey: string }).apiKey;
}

/** A local cloud for one run (free ports, a fresh home) and a user key of its own; `stop` removes both. */
async function startLocalTarget(log: (line: string) => void, namespace: string): Promise<{ target: Target; stop: () => Promise<void> }> {
  const home = mkdtempSync(join(tmpdir(), 'ringstore-loadtest-'));
  let cloud: LocalCloudProcess | undefined;
  const stop = async () => {
    await cloud?.stop();
    rmSync(home, { recursive: true, force: true });
  };
  try {
    log(`no RS_URL: starting a local cloud in ${home}`);
    cloud = await startLocalCloudProcess({
      home,
      env: { RINGSTORE_VENDOR_DIR: process.env.RINGSTORE_VENDOR_DIR ?? join(root, '.ringstore', 'vendor') },
    });
    const target = { url: cloud.url, apiKey: await createApiKey(cloud.url, cloud.adminKey, namespace), adminKey: cloud.adminKey };
    log(`local cloud at ${cloud.url}`);
    return { target, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function runK6(k6: string, args: string[], env: NodeJS.ProcessEnv, stdio: 'inherit' | 'pipe', onOutput?: (text: string) => void) {
  return new Promise<number>((resolve, reject) => {
    const child = spawn(k6, args, { cwd: root, env, stdio: stdio === 'inherit' ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (chunk: Buffer) => onOutput?.(chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => onOutput?.(chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

/**
 * Runs `script` with k6 against `target` and records it. Without a target, starts a local cloud for the run.
 *
 * @example
 * const { exitCode, dir } = await runLoadtest({ script: 'smoke', target: { url, apiKey } });
 */
export async function runLoadtest(options: {
  script: string;
  k6Args?: string[];
  target?: Target;
  /** Extra environment for k6 (RS_DURATION, RS_RATE...). */
  env?: Record<string, string>;
  /** Where to record the run (default: a new folder under .ringstore/loadtest). */
  dir?: string;
  /** `pipe`: k6's output goes to `onOutput` instead of this process's terminal (tests). */
  stdio?: 'inherit' | 'pipe';
  onOutput?: (text: string) => void;
  log?: (line: string) => void;
}): Promise<RunResult> {
  const log = options.log ?? ((line: string) => console.error(`[loadtest] ${line}`));
  if (!scriptNames().includes(options.script)) {
    throw new Error(`unknown script ${options.script}: one of ${scriptNames().join(', ')}`);
  }
  const k6 = await ensureK6({ binDir: DEFAULT_BIN_DIR, log });
  const startedAt = new Date();
  const dir = options.dir ?? join(resultsRoot, `${options.script}-${startedAt.toISOString().replace(/[:.]/g, '-')}`);
  await mkdir(dir, { recursive: true });

  const local = options.target ? undefined : await startLocalTarget(log, `loadtest-${startedAt.getTime().toString(36)}`);
  const target = options.target ?? local!.target;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...options.env,
    RS_URL: target.url,
    RS_KEY: target.apiKey,
    ...(target.adminKey ? { RS_ADMIN_KEY: target.adminKey } : {}),
    // k6 sends anonymous usage statistics unless told not to; runs stay offline.
    K6_NO_USAGE_REPORT: 'true',
  };
  const k6Args = options.k6Args ?? [];
  const args = [
    'run',
    `--summary-export=${join(dir, 'summary.json')}`,
    `--summary-trend-stats=${TREND_STATS}`,
    '--out',
    `csv=${join(dir, 'series.csv.gz')}`,
    ...k6Args,
    join(scriptsDir, `${options.script}.ts`),
  ];
  let exitCode: number;
  try {
    log(`k6 ${args.join(' ')}`);
    exitCode = await runK6(k6, args, env, options.stdio ?? 'inherit', options.onOutput);
  } finally {
    await local?.stop();
  }
  const record: RunRecord = {
    script: options.script,
    target: local ? 'local cloud' : target.url,
    k6: k6Module,
    k6Args,
    settings: settingsOf(env),
    commit: await gitCommit(),
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    exitCode,
  };
  await writeFile(join(dir, 'run.json'), `${JSON.stringify(record, null, 2)}\n`);
  log(`recorded in ${dir} (k6 exited ${exitCode})`);
  return { exitCode, dir };
}

async function main(): Promise<void> {
  const [script, ...k6Args] = process.argv.slice(2);
  if (!script || !scriptNames().includes(script)) {
    console.error(`usage: npm run loadtest -- <script> [k6 args]\nscripts: ${scriptNames().join(', ')}`);
    process.exit(2);
  }
  // Ctrl-C reaches k6 and the local cloud too (same process group): outlive them to stop and record.
  process.on('SIGINT', () => undefined);
  const url = process.env.RS_URL;
  let target: Target | undefined;
  if (url) {
    const apiKey = process.env.RS_KEY;
    if (!apiKey) throw new Error('RS_URL is set but RS_KEY is not: the API key to load it with');
    target = { url, apiKey, ...(process.env.RS_ADMIN_KEY ? { adminKey: process.env.RS_ADMIN_KEY } : {}) };
  }
  const { exitCode } = await runLoadtest({ script, k6Args, ...(target ? { target } : {}) });
  process.exitCode = exitCode;
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
