// Toxiproxy (Shopify's TCP proxy for injecting network conditions), the link between two local regions:
// built once from Go modules into `.ringstore/bin`, then started as a child process like the other engines.
import { spawnManaged } from './child';
import { ensureGoTool, type GoTool, installFromCommandLine } from './go-tool';
import { LOCAL_HOST } from './free-port';
import { PROBE_TIMEOUT_MS, waitReady } from './ready';

export { DEFAULT_BIN_DIR } from './go-tool';

/** The pinned release: its HTTP API (proxies, toxics, PATCH for updates) is what link.ts speaks. */
export const toxiproxyModule = 'github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0';
const binaryName = 'toxiproxy-server';
/** Bound on one build: a cold module cache downloads about 15 modules, then compiles (~35 s on 2 cores). */
export const BUILD_TIMEOUT_MS = 10 * 60_000;

const toxiproxyTool: GoTool = {
  module: toxiproxyModule,
  binaryName,
  // What `go install …/cmd/server` names its output.
  goOutputName: 'server',
  coldBuild: '~30 s',
  buildTimeoutMs: BUILD_TIMEOUT_MS,
};

/**
 * The path of `toxiproxy-server` under `binDir`, built with `go install` the first time (~35 s with a cold
 * Go module cache, a few seconds with a warm one); see {@link ensureGoTool}.
 *
 * @example
 * const binary = await ensureToxiproxy({ binDir: '.ringstore/bin', log: console.error });
 */
export function ensureToxiproxy(options: { binDir: string; log?: (line: string) => void }): Promise<string> {
  return ensureGoTool(toxiproxyTool, options);
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

// CI builds the binary before the tests: `npx tsx cdk/local/engines/toxiproxy.ts [binDir]`.
if (require.main === module) installFromCommandLine(toxiproxyTool);
