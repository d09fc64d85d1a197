// `npm test`: static checks (tsc, ESLint, Prettier) beside jest, then the failures with the commands that run
// them again, a timing line, and one summary line `N passed, M failed` (exit 1 on any failure).
// Arguments are forwarded to jest: `npm test -- test/unit`, `npm test -- -t ring`.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { printFailedChecks, runStaticChecks } from './static-checks.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const resultsFile = join(root, '.jest-results.json');
const jestArgs = process.argv.slice(2);

// Ctrl-C reaches jest too (same process group); we outlive it to print the summary.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});

/** After jest has written its results, it gets this long to exit before it and what it started are killed. */
const exitGraceMs = 20_000;

/**
 * Runs jest in a process group of its own, so that a run that does not exit after its summary (an open
 * handle, a process a test left) is ended with everything it started, naming what was still running.
 */
function runJest(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [require.resolve('jest/bin/jest'), ...args], {
      cwd: root,
      stdio: 'inherit',
      detached: true,
      // The SDK's notice that its 2027 releases need Node 22 would be printed by every test process (README, "Node").
      env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...process.env },
    });
    const forward = (signal) => killGroup(child.pid, signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    let hung = false;
    const watch = setInterval(() => {
      if (!existsSync(resultsFile)) return;
      clearInterval(watch);
      setTimeout(() => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        hung = true;
        console.log(`\njest did not exit ${exitGraceMs / 1000} s after writing its results; still running in its process group:`);
        console.log(
          processesOfGroup(child.pid) || '  (no process besides jest: an open handle in jest itself; run with --detectOpenHandles)',
        );
        killGroup(child.pid, 'SIGKILL');
      }, exitGraceMs).unref();
    }, 500);
    child.on('exit', (code, signal) => {
      clearInterval(watch);
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      // Whatever a test left in the group goes with jest.
      killGroup(child.pid, 'SIGKILL');
      resolve({ code: hung ? 1 : (code ?? (signal ? 1 : 0)), hung });
    });
  });
}

function killGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is gone.
  }
}

/** The processes of a process group, one `pid command` line each (empty when only the leader is left). */
function processesOfGroup(pgid) {
  const listed = spawnSync('ps', ['-o', 'pid=,pgid=,args='], { encoding: 'utf8' });
  return (listed.stdout ?? '')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([pid, group]) => Number(group) === pgid && Number(pid) !== pgid)
    .map(([pid, , ...command]) => `  ${pid} ${command.join(' ').slice(0, 160)}`)
    .join('\n');
}

/** How many cores were idle over the next `ms` (from the kernel's per-core times). */
async function idleCoresNow(ms) {
  const idleAndTotal = () =>
    cpus().reduce(
      ([idle, total], { times }) => [idle + times.idle, total + times.user + times.nice + times.sys + times.idle + times.irq],
      [0, 0],
    );
  const [idle0, total0] = idleAndTotal();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const [idle1, total1] = idleAndTotal();
  return total1 === total0 ? 0 : ((idle1 - idle0) / (total1 - total0)) * cpus().length;
}

function seconds(ms) {
  return `${(ms / 1000).toFixed(1)} s`;
}

// 1. The static checks (scripts/static-checks.mjs): tsc with ESLint, and Prettier, side by side, incremental; not
// run again on a tree that passed them as it is (CI's `npm run check` phase just did).
// 2. Jest beside the checks: the checks keep about one core and a half busy, and jest's first files are the
// unit and cdk projects' (test/sequencer.cjs), which start no local cloud and assert no liveness bound. The
// files that start local clouds come after them, by when the checks have (on this machine) ended: the fault
// suites' liveness bounds are set for a machine that runs them and one other busy core, not the checks' two.
// Workers: two, and a third when the machine is idle as the run starts (two idle cores): the fault suites wait
// out leases and failure detections, which two workers leave about a tenth of the machine idle over; a third
// fills it, sharing the machine as two do beside a busy core (the soak's load), which the suites are proven for.
const workersAsked = jestArgs.some((a) => /^(-i|--runInBand|-w|--maxWorkers)(=|$)/.test(a));
const idleCores = workersAsked ? 0 : await idleCoresNow(1_000);
const workers = idleCores >= 1.75 ? 3 : 2;
const chooseWorkers = workersAsked ? [] : [`--maxWorkers=${workers}`];
if (!workersAsked) console.log(`jest: ${workers} workers (${idleCores.toFixed(1)} of ${cpus().length} cores idle at the start)`);
rmSync(resultsFile, { force: true });
const checksStarted = Date.now();
const checking = runStaticChecks({ reusePass: true });
const jestStarted = Date.now();
const [checks, jest] = await Promise.all([checking, runJest(['--json', `--outputFile=${resultsFile}`, ...chooseWorkers, ...jestArgs])]);
const jestSeconds = (Date.now() - jestStarted) / 1000;
printFailedChecks(checks.results);

// 3. Summary: what failed, with the command that runs it again (a fault test's seeded replay when it printed
// one), the time each part took, and the one line CI reads.
let passed = 0;
let failed = 0;
const failures = [];
if (existsSync(resultsFile)) {
  const results = JSON.parse(readFileSync(resultsFile, 'utf8'));
  passed = results.numPassedTests ?? 0;
  failed = results.numFailedTests ?? 0;
  for (const suite of results.testResults ?? []) {
    const file = relative(root, suite.name);
    // A suite that fails before any test runs (compile error, throwing import, a hook) has no test results.
    if (suite.status === 'failed' && (suite.assertionResults ?? []).length === 0) failed += 1;
    if (suite.status === 'failed' && !(suite.assertionResults ?? []).some((test) => test.status === 'failed')) {
      failures.push({ what: `${file} (the file itself)`, rerun: `npx jest ${file}`, message: suite.message ?? '' });
    }
    for (const test of suite.assertionResults ?? []) {
      if (test.status !== 'failed') continue;
      const message = (test.failureMessages ?? []).join('\n');
      const replay = /replay: (RINGSTORE_FAULT_SEED=\S+ npx jest .*)$/m.exec(message)?.[1];
      failures.push({
        what: `${file} › ${test.fullName}`,
        rerun: replay ?? `npx jest ${file} -t ${shellQuote(`^${escapeRegExp(test.fullName)}$`)}`,
        message,
      });
    }
  }
}
if (failures.length > 0) {
  console.log(`\n${failures.length} failing (details above; each line below runs it again):`);
  for (const failure of failures) {
    const firstLine =
      stripAnsi(failure.message)
        .split('\n')
        .map((line) => line.trim())
        .find((line) => line && !line.startsWith('[seed')) ?? '';
    console.log(`  ✕ ${failure.what}\n      ${firstLine.slice(0, 200)}\n      ${failure.rerun}`);
  }
}
// A failed static check counts as one failure (its output is above).
if (checks.failed) failed += 1;
// Jest failed without a failing test to show for it (globalSetup threw, no tests matched, crash, a hang after the summary).
if (jest.code !== 0 && failed === 0) failed += 1;
console.log(
  `timing: static checks ${seconds(checks.doneAt - checksStarted)} beside jest ${jestSeconds.toFixed(1)} s; npm test ${seconds(Date.now() - checksStarted)}`,
);
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 || jest.code !== 0 ? 1 : 0;

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function shellQuote(text) {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Jest's messages carry terminal colours (ESC [ … m). */
function stripAnsi(text) {
  return text.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '');
}
