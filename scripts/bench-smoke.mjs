// `npm run bench:smoke`: every `bench*` script of package.json once, at its smallest settings, so that no
// documented bench rots (.ci/run runs this after `npm test`). Each must exit 0 and write a results file;
// nothing about its timing is asserted. Results and plots go to a scratch directory (BENCH_OUTPUT_DIR), so
// the runs of record in bench/results and docs/ are left alone.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const scripts = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts;

/** The smallest settings of each bench (each variable's minimum in the bench's own settings schema). */
const smallest = {
  bench: {
    BENCH_ROUNDS: '1',
    BENCH_WARMUP_OPS: '0',
    BENCH_LATENCY_OPS: '100',
    BENCH_THROUGHPUT_OPS: '100',
    BENCH_BURST_WRITES: '0',
    BENCH_HINT_WRITES: '0',
  },
  'bench:txn': { BENCH_ROUNDS: '1', BENCH_WARMUP_OPS: '0', BENCH_TXN_OPS: '50', BENCH_TXN_COUNTED: '10' },
  'bench:cold-start': { BENCH_COLD_SAMPLES: '1' },
  'bench:failover': { BENCH_FAILOVER_RUNS: '1', BENCH_FAILOVER_CLIENTS: '1' },
  'bench:dr': { BENCH_DR_WRITERS: '1', BENCH_DR_WRITES: '10,10,2,1', BENCH_DR_LATENCY_WRITES: '10' },
  'bench:rebalance': {
    BENCH_REBALANCE_KEYS: '1000',
    BENCH_REBALANCE_CLIENTS: '1',
    BENCH_REBALANCE_STEADY_SECONDS: '5',
    BENCH_REBALANCE_LOAD_RPS: '5',
  },
  'bench:engine-hold': { BENCH_HOLD_KEYS: '2000', BENCH_HOLD_SECONDS: '2' },
  'bench:copy-shape': { BENCH_SHAPE_SOURCE_ITEMS: '2000', BENCH_SHAPE_ITEMS: '1000', BENCH_SHAPE_ROUNDS: '1' },
  'bench:volumes': { BENCH_VOLUME_SECONDS: '1', BENCH_VOLUME_MIB: '16', BENCH_VOLUME_BASELINE_OPS: '20' },
  'bench:watch': {
    BENCH_WATCH_SECONDS: '2',
    BENCH_WATCH_WARMUP_SECONDS: '0',
    BENCH_WATCH_RATE: '5',
    BENCH_WATCH_WRITERS: '1',
    BENCH_WATCH_WATCHERS: '1',
  },
};

/** A bench that takes longer than this at its smallest settings is stuck. */
const benchTimeoutSeconds = 900;

const benches = Object.keys(scripts).filter((name) => /^bench(:|$)/.test(name) && name !== 'bench:smoke');
const unknown = benches.filter((name) => !(name in smallest));
if (unknown.length > 0) {
  console.error(`bench:smoke: no smallest settings for ${unknown.join(', ')}: add them to scripts/bench-smoke.mjs`);
  process.exit(1);
}

function runBench(name, outputDir) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn('npm', ['run', '--silent', name], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        ...smallest[name],
        BENCH_OUTPUT_DIR: outputDir,
        BENCH_LABEL: 'smoke',
        BENCH_TIMEOUT_SECONDS: String(benchTimeoutSeconds),
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      },
    });
    let output = '';
    const keep = (chunk) => (output = (output + chunk).slice(-20_000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('exit', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), seconds: (Date.now() - started) / 1000, output }));
  });
}

let failed = 0;
for (const name of benches) {
  const outputDir = mkdtempSync(join(tmpdir(), `ringstore-bench-smoke-${name.replace(/\W/g, '-')}-`));
  const { code, seconds, output } = await runBench(name, outputDir);
  const written = readdirSync(outputDir).filter((file) => file.endsWith('.json'));
  const ok = code === 0 && written.length > 0;
  if (!ok) failed += 1;
  console.log(
    `${ok ? 'ok  ' : 'FAIL'} npm run ${name} (${seconds.toFixed(0)} s): exit ${code}, wrote ${written.join(', ') || 'no results file'}`,
  );
  if (!ok) console.log(output.replace(/^/gm, '    '));
  rmSync(outputDir, { recursive: true, force: true });
}
console.log(`bench:smoke: ${benches.length - failed} of ${benches.length} benches ran at their smallest settings`);
process.exitCode = failed > 0 ? 1 : 0;
