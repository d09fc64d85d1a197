// Toxiproxy (Shopify's TCP proxy for injecting network conditions), the link between two local regions:
// built once from Go modules into `.ringstore/bin`, then started as a child process like the other engines.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describeExit, pidAlive, spawnManaged, which } from './child';
import { LOCAL_HOST } from './free-port';
import { PROBE_TIMEOUT_MS, waitReady } from './ready';

/** The pinned release: its HTTP API (proxies, toxics, PATCH for updates) is what link.ts speaks. */
export const toxiproxyModule = 'github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0';
const binaryName = 'toxiproxy-server';
/** What `go install …/cmd/server` names its output. */
const goOutputName = 'server';
/** Where Go lives when it is installed from go.dev's tarball but not on PATH (CI adds it to PATH itself). */
const goTarballPath = '/usr/local/go/bin/go';
/** Bound on one build: a cold module cache downloads about 15 modules, then compiles (~35 s on 2 cores). */
export const BUILD_TIMEOUT_MS = 10 * 60_000;
const BUILD_TEMP_PREFIX = '.toxiproxy-build-';

function goBinary(): string {
  const go = which('go') ?? (existsSync(goTarballPath) ? goTarballPath : undefined);
  if (!go) {
    throw new Error(
      `the link between local regions needs ${binaryName}, built once with Go (${toxiproxyModule}): ` +
        `install Go 1.23 or newer (https://go.dev/dl) and put it on PATH or at ${goTarballPath}`,
    );
  }
  return go;
}

// Build folders are named `.toxiproxy-build-<pid>-<random>`; those of dead processes (a build killed
// mid-way never reaches its `finally`) are leftovers.
async function removeStaleBuilds(binDir: string): Promise<void> {
  for (const entry of await readdir(binDir)) {
    if (!entry.startsWith(BUILD_TEMP_PREFIX)) continue;
    const pid = Number(entry.slice(BUILD_TEMP_PREFIX.length).split('-')[0]);
    if (!Number.isInteger(pid) || !pidAlive(pid)) await rm(join(binDir, entry), { recursive: true, force: true });
  }
}

async function goInstall(gobin: string): Promise<void> {
  // Managed like the engines, so a killed `npm start` does not leave the compiler running.
  // CGO_ENABLED=0: a static binary, and no C toolchain needed on the machine.
  const child = spawnManaged('go install', goBinary(), ['install', toxiproxyModule], {
    env: { ...process.env, GOBIN: gobin, CGO_ENABLED: '0' },
  });
  const timer = setTimeout(() => void child.stop().catch(() => undefined), BUILD_TIMEOUT_MS);
  const exit = await child.exited.finally(() => clearTimeout(timer));
  if (exit.code === 0) return;
  const why = exit.signal === 'SIGTERM' || exit.signal === 'SIGKILL' ? `timed out after ${BUILD_TIMEOUT_MS} ms` : describeExit(exit);
  throw new Error(`go install ${toxiproxyModule} ${why}\n${child.outputTail(30)}`);
}

// One build per binary path in this process; other processes are kept apart by the unique build folder.
const builds = new Map<string, Promise<string>>();

/**
 * The path of `toxiproxy-server` under `binDir`, built with `go install` the first time (~35 s with a cold
 * Go module cache, a few seconds with a warm one). Concurrent callers (two test workers) build in their own
 * folders and rename into place, an atomic replace, so nobody ever runs a half-written binary.
 *
 * @example
 * const binary = await ensureToxiproxy({ binDir: '.ringstore/bin', log: console.error });
 */
export function ensureToxiproxy(options: { binDir: string; log?: (line: string) => void }): Promise<string> {
  const target = resolve(options.binDir, binaryName);
  if (existsSync(target)) return Promise.resolve(target);
  const pending = builds.get(target);
  if (pending) return pending;
  const build = (async () => {
    await mkdir(options.binDir, { recursive: true });
    await removeStaleBuilds(options.binDir);
    const started = Date.now();
    options.log?.(`building ${binaryName} once (~30 s): go install ${toxiproxyModule}`);
    const scratch = await mkdtemp(join(options.binDir, `${BUILD_TEMP_PREFIX}${process.pid}-`));
    try {
      await goInstall(scratch);
      await rename(join(scratch, goOutputName), target);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
    options.log?.(`built ${binaryName} in ${((Date.now() - started) / 1000).toFixed(1)} s: ${target}`);
    return target;
  })();
  builds.set(target, build);
  // Forgotten once settled: a failed build is retried by the next caller (Go installed meanwhile, network
  // back), and a deleted binary is rebuilt.
  const forget = () => builds.delete(target);
  void build.then(forget, forget);
  return build;
}

export interface StartedToxiproxy {
  /** Its HTTP API, e.g. http://127.0.0.1:8474. */
  api: string;
  /** Stops the server; resolves once it has exited. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts toxiproxy-server on 127.0.0.1:`port`; resolves once its API answers `GET /version`.
 * Rejects with an `EngineStartError` (`exitedEarly` when the port was taken meanwhile).
 *
 * @example
 * const toxiproxy = await startToxiproxy({ binary: await ensureToxiproxy({ binDir }), port: await freePort() });
 */
export async function startToxiproxy(options: { binary: string; port: number; timeoutMs?: number }): Promise<StartedToxiproxy> {
  const child = spawnManaged(binaryName, options.binary, ['-host', LOCAL_HOST, '-port', String(options.port)]);
  const api = `http://${LOCAL_HOST}:${options.port}`;
  try {
    await waitReady({
      name: binaryName,
      child,
      probe: async (signal) => {
        const response = await fetch(`${api}/version`, { signal: AbortSignal.any([signal, AbortSignal.timeout(PROBE_TIMEOUT_MS)]) });
        if (!response.ok) throw new Error(`GET /version answered ${response.status}`);
      },
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    });
  } catch (error) {
    await child.stop();
    throw error;
  }
  return { api, stop: () => child.stop() };
}

/** Default binary directory: `<repo>/.ringstore/bin`. */
export const DEFAULT_BIN_DIR = join(__dirname, '..', '..', '..', '.ringstore', 'bin');

// CI builds the binary before the tests: `npx tsx cdk/local/engines/toxiproxy.ts [binDir]`.
if (require.main === module) {
  ensureToxiproxy({ binDir: process.argv[2] ?? DEFAULT_BIN_DIR, log: (line) => console.log(line) }).then(
    (binary) => console.log(`toxiproxy-server: ${binary}`),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exitCode = 1;
    },
  );
}
