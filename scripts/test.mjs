// `npm test`: static checks (tsc, ESLint, Prettier), then jest, then one summary line `N passed, M failed`
// (exit 1 on any failure).
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

// 1. Static checks, in parallel (each is single-threaded; there are 2 cores): tsc on every TypeScript
// project, ESLint (type-aware rules and the layering zones), and Prettier's check of the formatting.
const tsc = require.resolve('typescript/bin/tsc');
const eslint = join(dirname(require.resolve('eslint/package.json')), 'bin', 'eslint.js');
const prettier = join(dirname(require.resolve('prettier/package.json')), 'bin', 'prettier.cjs');
const pretty = process.stdout.isTTY ? ['--pretty'] : [];
const projects = ['tsconfig.json', 'sdk/tsconfig.json'].filter((p) => existsSync(join(root, p)));
const checks = [
  ...projects.map((project) => ({ name: `tsc -p ${project}`, script: tsc, args: ['-p', project, '--noEmit', ...pretty] })),
  { name: 'eslint .', script: eslint, args: ['.', '--max-warnings=0'] },
  { name: 'prettier --check .', script: prettier, args: ['--check', '.', '--log-level=warn'] },
];
const checksStarted = Date.now();
const checkResults = await Promise.all(
  checks.map(async (check) => ({ ...check, ...(await runNode(check.script, check.args, { capture: true })) })),
);
let staticFailed = false;
for (const { name, code, output } of checkResults) {
  if (code !== 0) {
    staticFailed = true;
    process.stdout.write(`\n${name} failed\n${output}`);
  }
}
console.log(
  `static checks ${staticFailed ? 'FAILED' : 'ok'} (${checks.map((c) => c.name).join(', ')}) in ${seconds(Date.now() - checksStarted)}`,
);

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
// A failed static check counts as one failure (its output is above).
if (staticFailed) failed += 1;
// Jest failed without a failing test to show for it (globalSetup threw, no tests matched, crash).
if (jest.code !== 0 && failed === 0) failed += 1;
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 || jest.code !== 0 ? 1 : 0;
