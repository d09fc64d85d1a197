// The k6 load tests cannot rot: every script type-checks and loads in k6 (`k6 inspect`, in both scenario
// shapes), and the smoke script runs against the suite's local cloud, where k6 must exit 0, and must not
// when a threshold is missed.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_BIN_DIR } from '../../cdk/local/engines/go-tool';
import { ensureK6, K6_BUILD_TIMEOUT_MS } from '../../cdk/local/engines/k6';
import { pick, uniform, zipfian, zipfianRanks, ZIPFIAN_THETA } from '../../loadtest/k6/lib/keys';
import { runLoadtest, scriptNames, scriptsDir } from '../../loadtest/run';
import { adminKey, baseUrl, freshNamespace } from './support';

const root = join(__dirname, '..', '..');
/** k6's exit code when a threshold was missed. */
const K6_THRESHOLDS_MISSED = 99;

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output }));
  });
}

interface InspectedOptions {
  scenarios: Record<string, { executor: string; tags: Record<string, string> | null }>;
  thresholds: Record<string, string[]>;
}

let k6: string;
const dirs: string[] = [];

beforeAll(async () => {
  // CI builds it before the tests (.ci/run); on a fresh machine the first run builds it here.
  k6 = await ensureK6({ binDir: DEFAULT_BIN_DIR });
}, K6_BUILD_TIMEOUT_MS);

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('every k6 script', () => {
  test('is one of the scenarios docs/loadtest.md describes (the seven of the k6 issue and the watch issue’s)', () => {
    expect(scriptNames()).toEqual([
      'kv-read-heavy',
      'kv-strong',
      'kv-write-heavy',
      'large-values',
      'mixed-ycsb',
      'smoke',
      'txn-bank',
      'watch',
    ]);
  });

  test('type-checks against k6 types', async () => {
    const { code, output } = await run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(scriptsDir, 'tsconfig.json')]);
    expect({ code, output }).toEqual({ code: 0, output: '' });
  }, 120_000);

  const shapes = [
    ['arrival', 'constant-arrival-rate'],
    ['ramping', 'ramping-vus'],
  ] as const;
  test.each(shapes)(
    'loads in k6 with RS_SCENARIO=%s: %s scenarios tagged phase:run, thresholds that can fail it',
    async (shape, executor) => {
      for (const script of scriptNames()) {
        // Prepare: k6 inspect runs the init code (the options) without sending a request.
        const env = ['-e', 'RS_URL=http://127.0.0.1:9', '-e', 'RS_KEY=rs_inspect', '-e', `RS_SCENARIO=${shape}`];
        // Act
        const { code, output } = await run(k6, ['inspect', ...env, join(scriptsDir, `${script}.ts`)]);
        // Assess
        expect({ script, code }).toEqual({ script, code: 0 });
        const options = JSON.parse(output) as InspectedOptions;
        const scenarios = Object.values(options.scenarios);
        expect(scenarios.length).toBeGreaterThan(0);
        for (const scenario of scenarios) {
          expect({ script, executor: scenario.executor }).toEqual({
            script,
            executor: script === 'smoke' ? 'shared-iterations' : executor,
          });
          expect(scenario.tags).toMatchObject({ phase: 'run' });
        }
        expect(options.thresholds['http_req_duration{phase:run}']).toEqual([
          expect.stringMatching(/^p\(95\)</),
          expect.stringMatching(/^p\(99\)</),
        ]);
        expect(options.thresholds['http_req_failed{phase:run}']).toEqual([expect.stringMatching(/^rate</)]);
        expect(options.thresholds.checks).toEqual([expect.stringMatching(/^rate>=/)]);
      }
    },
    120_000,
  );

  test('refuses a shape it does not know, at init', async () => {
    const env = ['-e', 'RS_URL=http://127.0.0.1:9', '-e', 'RS_KEY=rs_inspect', '-e', 'RS_SCENARIO=spike'];
    const { code, output } = await run(k6, ['inspect', ...env, join(scriptsDir, 'kv-strong.ts')]);
    expect(code).not.toBe(0);
    expect(output).toContain('RS_SCENARIO must be arrival or ramping, not spike');
  });
});

// The scripts' key choosers are plain TypeScript (no k6 module), so they are checked here in Node.
describe('key choosers', () => {
  const DRAWS = 50_000;
  /** zeta(1000, θ): rank 0's probability is 1/zeta. */
  let zeta = 0;
  for (let i = 1; i <= 1000; i += 1) zeta += 1 / Math.pow(i, ZIPFIAN_THETA);
  const shares = (next: () => number, n: number) => {
    const counts = new Array<number>(n).fill(0);
    for (let i = 0; i < DRAWS; i += 1) {
      const index = next();
      if (!Number.isInteger(index) || index < 0 || index >= n) throw new Error(`index ${index} outside [0, ${n})`);
      counts[index]! += 1;
    }
    return counts.map((count) => count / DRAWS).sort((a, b) => b - a);
  };

  test('zipfian ranks: rank 0 of 1,000 gets 1/zeta(1000, 0.99) of the draws, rank 1 about half as much', () => {
    const ranks = zipfianRanks(1000);
    const counts = [0, 0];
    for (let i = 0; i < DRAWS; i += 1) {
      const rank = ranks.next();
      if (rank < 2) counts[rank]! += 1;
    }
    expect(Math.abs(counts[0]! / DRAWS - 1 / zeta)).toBeLessThan(0.01);
    expect(counts[1]! / counts[0]!).toBeGreaterThan(0.4);
    expect(counts[1]! / counts[0]!).toBeLessThan(0.6);
  });

  test("zipfian keys: scattered over [0, n), and as skewed (the hottest key holds at least rank 0's share)", () => {
    const chooser = zipfian(1000);
    expect(shares(() => chooser.next(), 1000)[0]).toBeGreaterThan(1 / zeta - 0.01);
  });

  test('uniform: no key of 1,000 gets more than 0.5 % of the draws', () => {
    const chooser = uniform(1000);
    expect(shares(() => chooser.next(), 1000)[0]).toBeLessThan(0.005);
  });

  test('pick: 95/5 weights give 95 % reads', () => {
    let reads = 0;
    for (let i = 0; i < DRAWS; i += 1) if (pick({ read: 95, write: 5 }) === 'read') reads += 1;
    expect(Math.abs(reads / DRAWS - 0.95)).toBeLessThan(0.01);
  });
});

describe('the smoke script against the local cloud', () => {
  async function smoke(env: Record<string, string> = {}) {
    const { key } = await freshNamespace('k6-smoke');
    const dir = mkdtempSync(join(tmpdir(), 'ringstore-k6-smoke-'));
    dirs.push(dir);
    let output = '';
    const { exitCode } = await runLoadtest({
      script: 'smoke',
      target: { url: baseUrl(), apiKey: key, adminKey: adminKey() },
      env,
      dir,
      stdio: 'pipe',
      onOutput: (text) => (output += text),
      log: () => undefined,
    });
    const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as {
      metrics: Record<string, { passes?: number; fails?: number; thresholds?: Record<string, boolean> }>;
    };
    return { exitCode, output: output.slice(-6000), summary };
  }

  test('passes: k6 exits 0, every check held, every route family answered', async () => {
    const { exitCode, output, summary } = await smoke();
    expect({ exitCode, output }).toEqual({ exitCode: 0, output: expect.any(String) });
    expect(summary.metrics.checks).toMatchObject({ fails: 0 });
    expect(summary.metrics.checks!.passes).toBeGreaterThanOrEqual(35);
    for (const check of ['upload commit 200', 'large read redirect 303', 'txn read 200', 'ring 200', 'admin shards 200', 'delete 200']) {
      expect(output).toContain(`✓ ${check}`);
    }
  }, 120_000);

  test('fails when a threshold is missed: k6 exits 99', async () => {
    const { exitCode, summary } = await smoke({ RS_P95_MS: '0.001' });
    expect(exitCode).toBe(K6_THRESHOLDS_MISSED);
    expect(summary.metrics['http_req_duration{phase:run}']!.thresholds).toMatchObject({ 'p(95)<0.001': true });
  }, 120_000);
});
