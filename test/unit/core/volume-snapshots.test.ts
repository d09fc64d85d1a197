// Volume snapshots in the core (docs/volumes.md, "Snapshots"): copy-on-write per block, read at the instant they
// were taken, whatever the writes after; deleted with the copies only they read; a write racing a snapshot lands
// wholly on one side of it; a creation cut short is finished by the next request and serves nothing meanwhile.
import fc from 'fast-check';
import { isRingstoreError } from '../../../lambdas/core/errors';
import { contentTypeWith, copiesOf, copyFor } from '../../../lambdas/core/volume-layout';
import { entriesStillRead, mustCopy } from '../../../lambdas/core/volume-snapshots';
import { volumeCrashPoints } from '../../../lambdas/ports';
import type { VolumeService } from '../../../lambdas/core/volumes';
import {
  B,
  boundaryAcrossShards,
  createAttached,
  expectBytes,
  pattern,
  pausingRunner,
  secondInstance,
  setup,
  small,
  volumeStep,
  applyVolumeSteps,
} from '../../support/volume-world';

const codeOf = (error: unknown) => (isRingstoreError(error) ? error.code : error);

/** A model disk: what a volume of `size` bytes holds after the writes (and trims) applied to it. */
class ModelDisk {
  readonly bytes: Uint8Array;
  constructor(size: number) {
    this.bytes = new Uint8Array(size);
  }
  write(offset: number, data: Uint8Array): void {
    this.bytes.set(data, offset);
  }
  trim(offset: number, length: number): void {
    this.bytes.fill(0, offset, offset + length);
  }
}

async function readAll(volumes: VolumeService, size: number, snapshot?: string): Promise<Uint8Array> {
  const ranged = () => ({ offset: 0, length: size });
  return snapshot
    ? (await volumes.readSnapshotRange('ns', 'disk', snapshot, ranged)).bytes
    : (await volumes.readRange('ns', 'disk', ranged)).bytes;
}

describe('snapshot copies', () => {
  it('copies a block before its first change after a kept snapshot, once per generation', () => {
    expect(mustCopy([], [], 3)).toBe(false);
    expect(mustCopy([], [0], 1)).toBe(true);
    // Copied in this generation (tag G-1) already.
    expect(mustCopy([{ tag: 0 }], [0], 1)).toBe(false);
    // A copy tagged 2 serves snapshot 1; snapshot 4 (generation 5) needs a new one.
    expect(mustCopy([{ tag: 2 }], [1], 5)).toBe(false);
    expect(mustCopy([{ tag: 2 }], [1, 4], 5)).toBe(true);
  });

  it("keeps a block's copy index in its content type, and reads it back", () => {
    const entries = [{ tag: 0 }, { tag: 3, zero: true as const }, { tag: 12 }];
    expect(contentTypeWith(entries)).toBe('application/octet-stream; copies=0,3z,12');
    expect(copiesOf(contentTypeWith(entries))).toEqual(entries);
    expect(contentTypeWith([])).toBe('application/octet-stream');
    expect(copiesOf('application/octet-stream')).toEqual([]);
    expect(copiesOf(undefined)).toEqual([]);
  });

  it('reads the copy with the smallest tag at or after the snapshot, else the block', () => {
    const index = [{ tag: 2 }, { tag: 5, zero: true as const }, { tag: 9 }];
    expect(copyFor(index, 0)).toEqual({ tag: 2 });
    expect(copyFor(index, 3)).toEqual({ tag: 5, zero: true });
    expect(copyFor(index, 9)).toEqual({ tag: 9 });
    expect(copyFor(index, 10)).toBeUndefined();
  });

  it('keeps a copy while a kept snapshot falls between it and the kept copy before it', () => {
    const index = [{ tag: 2 }, { tag: 5 }, { tag: 9 }];
    expect(entriesStillRead(index, [1, 4, 8])).toEqual(index);
    expect(entriesStillRead(index, [4])).toEqual([{ tag: 5 }]);
    expect(entriesStillRead(index, [])).toEqual([]);
    expect(entriesStillRead(index, [10])).toEqual([]);
  });
});

describe('volume snapshots', () => {
  it('reads each snapshot as the volume was when it was taken, across writes, trims and unwritten blocks', async () => {
    const { volumes } = setup();
    const size = 24 * B;
    const { epoch } = await createAttached(volumes, 'disk', size);
    const model = new ModelDisk(size);
    const apply = async (offset: number, data: Uint8Array) => {
      await volumes.write('ns', 'disk', offset, data, { epoch });
      model.write(offset, data);
    };
    await apply(0, pattern(6 * B, 1));
    const first = await volumes.createSnapshot('ns', 'disk', 'first');
    expect(first).toMatchObject({ name: 'first', state: 'ready', sizeBytes: size });
    const atFirst = Uint8Array.from(model.bytes);
    // An unaligned write across a group boundary, a write of a block never written, a trim.
    await apply(3 * B + 100, pattern(2 * B, 2));
    await apply(20 * B, pattern(B, 3));
    await volumes.trim('ns', 'disk', 0, 2 * B, { epoch });
    model.trim(0, 2 * B);
    await volumes.createSnapshot('ns', 'disk', 'second');
    const atSecond = Uint8Array.from(model.bytes);
    await apply(B + 7, pattern(3 * B, 4));
    await apply(20 * B, pattern(B, 5));
    expectBytes(await readAll(volumes, size, 'first'), atFirst);
    expectBytes(await readAll(volumes, size, 'second'), atSecond);
    expectBytes(await readAll(volumes, size), model.bytes);
    const described = await volumes.describe('ns', 'disk');
    expect(described.snapshotBytes).toBeGreaterThan(0);
    expect((await volumes.listSnapshots('ns', 'disk')).map((snapshot) => snapshot.name)).toEqual(['first', 'second']);
  });

  it('takes the largest write after a snapshot whole, unaligned, with a copy of each of its 65 blocks', async () => {
    const { volumes } = setup();
    const size = 128 * B;
    const { epoch } = await createAttached(volumes, 'disk', size);
    await volumes.write('ns', 'disk', 0, pattern(small.ioBytesMax, 1), { epoch });
    await volumes.createSnapshot('ns', 'disk', 'before');
    await volumes.write('ns', 'disk', 100, pattern(small.ioBytesMax, 2), { epoch });
    expectBytes(await readAll(volumes, small.ioBytesMax, 'before'), pattern(small.ioBytesMax, 1));
    expectBytes(await volumes.read('ns', 'disk', 100, small.ioBytesMax), pattern(small.ioBytesMax, 2));
    // 64 blocks held data and were copied; the 65th held nothing (listed as zero, no copy).
    expect((await volumes.describe('ns', 'disk')).snapshotBytes).toBe(64 * B);
  });

  it('deletes a snapshot with the copies only it read; the others read as before', async () => {
    const { volumes } = setup();
    const size = 8 * B;
    const { epoch } = await createAttached(volumes, 'disk', size);
    const model = new ModelDisk(size);
    const views = new Map<string, Uint8Array>();
    for (let round = 1; round <= 4; round += 1) {
      const data = pattern(3 * B, round);
      await volumes.write('ns', 'disk', round * 1000, data, { epoch });
      model.write(round * 1000, data);
      await volumes.createSnapshot('ns', 'disk', `s${round}`);
      views.set(`s${round}`, Uint8Array.from(model.bytes));
    }
    await volumes.write('ns', 'disk', 0, pattern(size, 9), { epoch });
    const before = (await volumes.describe('ns', 'disk')).snapshotBytes;
    const deleted = await volumes.deleteSnapshot('ns', 'disk', 's2');
    expect(deleted.name).toBe('s2');
    for (const name of ['s1', 's3', 's4']) expectBytes(await readAll(volumes, size, name), views.get(name)!);
    await volumes.deleteSnapshot('ns', 'disk', 's1');
    await volumes.deleteSnapshot('ns', 'disk', 's4');
    expectBytes(await readAll(volumes, size, 's3'), views.get('s3')!);
    await volumes.deleteSnapshot('ns', 'disk', 's3');
    // Every copy went with the last snapshot; nothing is left but the blocks.
    expect(before).toBeGreaterThan(0);
    expect(await volumes.describe('ns', 'disk')).toMatchObject({ snapshotBytes: 0, allocatedBytes: size });
    expect(await volumes.listSnapshots('ns', 'disk')).toEqual([]);
    expectBytes(await readAll(volumes, size), pattern(size, 9));
  });

  it("leaves a copy no snapshot reads when a write gives up after its copy's transaction; a deletion removes it", async () => {
    const world = setup();
    const { volumes } = world;
    const { epoch } = await createAttached(volumes, 'disk', 8 * B);
    await volumes.write('ns', 'disk', 0, pattern(B, 1), { epoch });
    await volumes.createSnapshot('ns', 'disk', 'kept');
    // The copy's transaction (one group: one atomic write) commits, then the writer crashes before its change.
    world.faults.crashAt('txn.afterAtomicCommit');
    await expect(volumes.write('ns', 'disk', 0, pattern(B, 2), { epoch })).rejects.toThrow('crash injected');
    expect(await volumes.describe('ns', 'disk')).toMatchObject({ snapshotBytes: B });
    expectBytes(await readAll(volumes, B, 'kept'), pattern(B, 1));
    expectBytes(await volumes.read('ns', 'disk', 0, B), pattern(B, 1));
    // A later snapshot's deletion moves the generation past the orphan's and removes it; the kept snapshot reads on.
    await volumes.createSnapshot('ns', 'disk', 'later');
    expect(await volumes.deleteSnapshot('ns', 'disk', 'later')).toMatchObject({ copiesDeleted: 1 });
    expect(await volumes.describe('ns', 'disk')).toMatchObject({ snapshotBytes: 0 });
    expectBytes(await readAll(volumes, B, 'kept'), pattern(B, 1));
  });

  it('refuses an unknown snapshot, a taken name, one past the maximum and a range past its end, changing nothing', async () => {
    const { volumes } = setup({ ...small, snapshotsMax: 2 });
    const { epoch } = await createAttached(volumes, 'disk', 8 * B);
    await volumes.createSnapshot('ns', 'disk', 'a');
    await volumes.resize('ns', 'disk', 16 * B);
    await volumes.createSnapshot('ns', 'disk', 'b');
    const refusals = await Promise.all([
      volumes.createSnapshot('ns', 'disk', 'a').catch((error: unknown) => error),
      volumes.createSnapshot('ns', 'disk', 'c').catch((error: unknown) => error),
      volumes.createSnapshot('ns', 'disk', 'bad/name').catch((error: unknown) => error),
      volumes.deleteSnapshot('ns', 'disk', 'missing').catch((error: unknown) => error),
      volumes.readSnapshotRange('ns', 'disk', 'missing', () => ({ offset: 0, length: 1 })).catch((error: unknown) => error),
      // Snapshot a holds the volume's size when taken: 8 blocks.
      volumes.readSnapshotRange('ns', 'disk', 'a', () => ({ offset: 8 * B, length: 1 })).catch((error: unknown) => error),
      volumes.createSnapshot('ns', 'missing', 'x').catch((error: unknown) => error),
    ]);
    expect(refusals.map(codeOf)).toEqual([
      'volume.snapshotExists',
      'volume.snapshotLimit',
      'volume.nameInvalid',
      'volume.snapshotNotFound',
      'volume.snapshotNotFound',
      'volume.rangeNotSatisfiable',
      'volume.notFound',
    ]);
    expect((await volumes.listSnapshots('ns', 'disk')).map((snapshot) => [snapshot.name, snapshot.sizeBytes])).toEqual([
      ['a', 8 * B],
      ['b', 16 * B],
    ]);
    await volumes.write('ns', 'disk', 12 * B, pattern(B, 1), { epoch });
    expectBytes(await readAll(volumes, 16 * B, 'b'), new Uint8Array(16 * B));
  });

  it('a write paused with the record read before a snapshot lands after it, never in it, across two shards too', async () => {
    const world = setup();
    // The writer's next transaction with a put waits for the snapshot before it runs.
    const { runner: pausing, pauseNext } = pausingRunner(world);
    const writer = secondInstance(world, pausing);
    const other = secondInstance(world);
    const { epoch, id } = await createAttached(writer, 'disk', 400 * B);
    const offset = boundaryAcrossShards(id) * B - 100;
    await writer.write('ns', 'disk', offset, pattern(200, 1), { epoch });
    for (const [round, name] of [
      [2, 'one'],
      [3, 'two'],
    ] as const) {
      pauseNext(async () => {
        await other.createSnapshot('ns', 'disk', name);
      });
      await writer.write('ns', 'disk', offset, pattern(200, round), { epoch });
      expectBytes((await other.readSnapshotRange('ns', 'disk', name, () => ({ offset, length: 200 }))).bytes, pattern(200, round - 1));
      expectBytes(await other.read('ns', 'disk', offset, 200), pattern(200, round));
    }
  });

  it.each(volumeCrashPoints.map((point) => [point]))(
    'a creation cut short at %s serves nothing until the same request finishes it; writes meanwhile stay out of it',
    async (point) => {
      const world = setup();
      const { volumes } = world;
      const { epoch } = await createAttached(volumes, 'disk', 16 * B);
      await volumes.write('ns', 'disk', 0, pattern(8 * B, 1), { epoch });
      world.faults.crashAt(point);
      await expect(volumes.createSnapshot('ns', 'disk', 'cut')).rejects.toThrow('crash injected');
      await expect(volumes.readSnapshotRange('ns', 'disk', 'cut', () => ({ offset: 0, length: B }))).rejects.toMatchObject({
        code: 'volume.snapshotUnfinished',
      });
      expect(await volumes.listSnapshots('ns', 'disk')).toMatchObject([{ name: 'cut', state: 'creating' }]);
      // A write raises any fence it needs itself, and copies first.
      await volumes.write('ns', 'disk', 100, pattern(3 * B, 2), { epoch });
      expect(await volumes.createSnapshot('ns', 'disk', 'cut')).toMatchObject({ name: 'cut', state: 'ready' });
      expectBytes(await readAll(volumes, 8 * B, 'cut'), pattern(8 * B, 1));
    },
  );

  it('keeps every snapshot equal to the model at its instant through any writes, trims, snapshots and deletions', async () => {
    const size = 12 * B;
    await fc.assert(
      fc.asyncProperty(fc.array(volumeStep(size, 3 * B), { minLength: 1, maxLength: 14 }), async (steps) => {
        const { volumes } = setup({ ...small, snapshotsMax: 8 });
        const { epoch } = await createAttached(volumes, 'disk', size);
        const model = new ModelDisk(size);
        const views = await applyVolumeSteps(volumes, 'disk', epoch, steps, model.bytes, 8);
        for (const [name, view] of views) expectBytes(await readAll(volumes, size, name), view);
        expectBytes(await readAll(volumes, size), model.bytes);
        if (views.size === 0) expect((await volumes.describe('ns', 'disk')).snapshotBytes).toBe(0);
      }),
      { numRuns: 40 },
    );
  });
});
