// `npm run test:soak -- [--runs N] [--busy-cores K] [jest paths or args…]`: the flakiness gate. Runs the
// given tests (default: the fault project) N times in a row (default 5) on W jest workers (default 2) while K busy
// loops (default 1) keep cores occupied, as CI shares its machine; each run has a seed of its own. Prints the table of suites ×
// runs × failures with every failure's replay command, and writes it to .ringstore/soak/ (docs/testing.md).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const outDir = join(root, '.ringstore', 'soak');

const { values: options, positionals } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    'busy-cores': { type: 'string', default: '1' },
    workers: { type: 'string', default: '2' },
    help: { type: 'boolean', default: false },
  },
  allowPositionals: true,
  strict: false,
});
const usage =
  'usage: npm run test:soak -- [--runs N] [--busy-cores K] [--workers W] [jest paths or args…]   (default: --selectProjects fault)';
const runs = Number(options.runs);
const busyCores = Number(options['busy-cores']);
const workers = Number(options.workers);
/** Whether `value` is a whole number of at least `least`. */
const isCount = (value, least) => Number.isInteger(value) && value >= least;
if (options.help || !isCount(runs, 1) || !isCount(busyCores, 0) || !isCount(workers, 1)) {
  console.error(usage);
  process.exit(options.help ? 0 : 2);
}
const jestArgs = positionals.length > 0 ? positionals : ['--selectProjects', 'fault'];

/** A core kept busy by a child spinning in a loop, until stopped. */
function busyLoop() {
  const child = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
  return () => child.kill('SIGKILL');
}

/** One run of jest (in a process group of its own, ended with it) with `seed`; its JSON results. */
function runOnce(run, seed) {
  const resultsFile = join(outDir, `run-${run}.json`);
  rmSync(resultsFile, { force: true });
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(
      process.execPath,
      [require.resolve('jest/bin/jest'), '--json', `--outputFile=${resultsFile}`, `--maxWorkers=${workers}`, ...jestArgs],
      {
        cwd: root,
        stdio: ['ignore', 'ignore', 'pipe'],
        detached: true,
        env: { ...process.env, RINGSTORE_FAULT_SEED: String(seed), AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-200_000)));
    child.on('exit', (code) => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is gone
      }
      const results = existsSync(resultsFile) ? JSON.parse(readFileSync(resultsFile, 'utf8')) : undefined;
      resolve({ run, seed, code, seconds: (Date.now() - started) / 1000, results, stderr });
    });
  });
}

/** Per suite of one run: passed or failed, its time, and each failed test with its replay line. */
function suitesOf(outcome) {
  if (!outcome.results)
    return [{ file: '(jest)', ok: false, seconds: outcome.seconds, failures: [`jest exited ${outcome.code} without results`] }];
  return outcome.results.testResults.map((suite) => {
    const failed = suite.assertionResults.filter((test) => test.status === 'failed');
    const failures = failed.map((test) => {
      const message = test.failureMessages.join('\n');
      const replay =
        /replay: (RINGSTORE_FAULT_SEED=.*)$/m.exec(message)?.[1] ??
        `RINGSTORE_FAULT_SEED=${outcome.seed} npx jest ${relative(root, suite.name)}`;
      return `${test.fullName}\n      ${replay}`;
    });
    if (suite.status === 'failed' && failed.length === 0)
      failures.push(`the file itself: ${(suite.message ?? '').split('\n').find(Boolean) ?? ''}`);
    return {
      file: relative(root, suite.name),
      ok: suite.status === 'passed',
      seconds: (suite.endTime - suite.startTime) / 1000,
      failures,
    };
  });
}

mkdirSync(outDir, { recursive: true });
const stopBusy = Array.from({ length: busyCores }, busyLoop);
process.on('exit', () => stopBusy.forEach((stop) => stop()));
process.on('SIGINT', () => process.exit(130));
console.log(`soak: ${runs} runs of jest ${jestArgs.join(' ')} on ${workers} workers, ${busyCores} core(s) kept busy`);
const outcomes = [];
for (let run = 1; run <= runs; run += 1) {
  const seed = Math.floor(Math.random() * 2 ** 31);
  const outcome = await runOnce(run, seed);
  outcomes.push(outcome);
  const suites = suitesOf(outcome);
  const failedSuites = suites.filter((suite) => !suite.ok);
  console.log(
    `run ${run}/${runs} (seed ${seed}): ${suites.length - failedSuites.length} of ${suites.length} suites passed in ${outcome.seconds.toFixed(0)} s`,
  );
  for (const suite of failedSuites) for (const failure of suite.failures) console.log(`  ✕ ${suite.file} › ${failure}`);
}
stopBusy.forEach((stop) => stop());

// The table: one row per suite, its runs, failures and slowest time.
const table = new Map();
for (const outcome of outcomes) {
  for (const suite of suitesOf(outcome)) {
    const row = table.get(suite.file) ?? { runs: 0, failures: 0, secondsMax: 0, replays: [] };
    row.runs += 1;
    row.secondsMax = Math.max(row.secondsMax, suite.seconds);
    if (!suite.ok) {
      row.failures += 1;
      row.replays.push(...suite.failures);
    }
    table.set(suite.file, row);
  }
}
const lines = [
  `Soak of ${new Date().toISOString().slice(0, 10)}: ${runs} runs of \`jest ${jestArgs.join(' ')}\` on ${workers} workers with ${busyCores} core(s) kept busy, node ${process.version}.`,
  '',
  '| suite | runs | failures | slowest run (s) |',
  '|---|---:|---:|---:|',
  ...[...table]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([file, row]) => `| ${file} | ${row.runs} | ${row.failures} | ${row.secondsMax.toFixed(0)} |`),
];
const failures = [...table.values()].reduce((sum, row) => sum + row.failures, 0);
console.log(`\n${lines.join('\n')}\n`);
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
writeFileSync(
  join(outDir, `soak-${stamp}.json`),
  JSON.stringify(
    {
      runs,
      busyCores,
      workers,
      jestArgs,
      outcomes: outcomes.map(({ run, seed, code, seconds }) => ({ run, seed, code, seconds })),
      table: Object.fromEntries(table),
    },
    null,
    2,
  ),
);
writeFileSync(join(outDir, `soak-${stamp}.md`), `${lines.join('\n')}\n`);
console.log(
  `soak: ${failures} failing suite run(s) of ${[...table.values()].reduce((sum, row) => sum + row.runs, 0)}; table in ${relative(root, join(outDir, `soak-${stamp}.md`))}`,
);
process.exitCode = failures > 0 ? 1 : 0;
