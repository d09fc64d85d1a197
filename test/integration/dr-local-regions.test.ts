// Two local regions as `npm start -- --regions 2` runs them (docs/dr.md, "Locally"): the local IAM user
// signs for the backup as for the primary.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LocalRegions, startLocalRegions } from '../../cdk/local/regions';
import { RingstoreClient } from '../../sdk/src';

// The SDK's notice that its 2027 releases need Node 22, as main.ts silences it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

jest.setTimeout(240_000);

describe('two local regions', () => {
  let home: string;
  let regions: LocalRegions | undefined;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'ringstore-it-regions-'));
    regions = await startLocalRegions({
      home,
      vendorDir: process.env.RINGSTORE_VENDOR_DIR ?? join(__dirname, '..', '..', '.ringstore', 'vendor'),
      port: 0,
      link: false,
      maintenanceIntervalMs: 0,
      sweeperIntervalMs: 0,
      autoFailover: false,
      valueWaitMs: 500,
    });
  });

  afterAll(async () => {
    await regions?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('take the local IAM user in the backup region too', async () => {
    // Prepare: the credentials `npm start` prints are the primary's.
    const { primary, backup } = regions!;
    const signed = (endpoint: string) => new RingstoreClient({ endpoint, credentials: primary.iamUser, sleep: async () => {} });
    await signed(primary.url).put('signed-in-both', 'from the primary');
    await regions!.drCaughtUp();

    // Act
    const fromBackup = await signed(backup.url).get('signed-in-both');

    // Assess
    expect(backup.iamUser).toEqual(primary.iamUser);
    expect(fromBackup.text()).toBe('from the primary');
  });
});
