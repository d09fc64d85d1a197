// Two local regions as `npm start -- --regions 2` runs them (docs/dr.md, "Locally"): the local IAM user
// signs for the backup as for the primary, and after a DR drill the demoted primary's data is not started
// alone (writable, role none) unless that is asked for with --accept-demoted.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acceptDemotedFlag, demotionOf } from '../../cdk/local/demotion';
import { type LocalRegions, startLocalRegions } from '../../cdk/local/regions';
import { RingstoreClient } from '../../sdk/src';
import { startLocalCloudProcess } from '../support/local-cloud-process';
import { sleep } from './support';

// The SDK's notice that its 2027 releases need Node 22, as main.ts silences it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** Bound on the drill's promotion: the lease (5 s) and the value wait (0.5 s here), with room for a busy machine. */
const promotionMs = 60_000;

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

  it("refuse to start the demoted primary's data alone after a drill, unless --accept-demoted", async () => {
    // Prepare: a drill, the backup promoted, both regions stopped.
    const { backup } = regions!;
    const admin = new RingstoreClient({ endpoint: backup.url, apiKey: backup.adminKey });
    await admin.promote({ reason: 'drill' });
    const deadline = Date.now() + promotionMs;
    while ((await admin.describeDr()).state !== 'promoted') {
      if (Date.now() > deadline) throw new Error(`the backup was not promoted within ${promotionMs} ms`);
      await sleep(250);
    }
    await regions!.stop();
    regions = undefined;

    // Act: `npm start` on the primary's data, plain, then with the flag.
    const plain = await startLocalCloudProcess({ home }).then(
      async (cloud) => {
        await cloud.stop();
        return 'started';
      },
      (error: unknown) => String(error),
    );
    const accepted = await startLocalCloudProcess({ home, args: [acceptDemotedFlag] });
    const write = await fetch(`${accepted.url}/v1/kv/after-the-drill`, {
      method: 'PUT',
      headers: { 'x-api-key': accepted.apiKey, 'content-type': 'text/plain' },
      body: 'the old primary alone',
    });
    await accepted.stop();

    // Assess: refused before any engine, saying why and what to do; accepted, it is a region of its own.
    expect(plain).toContain('exited with 1');
    expect(plain).toContain('its backup region was promoted');
    expect(plain).toContain('holds writes this data does not have');
    expect(plain).toContain('npm start -- --regions 2');
    expect(plain).toContain(acceptDemotedFlag);
    expect(write.status).toBe(200);
    expect(await demotionOf(home)).toBeUndefined();
  });
});
