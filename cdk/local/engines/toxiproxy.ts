// Toxiproxy (Shopify's TCP proxy for injecting network conditions), the link between two local regions:
// built once from Go modules into `.ringstore/bin`, then started as a child process like the other engines.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { spawnManaged, which } from './child';
import { LOCAL_HOST } from './free-port';
import { PROBE_TIMEOUT_MS, waitReady } from './ready';

const run = promisify(execFile);

/** The pinned release: its HTTP API (proxies, toxics) is what link.ts speaks. */
export const toxiproxyModule = 'github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0';
const binaryName = 'toxiproxy-server';

function goBinary(): string {
  const go = which('go') ?? (existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined);
  if (!go) {
    throw new Error(
      `the link between local regions needs toxiproxy-server, built with Go (${toxiproxyModule}); install Go 1.22+ and put it on PATH`,
    );
  }
  return go;
}

/**
 * The path of `toxiproxy-server` under `binDir`, built with `go install` the first time (about 15-30 s).
 * Concurrent callers (two test workers) build into their own folders and rename into place, so a
 * reader never sees a half-written binary.
 *
 * @example
 * const binary = await ensureToxiproxy({ binDir: '.ringstore/bin', log: console.error });
 */
export async function ensureToxiproxy(options: { binDir: string; log?: (line: string) => void }): Promise<string> {
  const target = join(options.binDir, binaryName);
  if (existsSync(target)) return target;
  await mkdir(options.binDir, { recursive: true });
  const started = Date.now();
  options.log?.(`building ${binaryName} once (${toxiproxyModule}, ~30 s)`);
  const scratch = await mkdtemp(join(options.binDir, '.toxiproxy-build-'));
  try {
    await run(goBinary(), ['install', toxiproxyModule], {
      env: { ...process.env, GOBIN: scratch },
      maxBuffer: 16 * 1024 * 1024,
    });
    await rename(join(scratch, 'server'), target);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  options.log?.(`built ${binaryName} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return target;
}

export interface StartedToxiproxy {
  /** Its HTTP API, e.g. http://127.0.0.1:8474. */
  api: string;
  stop(): Promise<void>;
}

/** Starts toxiproxy-server on 127.0.0.1:`port`; resolves once its API answers. */
export async function startToxiproxy(options: { binary: string; port: number; timeoutMs?: number }): Promise<StartedToxiproxy> {
  const child = spawnManaged('toxiproxy-server', options.binary, ['-host', LOCAL_HOST, '-port', String(options.port)]);
  const api = `http://${LOCAL_HOST}:${options.port}`;
  try {
    await waitReady({
      name: 'toxiproxy-server',
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
