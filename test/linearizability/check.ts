// Runs the Go linearizability checker (Porcupine, one register per key) on a recorded history:
// builds the binary once per process into .ringstore/bin, writes the history to a temp file, parses the verdict.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { History, RangeHistory } from './history';

const sourceDir = __dirname;
const repoRoot = path.resolve(sourceDir, '..', '..');
/** Where the built checker is cached; `.ringstore/` is git-ignored. */
export const lincheckBinaryPath = path.join(repoRoot, '.ringstore', 'bin', 'lincheck');

/** The first build may download Porcupine and compile the standard library. */
const buildTimeoutMs = 300_000;
const defaultCheckTimeoutSeconds = 60;
/** Time the process gets beyond its own -timeout (start-up, reading the history) before we kill it. */
const checkGraceMs = 30_000;
const outputBytesMax = 1 << 20;
const fallbackGo = '/usr/local/go/bin/go';

/**
 * The checker's verdict. `linearizable` is `null` when it timed out before deciding; `failingKeys`
 * are the keys whose sub-history has no linearization (sorted).
 *
 * @example
 * const result: LinearizabilityResult = { linearizable: false, operations: 12, keys: 2, failingKeys: ['k1'] };
 */
export interface LinearizabilityResult {
  linearizable: boolean | null;
  operations: number;
  keys: number;
  failingKeys: string[];
}

/**
 * Options of a check.
 *
 * @example
 * const options: CheckOptions = { visualizePath: '.ringstore/lincheck.html', timeoutSeconds: 120 };
 */
export interface CheckOptions {
  /** Also write Porcupine's HTML visualization here (a second pass, with as much time again). */
  visualizePath?: string;
  /** Give up after this long: the result is then `linearizable: null`. Default 60. */
  timeoutSeconds?: number;
}

/**
 * Checks a history of byte-range operations against the volume model (ranges.go): one row of segments per volume.
 *
 * @example
 * const result = await checkRangesLinearizable({ operations });
 * expect(result.linearizable).toBe(true);
 */
export function checkRangesLinearizable(history: RangeHistory, options: CheckOptions = {}): Promise<LinearizabilityResult> {
  return runCheck(history, ['-model=ranges'], options);
}

let build: Promise<string> | undefined;

/**
 * Builds the checker binary if it is missing or older than its Go sources, once per process, and
 * returns its path. Safe to call from several processes at once (each builds to a temp file and renames).
 *
 * @example
 * beforeAll(() => buildLincheck(), 300_000);
 */
export function buildLincheck(): Promise<string> {
  build ??= buildIfStale().catch((error: unknown) => {
    build = undefined;
    throw error;
  });
  return build;
}

/**
 * Checks a history for linearizability against the per-key register model.
 *
 * @example
 * const result = await checkLinearizable(recorder.toJSON(), { visualizePath: 'lincheck.html' });
 * expect(result.failingKeys).toEqual([]);
 */
export function checkLinearizable(history: History, options: CheckOptions = {}): Promise<LinearizabilityResult> {
  return runCheck(history, [], options);
}

async function runCheck(history: History | RangeHistory, modelArgs: string[], options: CheckOptions): Promise<LinearizabilityResult> {
  const timeoutSeconds = options.timeoutSeconds ?? defaultCheckTimeoutSeconds;
  if (!(timeoutSeconds > 0)) throw new Error(`timeoutSeconds must be positive (got ${timeoutSeconds})`);
  const binary = await buildLincheck();
  const dir = await mkdtemp(path.join(tmpdir(), 'lincheck-'));
  try {
    const historyPath = path.join(dir, 'history.json');
    await writeFile(historyPath, JSON.stringify(history));
    const args = [`-timeout=${Math.ceil(timeoutSeconds * 1000)}ms`, ...modelArgs];
    if (options.visualizePath !== undefined) args.push(`-visualize=${path.resolve(options.visualizePath)}`);
    args.push(historyPath);
    const passes = options.visualizePath === undefined ? 1 : 2;
    const run = await runProcess(binary, args, { timeoutMs: passes * timeoutSeconds * 1000 + checkGraceMs });
    if (run.code !== 0 && run.code !== 1 && run.code !== 2) {
      throw new Error(`lincheck ${args.join(' ')} exited with ${run.code ?? run.signal}: ${run.stderr.trim()}`);
    }
    return parseResult(run.stdout, run.stderr);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function parseResult(stdout: string, stderr: string): LinearizabilityResult {
  const line = stdout.trim().split('\n').at(-1) ?? '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    throw new Error(`lincheck printed no verdict: ${stdout.trim()} ${stderr.trim()}`);
  }
  const result = parsed as Partial<LinearizabilityResult>;
  if (
    (typeof result.linearizable !== 'boolean' && result.linearizable !== null) ||
    typeof result.operations !== 'number' ||
    typeof result.keys !== 'number' ||
    !Array.isArray(result.failingKeys)
  ) {
    throw new Error(`lincheck printed an unexpected verdict: ${line}`);
  }
  return result as LinearizabilityResult;
}

async function buildIfStale(): Promise<string> {
  if (await isFresh()) return lincheckBinaryPath;
  await mkdir(path.dirname(lincheckBinaryPath), { recursive: true });
  const partial = `${lincheckBinaryPath}.${process.pid}.tmp`;
  // -mod=readonly: the build uses go.mod/go.sum as committed, never rewrites them.
  // -buildvcs=false: no git stamping, so a checkout without git metadata builds too.
  const env = { ...process.env, GOFLAGS: '-mod=readonly -buildvcs=false' };
  const run = await runProcess(findGo(), ['build', '-o', partial, '.'], { cwd: sourceDir, env, timeoutMs: buildTimeoutMs });
  if (run.code !== 0) {
    await rm(partial, { force: true });
    throw new Error(`building lincheck failed (${run.code ?? run.signal}): ${run.stderr.trim()}`);
  }
  await rename(partial, lincheckBinaryPath);
  return lincheckBinaryPath;
}

/** The binary exists and is newer than every .go file, go.mod and go.sum. */
async function isFresh(): Promise<boolean> {
  const built = await stat(lincheckBinaryPath).catch(() => undefined);
  if (!built) return false;
  const sources = (await readdir(sourceDir)).filter((name) => name.endsWith('.go') || name === 'go.mod' || name === 'go.sum');
  const times = await Promise.all(sources.map(async (name) => (await stat(path.join(sourceDir, name))).mtimeMs));
  return times.every((mtimeMs) => mtimeMs <= built.mtimeMs);
}

function findGo(): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && existsSync(path.join(dir, 'go'))) return path.join(dir, 'go');
  }
  if (existsSync(fallbackGo)) return fallbackGo;
  throw new Error(`lincheck needs Go: none on PATH nor at ${fallbackGo}`);
}

interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function runProcess(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    // Keep the tail of each stream, bounded: the verdict is the last line.
    child.stdout.on('data', (chunk: Buffer) => (stdout = (stdout + chunk.toString()).slice(-outputBytesMax)));
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-outputBytesMax)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${path.basename(command)} ${args.join(' ')} did not finish within ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
