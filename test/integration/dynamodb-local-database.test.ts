// DynamoDB Local's database (cdk/local/engines/dynamodb-local-database.ts): the local cloud starts the engine
// on its own rollback journal unless the write-ahead log is asked for (a database made for it then has pages
// of 4 KiB), adds its stream-record indexes once it answers, and a machine without javac starts the engine
// without either, saying so.
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addStreamIndexes, engineDatabaseFacts, setJournal, sharedDatabaseFile } from '../../cdk/local/engines/dynamodb-local-database';
import { artifactDir } from '../../cdk/local/engines/vendor';
import { DYNAMODB_LOCAL } from '../../cdk/local/engines/dynamodb-local';
import { javaExecutable } from '../../cdk/local/engines/java';

const vendorDir = process.env.RINGSTORE_VENDOR_DIR!;
const engineDir = artifactDir(vendorDir, DYNAMODB_LOCAL);
const dataDir = join(process.env.RINGSTORE_IT_HOME!, 'data', 'dynamodb');
const streamIndexes = ['ringstore_us_shard', 'ringstore_us_stream'];

describe('DynamoDB Local’s database', () => {
  it('the running local cloud’s is in the engine’s own journal, as the engine made it, with both stream-record indexes', async () => {
    // Act
    const facts = await engineDatabaseFacts({ engineDir, vendorDir, dataDir });

    // Assess
    expect(facts).toEqual({ journalMode: 'delete', pageBytes: 1024, streamIndexes });
  });

  it('adding the indexes again changes nothing (every start runs it on a kept database)', async () => {
    // Act
    const added = await addStreamIndexes({ engineDir, vendorDir, dataDir, log: () => undefined });

    // Assess
    expect(added).toBe(true);
    expect((await engineDatabaseFacts({ engineDir, vendorDir, dataDir }))?.streamIndexes).toEqual(streamIndexes);
  });

  describe('prepared before the engine starts', () => {
    const fresh = mkdtempSync(join(tmpdir(), 'ringstore-engine-db-'));
    afterAll(() => rmSync(fresh, { recursive: true, force: true }));

    it('a database made now is in write-ahead-log mode with pages of 4 KiB, and preparing it again keeps it so', async () => {
      // Act
      const first = await setJournal('wal', { engineDir, vendorDir, dataDir: fresh, log: () => undefined });
      const again = await setJournal('wal', { engineDir, vendorDir, dataDir: fresh, log: () => undefined });

      // Assess
      expect([first, again]).toEqual([true, true]);
      expect(await engineDatabaseFacts({ engineDir, vendorDir, dataDir: fresh })).toEqual({
        journalMode: 'wal',
        pageBytes: 4096,
        streamIndexes: [],
      });
    });

    it('rollback puts a kept one back in the engine’s own journal, keeping its pages', async () => {
      // Act
      const done = await setJournal('rollback', { engineDir, vendorDir, dataDir: fresh, log: () => undefined });

      // Assess
      expect(done).toBe(true);
      expect(await engineDatabaseFacts({ engineDir, vendorDir, dataDir: fresh })).toEqual({
        journalMode: 'delete',
        pageBytes: 4096,
        streamIndexes: [],
      });
    });
  });

  it('rollback on a directory with no database yet leaves the engine to make its own', async () => {
    // Arrange
    const empty = mkdtempSync(join(tmpdir(), 'ringstore-engine-db-'));

    try {
      // Act
      const done = await setJournal('rollback', { engineDir, vendorDir, dataDir: empty, log: () => undefined });

      // Assess
      expect(done).toBe(true);
      expect(existsSync(join(empty, sharedDatabaseFile))).toBe(false);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
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

    it('starts the engine in its own journal mode and without the indexes, and logs why (the helper cannot be compiled)', async () => {
      // Arrange
      const lines: string[] = [];
      const options = { engineDir, vendorDir: emptyVendor, dataDir, log: (line: string) => lines.push(line) };

      // Act
      const prepared = await setJournal('wal', options);
      const indexed = await addStreamIndexes(options);

      // Assess
      expect([prepared, indexed]).toEqual([false, false]);
      expect(lines).toEqual([
        expect.stringContaining('no javac (a JDK) on this machine, so its database stays in the journal mode it had'),
        expect.stringContaining('no javac (a JDK) on this machine, so its stream records stay unindexed'),
      ]);
    });

    it('needs no helper to keep a database already in the engine’s own journal there (the running cloud’s)', async () => {
      // Arrange
      const lines: string[] = [];

      // Act
      const done = await setJournal('rollback', { engineDir, vendorDir: emptyVendor, dataDir, log: (line) => lines.push(line) });

      // Assess
      expect(done).toBe(true);
      expect(lines).toEqual([]);
    });
  });
});
