// Jest's order of test files. First the files that start no local cloud (the unit and cdk projects): `npm test`
// runs jest beside its static checks, and these files share the machine with the checks without a liveness
// bound to outlast. Then the fault and capacity suites, whose clouds share a worker's engines
// (test/support/shared-engines.ts). Then the integration files, which share one cloud started by the first of
// them (test/support/integration-cloud.ts), so that neither the cloud nor the engines idle while the other group
// runs. Within each group the longest first, by the durations of the run of record
// (test/durations.json, written by `node scripts/test-timings.mjs --write`), so that two workers finish
// together. Jest's own order needs its cache of earlier runs, which a fresh machine (CI) does not have: it
// then goes by file size, and a long suite that starts last makes the whole run wait for it. Files not in the
// table go last in their group.
const { join, relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;
const durations = require('./durations.json');

const root = join(__dirname, '..');
/** The groups in their order: projects whose files start no local cloud and assert no liveness bound, then the
 * fault suites, then the integration project. */
const groups = [new Set(['unit', 'cdk']), new Set(['fault', 'capacity']), new Set(['integration'])];

class CloudlessFirstThenLongest extends Sequencer {
  sort(tests) {
    const seconds = (test) => durations.seconds[relative(root, test.path)] ?? 0;
    const group = (test) => {
      const index = groups.findIndex((projects) => projects.has(test.context.config.displayName?.name));
      return index === -1 ? groups.length : index;
    };
    // Array.prototype.sort is stable: equal keys keep the order of jest's own sequencer.
    return [...super.sort(tests)].sort((a, b) => group(a) - group(b) || seconds(b) - seconds(a));
  }
}

module.exports = CloudlessFirstThenLongest;
