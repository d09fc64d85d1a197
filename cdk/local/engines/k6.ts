// k6 (Grafana's load-testing tool), which runs the scripts in loadtest/k6: built once from Go modules
// into `.ringstore/bin` by the project itself, never assumed to be on the machine.
import { ensureGoTool, type GoTool, installFromCommandLine } from './go-tool';

/** The pinned release: v1.x runs TypeScript scripts natively (esbuild inside k6); `@types/k6` 1.7 types them. */
export const k6Module = 'go.k6.io/k6@v1.8.1';
/**
 * Bound on one build: a cold module cache downloads about 90 modules, then compiles (53 s measured here with the
 * downloads, up to 3 min on a busy machine).
 */
export const K6_BUILD_TIMEOUT_MS = 15 * 60_000;

const k6Tool: GoTool = {
  module: k6Module,
  binaryName: 'k6',
  goOutputName: 'k6',
  coldBuild: '1 to 3 min',
  buildTimeoutMs: K6_BUILD_TIMEOUT_MS,
};

/**
 * The path of `k6` under `binDir`, built with `go install` the first time; see {@link ensureGoTool}.
 *
 * @example
 * const k6 = await ensureK6({ binDir: '.ringstore/bin', log: console.error });
 */
export function ensureK6(options: { binDir: string; log?: (line: string) => void }): Promise<string> {
  return ensureGoTool(k6Tool, options);
}

// CI builds the binary before the tests: `npx tsx cdk/local/engines/k6.ts [binDir]`.
if (require.main === module) installFromCommandLine(k6Tool);
