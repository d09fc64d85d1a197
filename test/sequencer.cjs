// Jest's order of test files: the longest first, by the durations of the run of record (test/durations.json,
// written by `node scripts/test-timings.mjs --write`), so that two workers finish together. Jest's own order
// needs its cache of earlier runs, which a fresh machine (CI) does not have: it then goes by file size,
// and a long suite that starts last makes the whole run wait for it. Files not in the table go last.
const { join, relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;
const durations = require('./durations.json');

const root = join(__dirname, '..');

class LongestFirst extends Sequencer {
  sort(tests) {
    const seconds = (test) => durations.seconds[relative(root, test.path)] ?? 0;
    // Array.prototype.sort is stable: equal durations keep the order of jest's own sequencer.
    return [...super.sort(tests)].sort((a, b) => seconds(b) - seconds(a));
  }
}

module.exports = LongestFirst;
