// Jest setup of the integration project (setupFilesAfterEnv): the project's local cloud, started by the run's first
// integration file and found by the others (test/support/integration-cloud.ts), its facts in RINGSTORE_IT_* before
// the test file loads. This worker's fault suites are over by now (test/sequencer.cjs runs the integration files
// last), so the engines it shared with them stop rather than idle through the integration files.
import { integrationCloudEnv } from '../support/integration-cloud';
import { stopSharedEngines } from '../support/shared-engines';

stopSharedEngines();
Object.assign(process.env, integrationCloudEnv());
