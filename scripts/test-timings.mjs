// `node scripts/test-timings.mjs [results.json] [--write]`: what each test file of the last `npm test` took
// (from jest's JSON results, .jest-results.json), as the Markdown table docs/testing.md shows: per project,
// the files slowest first, and each project's sum. `--write` records the durations in test/durations.json,
// which orders the next runs (test/sequencer.cjs): the longest files start first.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const write = args.includes('--write');
const resultsFile = args.find((arg) => !arg.startsWith('--')) ?? join(root, '.jest-results.json');
if (!existsSync(resultsFile)) {
  console.error(`no results at ${resultsFile}: run npm test first`);
  process.exit(2);
}
const results = JSON.parse(readFileSync(resultsFile, 'utf8'));

/** The jest project of a test file, from the folders of jest.config.js. */
function projectOf(file) {
  if (file.startsWith('sdk/test/')) return 'unit';
  return file.split('/')[1] ?? 'unknown';
}

const files = results.testResults
  .map((suite) => ({
    file: relative(root, suite.name),
    seconds: (suite.endTime - suite.startTime) / 1000,
    tests: suite.assertionResults.length,
    status: suite.status,
  }))
  .sort((a, b) => b.seconds - a.seconds);
const byProject = new Map();
for (const entry of files) {
  const project = projectOf(entry.file);
  byProject.set(project, [...(byProject.get(project) ?? []), entry]);
}
const wallSeconds = (Math.max(...results.testResults.map((suite) => suite.endTime)) - results.startTime) / 1000;
const workerSeconds = files.reduce((sum, entry) => sum + entry.seconds, 0);

const lines = [
  `jest: ${files.length} files, ${results.numTotalTests} tests, ${wallSeconds.toFixed(0)} s from start to the last file's end, ` +
    `${workerSeconds.toFixed(0)} s of files in all over its workers.`,
  '',
  '| project | files | seconds in all | slowest files (s) |',
  '|---|---:|---:|---|',
];
for (const [project, entries] of [...byProject].sort(([, a], [, b]) => sum(b) - sum(a))) {
  const slowest = entries
    .slice(0, 6)
    .map((entry) => `${entry.file.replace(/^(test|sdk\/test)\/[a-z]+\//, '').replace(/^sdk\/test\//, 'sdk/')} ${entry.seconds.toFixed(0)}`)
    .join(', ');
  lines.push(`| ${project} | ${entries.length} | ${sum(entries).toFixed(0)} | ${slowest} |`);
}
console.log(lines.join('\n'));

if (write) {
  const seconds = Object.fromEntries(files.map((entry) => [entry.file, Math.round(entry.seconds)]).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(
    join(root, 'test', 'durations.json'),
    `${JSON.stringify({ measured: new Date().toISOString().slice(0, 10), seconds }, null, 2)}\n`,
  );
  console.log('\nwrote test/durations.json');
}

function sum(entries) {
  return entries.reduce((total, entry) => total + entry.seconds, 0);
}
