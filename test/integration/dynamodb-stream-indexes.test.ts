// DynamoDB Local's stream-record indexes (cdk/local/engines/dynamodb-stream-indexes.ts): the local cloud
// adds them when its engine starts, and a machine without javac starts the engine without them, saying so.
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addStreamIndexes, streamIndexesOf } from '../../cdk/local/engines/dynamodb-stream-indexes';
import { artifactDir } from '../../cdk/local/engines/vendor';
import { DYNAMODB_LOCAL } from '../../cdk/local/engines/dynamodb-local';
import { javaExecutable } from '../../cdk/local/engines/java';

const vendorDir = process.env.RINGSTORE_VENDOR_DIR!;
const engineDir = artifactDir(vendorDir, DYNAMODB_LOCAL);
const dataDir = join(process.env.RINGSTORE_IT_HOME!, 'data', 'dynamodb');

describe('DynamoDB Local stream-record indexes', () => {
  it('the running local cloud has both indexes on the engine’s stream-record table', async () => {
    // Act
    const indexes = await streamIndexesOf({ engineDir, vendorDir, dataDir });

    // Assess
    expect(indexes).toEqual(['ringstore_us_shard', 'ringstore_us_stream']);
  });

  it('adding them again changes nothing (every start runs it on a kept database)', async () => {
    // Act
    const added = await addStreamIndexes({ engineDir, vendorDir, dataDir, log: () => undefined });

    // Assess
    expect(added).toBe(true);
    expect(await streamIndexesOf({ engineDir, vendorDir, dataDir })).toEqual(['ringstore_us_shard', 'ringstore_us_stream']);
  });

  describe('on a machine with a JRE and no javac', () => {
    const saved = { path: process.env.PATH, javaHome: process.env.JAVA_HOME };
    const bin = mkdtempSync(join(tmpdir(), 'ringstore-jre-'));
    const emptyVendor = mkdtempSync(join(tmpdir(), 'ringstore-vendor-'));

    beforeAll(() => {
      symlinkSync(javaExecutable(), join(bin, 'java'));
      process.env.PATH = bin;
      delete process.env.JAVA_HOME;
    });

    afterAll(() => {
      process.env.PATH = saved.path;
      if (saved.javaHome !== undefined) process.env.JAVA_HOME = saved.javaHome;
      rmSync(bin, { recursive: true, force: true });
      rmSync(emptyVendor, { recursive: true, force: true });
    });

    it('starts the engine without them and logs why (the helper cannot be compiled)', async () => {
      // Arrange
      const lines: string[] = [];

      // Act
      const added = await addStreamIndexes({ engineDir, vendorDir: emptyVendor, dataDir, log: (line) => lines.push(line) });

      // Assess
      expect(added).toBe(false);
      expect(lines).toEqual([expect.stringContaining('no javac (a JDK) on this machine')]);
    });
  });
});
