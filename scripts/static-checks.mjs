// The static checks: the type check of every tsconfig with ESLint (type-aware rules and the layering zones) in one
// process over the same programs (scripts/typecheck-and-lint.mjs), and Prettier's check of the formatting, side by
// side. Their caches live in node_modules/.cache, so a second run checks only what changed.
// `npm test` runs them beside jest (scripts/test.mjs); `npm run check` runs them alone, which is how CI runs them
// first, in a phase of its own: a type error fails CI in about a minute instead of after the tests, and the tests'
// run then finds the caches as a contributor's tree has them (docs/testing.md, "Time").
//
// A pass is remembered by the tree's fingerprint (every file git would check in, by path and content, and the node
// version): `npm test` on a tree that passed as it is now says so and does not check it again (CI's `npm test` after its
// `npm run check` phase, or a contributor's second run without an edit). `npm run check` always checks.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const prettier = join(dirname(require.resolve('prettier/package.json')), 'bin', 'prettier.cjs');
const cache = join(root, 'node_modules', '.cache', 'ringstore-checks');
/** The fingerprint of the last tree the checks passed on. */
const passedStamp = join(cache, 'passed-tree');

export const staticChecks = [
  { name: 'tsc and eslint', script: join(root, 'scripts', 'typecheck-and-lint.mjs'), args: [] },
  {
    name: 'prettier --check .',
    script: prettier,
    args: ['--check', '.', '--log-level=warn', '--cache', '--cache-location', join(cache, 'prettier')],
  },
];

/** Runs node on `script` with its output buffered, so that checks run side by side do not interleave. */
function runNode(script, args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', (error) => resolve({ code: 1, output: `${output}${error.message}\n` }));
    child.on('exit', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

/**
 * The tree's fingerprint: the path and content of every file git lists as tracked or addable (so a new file counts,
 * an ignored one not), with the node version. Undefined outside a git checkout: the checks then always run.
 */
export function treeFingerprint(dir = root) {
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: dir, encoding: 'utf8' });
  if (listed.status !== 0) return undefined;
  const hash = createHash('sha256').update(process.version);
  for (const path of [...new Set(listed.stdout.split('\0').filter(Boolean))].sort()) {
    hash.update(`\0${path}\0`);
    try {
      hash.update(readFileSync(join(dir, path)));
    } catch {
      hash.update('\0(deleted)'); // listed by the index, gone from the tree
    }
  }
  return hash.digest('hex');
}

function readStamp() {
  try {
    return readFileSync(passedStamp, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Runs every check side by side; prints one line when they have all ended (ok or FAILED, and how long they took).
 * Resolves with each check's exit code and output, whether any failed, and when they ended. With `reusePass`, a
 * tree whose fingerprint is the last passed one's is not checked again.
 */
export async function runStaticChecks({ reusePass = false } = {}) {
  const started = Date.now();
  const names = staticChecks.map((c) => c.name).join(', ');
  const before = treeFingerprint();
  if (reusePass && before !== undefined && readStamp() === before) {
    const doneAt = Date.now();
    console.log(`static checks ok (${names}): passed on this tree as it is, not run again (${((doneAt - started) / 1000).toFixed(1)} s)`);
    return { results: [], failed: false, doneAt };
  }
  const results = await Promise.all(staticChecks.map(async (check) => ({ ...check, ...(await runNode(check.script, check.args)) })));
  const doneAt = Date.now();
  const failed = results.some(({ code }) => code !== 0);
  // Remembered only for a tree that did not change while it was checked.
  if (!failed && before !== undefined && treeFingerprint() === before) {
    mkdirSync(cache, { recursive: true });
    writeFileSync(passedStamp, before);
  } else {
    rmSync(passedStamp, { force: true });
  }
  console.log(`static checks ${failed ? 'FAILED' : 'ok'} (${names}) in ${((doneAt - started) / 1000).toFixed(1)} s`);
  return { results, failed, doneAt };
}

/** Prints the output of each failed check. */
export function printFailedChecks(results) {
  for (const { name, code, output } of results) {
    if (code !== 0) process.stdout.write(`\n${name} failed\n${output}`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { results, failed } = await runStaticChecks();
  printFailedChecks(results);
  process.exitCode = failed ? 1 : 0;
}
