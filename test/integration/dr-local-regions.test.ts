// Two local regions as `npm start -- --regions 2` runs them (docs/dr.md, "Locally"): the local IAM user
// signs for the backup as for the primary, and after a DR drill the demoted primary's data is not started
// alone (writable, role none) unless that is asked for with --accept-demoted.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acceptDemotedFlag, demotionOf } from '../../cdk/local/demotion';
import { type LocalRegions, startLocalRegions } from '../../cdk/local/regions';
import { ForbiddenError, RingstoreClient } from '../../sdk/src';
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

  /** A client of `endpoint` signed by the local IAM user (the same in both regions). */
  const signed = (endpoint: string) => new RingstoreClient({ endpoint, credentials: regions!.primary.iamUser, sleep: async () => {} });

  /** A DR drill: the backup promoted (a second call finds it promoted). */
  async function promoteBackup(): Promise<void> {
    const admin = new RingstoreClient({ endpoint: regions!.backup.url, apiKey: regions!.backup.adminKey });
    if ((await admin.describeDr()).state !== 'promoted') await admin.promote({ reason: 'drill' });
    const deadline = Date.now() + promotionMs;
    while ((await admin.describeDr()).state !== 'promoted') {
      if (Date.now() > deadline) throw new Error(`the backup was not promoted within ${promotionMs} ms`);
      await sleep(250);
    }
  }

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
    await signed(primary.url).put('signed-in-both', 'from the primary');
    await regions!.drCaughtUp();

    // Act
    const fromBackup = await signed(backup.url).get('signed-in-both');

    // Assess
    expect(backup.iamUser).toEqual(primary.iamUser);
    expect(fromBackup.text()).toBe('from the primary');
  });

  it("ship a volume's blocks: the backup refuses block reads until it is promoted, then serves them whole", async () => {
    // Prepare: a write across two blocks at an unaligned offset, and one at the end of a later block.
    const { primary, backup } = regions!;
    await signed(primary.url).createVolume('dr-disk', 16 * 4096);
    const disk = signed(primary.url).volume('dr-disk');
    await disk.attach({ holder: 'dr-test' });
    const across = new Uint8Array(6000).map((_, i) => (i * 7) % 251);
    const tail = new TextEncoder().encode('the last bytes of block 9');
    await disk.write(1000, across);
    await disk.write(10 * 4096 - tail.byteLength, tail);
    await regions!.drCaughtUp();

    // Act
    const beforePromotion = await signed(backup.url)
      .volume('dr-disk')
      .read(0, 4096)
      .catch((error: unknown) => error);
    await promoteBackup();
    const promoted = signed(backup.url).volume('dr-disk');
    const [acrossRead, tailRead, unwritten] = await Promise.all([
      promoted.read(1000, across.byteLength),
      promoted.read(10 * 4096 - tail.byteLength, tail.byteLength),
      promoted.read(12 * 4096, 4096),
    ]);

    // Assess: refused as transactions are in a backup (never a stale block), then the primary's bytes exactly.
    expect(beforePromotion).toBeInstanceOf(ForbiddenError);
    expect(beforePromotion).toMatchObject({ code: 'dr.backupReadOnly' });
    expect(Buffer.from(acrossRead).equals(Buffer.from(across))).toBe(true);
    expect(new TextDecoder().decode(tailRead)).toBe('the last bytes of block 9');
    expect(unwritten.every((byte) => byte === 0)).toBe(true);
  });

  it("refuse to start the demoted primary's data alone after a drill, unless --accept-demoted", async () => {
    // Prepare: a drill, the backup promoted, both regions stopped.
    await promoteBackup();
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
