// `npm test`: type check, then jest, then one summary line `N passed, M failed` (exit 1 on any failure).
// Arguments are forwarded to jest: `npm test -- test/unit`, `npm test -- -t ring`.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const resultsFile = join(root, '.jest-results.json');
const jestArgs = process.argv.slice(2);

// Ctrl-C reaches jest too (same process group); we outlive it to print the summary.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});

/** Runs node on `script`; `capture` buffers output so parallel runs do not interleave. */
function runNode(script, args, { capture = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], { cwd: root, stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    let output = '';
    child.stdout?.on('data', (d) => (output += d));
    child.stderr?.on('data', (d) => (output += d));
    child.on('error', (error) => resolve({ code: 1, output: `${output}${error.message}\n` }));
    child.on('exit', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

function seconds(ms) {
  return `${(ms / 1000).toFixed(1)} s`;
}

// 1. Type check every TypeScript project, in parallel (tsc is single-threaded; there are 2 cores).
const tsc = require.resolve('typescript/bin/tsc');
const projects = ['tsconfig.json', 'sdk/tsconfig.json'].filter((p) => existsSync(join(root, p)));
const typecheckStarted = Date.now();
const typechecks = await Promise.all(
  projects.map(async (project) => {
    const pretty = process.stdout.isTTY ? ['--pretty'] : [];
    const result = await runNode(tsc, ['-p', project, '--noEmit', ...pretty], { capture: true });
    return { project, ...result };
  }),
);
let typeFailed = false;
for (const { project, code, output } of typechecks) {
  if (code !== 0) {
    typeFailed = true;
    process.stdout.write(`\ntype check failed: tsc -p ${project}\n${output}`);
  }
}
console.log(`type check ${typeFailed ? 'FAILED' : 'ok'} (${projects.join(', ')}) in ${seconds(Date.now() - typecheckStarted)}`);

// 2. Jest. Integration tests share one local cloud (globalSetup), so two workers match two cores.
const chooseWorkers = jestArgs.some((a) => /^(-i|--runInBand|-w|--maxWorkers)(=|$)/.test(a)) ? [] : ['--maxWorkers=2'];
rmSync(resultsFile, { force: true });
const jest = await runNode(require.resolve('jest/bin/jest'), ['--json', `--outputFile=${resultsFile}`, ...chooseWorkers, ...jestArgs]);

// 3. Summary.
let passed = 0;
let failed = 0;
if (existsSync(resultsFile)) {
  const results = JSON.parse(readFileSync(resultsFile, 'utf8'));
  passed = results.numPassedTests ?? 0;
  failed = results.numFailedTests ?? 0;
  // A suite that fails before any test runs (compile error, throwing import) has no test results.
  for (const suite of results.testResults ?? []) {
    if (suite.status === 'failed' && (suite.assertionResults ?? []).length === 0) failed += 1;
  }
}
if (typeFailed) failed += 1;
// Jest failed without a failing test to show for it (globalSetup threw, no tests matched, crash).
if (jest.code !== 0 && failed === 0) failed += 1;
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 || jest.code !== 0 ? 1 : 0;
