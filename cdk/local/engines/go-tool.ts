// A tool the project builds itself from Go modules (Toxiproxy, k6): `go install <module>@<version>` once
// into a binary directory (`.ringstore/bin`), never assumed to be on the machine.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describeExit, pidAlive, spawnManaged, which } from './child';

/** What to build: the module path with its pinned version, and the names of the binary before and after. */
export interface GoTool {
  /** `module/path@version`, as `go install` takes it. */
  module: string;
  /** The binary's name under the binary directory. */
  binaryName: string;
  /** What `go install` names its output (the last element of the package path). */
  goOutputName: string;
  /** How long a cold build takes on 2 cores, for the log line that explains the wait. */
  coldBuild: string;
  /** Bound on one build. */
  buildTimeoutMs: number;
}

/** Where Go lives when it is installed from go.dev's tarball but not on PATH (CI adds it to PATH itself). */
const goTarballPath = '/usr/local/go/bin/go';

function goBinary(tool: GoTool): string {
  const go = which('go') ?? (existsSync(goTarballPath) ? goTarballPath : undefined);
  if (!go) {
    throw new Error(
      `${tool.binaryName} is built once with Go (${tool.module}): ` +
        `install Go 1.23 or newer (https://go.dev/dl) and put it on PATH or at ${goTarballPath}`,
    );
  }
  return go;
}

const buildTempPrefix = (tool: GoTool) => `.${tool.binaryName}-build-`;

// Build folders are named `.<binary>-build-<pid>-<random>`; those of dead processes (a build killed
// mid-way never reaches its `finally`) are leftovers.
async function removeStaleBuilds(tool: GoTool, binDir: string): Promise<void> {
  const prefix = buildTempPrefix(tool);
  for (const entry of await readdir(binDir)) {
    if (!entry.startsWith(prefix)) continue;
    const pid = Number(entry.slice(prefix.length).split('-')[0]);
    if (!Number.isInteger(pid) || !pidAlive(pid)) await rm(join(binDir, entry), { recursive: true, force: true });
  }
}

async function goInstall(tool: GoTool, gobin: string): Promise<void> {
  // Managed like the engines, so a killed `npm start` does not leave the compiler running.
  // CGO_ENABLED=0: a static binary, and no C toolchain needed on the machine.
  const child = spawnManaged('go install', goBinary(tool), ['install', tool.module], {
    env: { ...process.env, GOBIN: gobin, CGO_ENABLED: '0' },
  });
  const timer = setTimeout(() => void child.stop().catch(() => undefined), tool.buildTimeoutMs);
  const exit = await child.exited.finally(() => clearTimeout(timer));
  if (exit.code === 0) return;
  const why = exit.signal === 'SIGTERM' || exit.signal === 'SIGKILL' ? `timed out after ${tool.buildTimeoutMs} ms` : describeExit(exit);
  throw new Error(`go install ${tool.module} ${why}\n${child.outputTail(30)}`);
}

// One build per binary path in this process; other processes are kept apart by the unique build folder.
const builds = new Map<string, Promise<string>>();

/**
 * The path of `tool.binaryName` under `binDir`, built with `go install` the first time. Concurrent callers
 * (two test workers) build in their own folders and rename into place, an atomic replace, so nobody ever
 * runs a half-written binary.
 *
 * @example
 * const binary = await ensureGoTool(toxiproxyTool, { binDir: '.ringstore/bin', log: console.error });
 */
export function ensureGoTool(tool: GoTool, options: { binDir: string; log?: (line: string) => void }): Promise<string> {
  const target = resolve(options.binDir, tool.binaryName);
  if (existsSync(target)) return Promise.resolve(target);
  const pending = builds.get(target);
  if (pending) return pending;
  const build = (async () => {
    await mkdir(options.binDir, { recursive: true });
    await removeStaleBuilds(tool, options.binDir);
    const started = Date.now();
    options.log?.(`building ${tool.binaryName} once (${tool.coldBuild}): go install ${tool.module}`);
    const scratch = await mkdtemp(join(options.binDir, `${buildTempPrefix(tool)}${process.pid}-`));
    try {
      await goInstall(tool, scratch);
      await rename(join(scratch, tool.goOutputName), target);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
    options.log?.(`built ${tool.binaryName} in ${((Date.now() - started) / 1000).toFixed(1)} s: ${target}`);
    return target;
  })();
  builds.set(target, build);
  // Forgotten once settled: a failed build is retried by the next caller (Go installed meanwhile, network
  // back), and a deleted binary is rebuilt.
  const forget = () => builds.delete(target);
  void build.then(forget, forget);
  return build;
}

/** Default binary directory: `<repo>/.ringstore/bin`. */
export const DEFAULT_BIN_DIR = join(__dirname, '..', '..', '..', '.ringstore', 'bin');

/**
 * The command-line entry of an installer module (`npx tsx cdk/local/engines/k6.ts [binDir]`), which CI runs
 * before the tests so that no test waits for a build.
 *
 * @example
 * if (require.main === module) installFromCommandLine(k6Tool);
 */
export function installFromCommandLine(tool: GoTool): void {
  ensureGoTool(tool, { binDir: process.argv[2] ?? DEFAULT_BIN_DIR, log: (line) => console.log(line) }).then(
    (binary) => console.log(`${tool.binaryName}: ${binary}`),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exitCode = 1;
    },
  );
}
