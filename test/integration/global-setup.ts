// The integration project's home and log; its one local cloud starts with its first test file
// (test/support/integration-cloud.ts, through the setup file test/integration/cloud.ts), not here: jest runs every
// project's global setup before the run's first file, and the integration files run last.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function globalSetup(): void {
  const home = mkdtempSync(join(tmpdir(), 'ringstore-it-'));
  // Jars are shared with `npm start` so a machine fetches them once.
  process.env.RINGSTORE_VENDOR_DIR ??= join(__dirname, '..', '..', '.ringstore', 'vendor');
  process.env.RINGSTORE_IT_HOME = home;
  // The cloud's whole output, kept for the suites that check what it logs (no secret in any line): this cloud's
  // only (a suite's own clouds do not append to it), at INFO so the audit lines are in it.
  process.env.RINGSTORE_IT_CLOUD_LOG = process.env.RINGSTORE_TEST_CLOUD_LOG ?? join(home, 'cloud.log');
}
