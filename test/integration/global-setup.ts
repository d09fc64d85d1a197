// Starts one local cloud for the integration suite; tests reach it through env vars.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalCloudProcess } from '../support/local-cloud-process';

export default async function globalSetup(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), 'ringstore-it-'));
  // Jars are shared with `npm start` so a machine fetches them once.
  process.env.RINGSTORE_VENDOR_DIR ??= join(__dirname, '..', '..', '.ringstore', 'vendor');
  // The cloud's whole output, kept for the suites that check what it logs (no secret in any line): this
  // cloud's only (a suite's own clouds do not append to it), at INFO so the audit lines are in it.
  const askedLog = process.env.RINGSTORE_TEST_CLOUD_LOG;
  const cloudLog = askedLog ?? join(home, 'cloud.log');
  process.env.RINGSTORE_TEST_CLOUD_LOG = cloudLog;
  const cloud = await startLocalCloudProcess({
    home,
    // A short authorizer cache keeps the revocation test quick; the default (60 s) is tested in unit tests.
    // No automatic failover: a request slowed past its timeout on a busy machine must not move ranges
    // under the other suites (failover has its own, in test/fault).
    env: { RINGSTORE_AUTH_CACHE_TTL_SECONDS: '1', RINGSTORE_AUTO_FAILOVER: '0', POWERTOOLS_LOG_LEVEL: 'INFO' },
  }).finally(() => {
    if (askedLog === undefined) delete process.env.RINGSTORE_TEST_CLOUD_LOG;
  });
  process.env.RINGSTORE_IT_CLOUD_LOG = cloudLog;
  process.env.RINGSTORE_IT_URL = cloud.url;
  process.env.RINGSTORE_IT_API_KEY = cloud.apiKey;
  process.env.RINGSTORE_IT_ADMIN_KEY = cloud.adminKey;
  process.env.RINGSTORE_IT_HOME = home;
  // For fixtures no request can make (a transaction whose coordinator is gone): its table items.
  process.env.RINGSTORE_IT_DYNAMODB = cloud.dynamodbEndpoint;
  (globalThis as { ringstoreCloud?: typeof cloud }).ringstoreCloud = cloud;
}
