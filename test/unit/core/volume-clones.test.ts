// Volume clones in the core (docs/volumes.md, "Clones"): a volume made from a snapshot reads as the snapshot until it
// writes, copy-on-write, through chains of clones of clones; its writes never reach its origin nor the origin's its
// own; a snapshot (or its volume) cannot be deleted while a clone reads it; a creation cut short, or raced by the
// snapshot's deletion, never leaves a clone reading what is gone.
import fc from 'fast-check';
import { isRingstoreError } from '../../../lambdas/core/errors';
import type { KvService } from '../../../lambdas/core/kv';
import { InProcessTxnRunner } from '../../../lambdas/core/txn-runner';
import { volumeNamespaceOf, volumeRecordKey } from '../../../lambdas/core/volume-layout';
import { VolumeService } from '../../../lambdas/core/volumes';
import { CountingIds } from '../../support/memory-ports';
import { B, applyVolumeSteps, createAttached, expectBytes, pattern, setup, small, volumeStep } from '../../support/volume-world';

const codeOf = (error: unknown) => (isRingstoreError(error) ? error.code : error);

type VolumeKv = Pick<KvService, 'get' | 'put' | 'delete' | 'list'>;

/** Another service instance on the world, through `kv` (its ids apart from the world's own instance's). */
function instanceOn(world: ReturnType<typeof setup>, kv: VolumeKv): VolumeService {
  const txns = new InProcessTxnRunner(world.txns);
  return new VolumeService({ kv, txns, ids: new CountingIds(1_000), clock: world.clock, limits: small });
}

/** The world's kv, with its puts passed through `put`. */
function kvWithPut(world: ReturnType<typeof setup>, put: VolumeKv['put']): VolumeKv {
  const { kv } = world;
  return { get: (...args) => kv.get(...args), delete: (...args) => kv.delete(...args), list: (...args) => kv.list(...args), put };
}

/** Deletes a volume, again while it answers `deleting` (a request removes a few blocks). */
async function deleteWhole(volumes: VolumeService, name: string): Promise<void> {
  while ((await volumes.delete('ns', name)).status === 'deleting');
}

async function readAll(volumes: VolumeService, name: string, size: number, snapshot?: string): Promise<Uint8Array> {
  const ranged = () => ({ offset: 0, length: size });
  return snapshot
    ? (await volumes.readSnapshotRange('ns', name, snapshot, ranged)).bytes
    : (await volumes.readRange('ns', name, ranged)).bytes;
}

/** A fresh volume of `size` bytes with `data` written at 0, and a snapshot `s` of it. */
async function originWithSnapshot(volumes: VolumeService, size: number, data: Uint8Array) {
  const { epoch } = await createAttached(volumes, 'origin', size);
  await volumes.write('ns', 'origin', 0, data, { epoch });
  await volumes.createSnapshot('ns', 'origin', 's');
  return epoch;
}

describe('volume clones', () => {
  it('reads as its snapshot until written; its writes and its origin’s never reach each other', async () => {
    const { volumes } = setup();
    const size = 12 * B;
    const data = pattern(10 * B, 1);
    const originEpoch = await originWithSnapshot(volumes, size, data);
    // Larger than the snapshot: the bytes past it read as zeros.
    const clone = await volumes.create('ns', { name: 'clone', sizeBytes: 16 * B, from: { volume: 'origin', snapshot: 's' } });
    expect(clone).toMatchObject({ state: 'active', sizeBytes: 16 * B, origin: { volume: 'origin', snapshot: 's', sizeBytes: size } });
    const expected = new Uint8Array(16 * B);
    expected.set(data);
    expectBytes(await readAll(volumes, 'clone', 16 * B), expected);
    expect((await volumes.describe('ns', 'clone')).allocatedBytes).toBe(0);

    const { epoch } = await volumes.attach('ns', 'clone', { holder: 'test' });
    // An unaligned write into inherited blocks merges with the origin's bytes; a trim hides them.
    const written = pattern(B + 50, 7);
    await volumes.write('ns', 'clone', 2 * B + 30, written, { epoch });
    expected.set(written, 2 * B + 30);
    await volumes.trim('ns', 'clone', 6 * B, 2 * B, { epoch });
    expected.fill(0, 6 * B, 8 * B);
    await volumes.trim('ns', 'clone', 9 * B + 5, 10, { epoch });
    expected.fill(0, 9 * B + 5, 9 * B + 15);
    // The origin moves on; the clone does not see it.
    await volumes.write('ns', 'origin', 0, pattern(size, 9), { epoch: originEpoch });
    expectBytes(await readAll(volumes, 'clone', 16 * B), expected);
    expectBytes(await readAll(volumes, 'origin', size), pattern(size, 9));
    expectBytes(await readAll(volumes, 'origin', size, 's'), Uint8Array.from([...data, ...new Uint8Array(2 * B)]));
    expect((await volumes.listSnapshots('ns', 'origin'))[0]).toMatchObject({ clones: [{ volume: 'clone' }] });
  });

  it('a trim of an inherited block stays a trim when the clone’s snapshot that kept its copy is deleted', async () => {
    const { volumes } = setup();
    await originWithSnapshot(volumes, 4 * B, pattern(4 * B, 1));
    await volumes.create('ns', { name: 'clone', from: { volume: 'origin', snapshot: 's' } });
    const { epoch } = await volumes.attach('ns', 'clone', { holder: 'test' });
    await volumes.createSnapshot('ns', 'clone', 'kept');
    await volumes.trim('ns', 'clone', B, B, { epoch });
    expectBytes(await readAll(volumes, 'clone', 4 * B, 'kept'), pattern(4 * B, 1));
    await volumes.deleteSnapshot('ns', 'clone', 'kept');
    const expected = pattern(4 * B, 1);
    expected.fill(0, B, 2 * B);
    expectBytes(await readAll(volumes, 'clone', 4 * B), expected);
  });

  it('refuses to delete a snapshot or a volume its live clones read; a deleted clone frees them', async () => {
    const { volumes } = setup();
    await originWithSnapshot(volumes, 8 * B, pattern(8 * B, 1));
    await volumes.create('ns', { name: 'c1', from: { volume: 'origin', snapshot: 's' } });
    await volumes.create('ns', { name: 'c2', from: { volume: 'origin', snapshot: 's' } });
    for (const attempt of [() => volumes.deleteSnapshot('ns', 'origin', 's'), () => volumes.delete('ns', 'origin')]) {
      const refused = await attempt().catch((error: unknown) => error);
      expect(codeOf(refused)).toBe('volume.hasClones');
      expect((refused as { details: unknown }).details).toEqual({ clones: ['c1', 'c2'] });
    }
    expect((await volumes.describe('ns', 'origin')).state).toBe('active');
    expectBytes(await readAll(volumes, 'c1', 8 * B), pattern(8 * B, 1));
    await deleteWhole(volumes, 'c1');
    await deleteWhole(volumes, 'c2');
    expect((await volumes.listSnapshots('ns', 'origin'))[0]!.clones).toBeUndefined();
    await volumes.deleteSnapshot('ns', 'origin', 's');
    await deleteWhole(volumes, 'origin');
    expect(codeOf(await volumes.describe('ns', 'origin').catch((error: unknown) => error))).toBe('volume.notFound');
  });

  it('forgets a listed clone whose record is gone (a deletion cut short before it unlisted itself)', async () => {
    const world = setup();
    const { volumes, kv } = world;
    await originWithSnapshot(volumes, 4 * B, pattern(4 * B, 1));
    await volumes.create('ns', { name: 'clone', from: { volume: 'origin', snapshot: 's' } });
    // The clone's record removed, as its deletion's last step does, and nothing after it.
    await kv.delete(volumeNamespaceOf('ns'), volumeRecordKey('clone'), { consistency: 'strong' });
    // A new volume of the same name is not the clone the snapshot listed.
    await volumes.create('ns', { name: 'clone', sizeBytes: 4 * B });
    await expect(volumes.deleteSnapshot('ns', 'origin', 's')).resolves.toMatchObject({ name: 's' });
  });

  it('refuses a clone smaller than its snapshot, of an unknown snapshot, or a volume without a size, changing nothing', async () => {
    const { volumes } = setup();
    await originWithSnapshot(volumes, 8 * B, pattern(8 * B, 1));
    const attempts: [Parameters<VolumeService['create']>[1], string][] = [
      [{ name: 'small', sizeBytes: 4 * B, from: { volume: 'origin', snapshot: 's' } }, 'volume.sizeInvalid'],
      [{ name: 'odd', sizeBytes: 8 * B + 1, from: { volume: 'origin', snapshot: 's' } }, 'volume.sizeInvalid'],
      [{ name: 'none', from: { volume: 'origin', snapshot: 'nope' } }, 'volume.snapshotNotFound'],
      [{ name: 'nothing', from: { volume: 'missing', snapshot: 's' } }, 'volume.notFound'],
      [{ name: 'sizeless' }, 'volume.sizeInvalid'],
      [{ name: 'origin', from: { volume: 'origin', snapshot: 's' } }, 'volume.exists'],
    ];
    for (const [input, code] of attempts) {
      expect(codeOf(await volumes.create('ns', input).catch((error: unknown) => error))).toBe(code);
    }
    expect((await volumes.list('ns', { limit: 10 })).volumes.map((volume) => volume.name)).toEqual(['origin']);
    expect((await volumes.listSnapshots('ns', 'origin'))[0]!.clones).toBeUndefined();
  });

  it('a creation cut short after its record serves nothing; the same request finishes it, or a DELETE removes it', async () => {
    const world = setup();
    await originWithSnapshot(world.volumes, 4 * B, pattern(4 * B, 3));
    // The origin's record cannot be written once: the clone's record is made, the listing is not.
    let failures = 1;
    const cut = instanceOn(
      world,
      kvWithPut(world, (namespace, key, input) => {
        if (key === volumeRecordKey('origin') && failures > 0) {
          failures -= 1;
          return Promise.reject(new Error('the Lambda died'));
        }
        return world.kv.put(namespace, key, input);
      }),
    );
    const from = { volume: 'origin', snapshot: 's' };
    await expect(cut.create('ns', { name: 'clone', from })).rejects.toThrow('the Lambda died');
    expect(codeOf(await readAll(world.volumes, 'clone', 4 * B).catch((error: unknown) => error))).toBe('volume.creating');
    expect(codeOf(await world.volumes.describe('ns', 'clone').catch((error: unknown) => error))).toBe('volume.creating');
    await expect(cut.create('ns', { name: 'clone', from })).resolves.toMatchObject({ state: 'active' });
    expectBytes(await readAll(world.volumes, 'clone', 4 * B), pattern(4 * B, 3));

    // Cut short again, and then deleted: the snapshot is free.
    failures = 1;
    await expect(cut.create('ns', { name: 'other', from })).rejects.toThrow('the Lambda died');
    await deleteWhole(world.volumes, 'other');
    await deleteWhole(world.volumes, 'clone');
    await expect(world.volumes.deleteSnapshot('ns', 'origin', 's')).resolves.toMatchObject({ name: 's' });
  });

  it('a clone whose snapshot was deleted between its record and its listing is refused and removed', async () => {
    const world = setup();
    await originWithSnapshot(world.volumes, 4 * B, pattern(4 * B, 3));
    const racing = instanceOn(
      world,
      kvWithPut(world, async (namespace, key, input) => {
        const ack = await world.kv.put(namespace, key, input);
        // The clone's record is made: another instance deletes the snapshot before the listing.
        if (key === volumeRecordKey('clone')) await world.volumes.deleteSnapshot('ns', 'origin', 's');
        return ack;
      }),
    );
    const refused = await racing
      .create('ns', { name: 'clone', from: { volume: 'origin', snapshot: 's' } })
      .catch((error: unknown) => error);
    expect(codeOf(refused)).toBe('volume.snapshotNotFound');
    expect(codeOf(await world.volumes.describe('ns', 'clone').catch((error: unknown) => error))).toBe('volume.notFound');
  });

  it('shrinks below its inherited bytes only once they are trimmed; grown again, it reads zeros there', async () => {
    const { volumes } = setup();
    await originWithSnapshot(volumes, 8 * B, pattern(8 * B, 1));
    await volumes.create('ns', { name: 'clone', from: { volume: 'origin', snapshot: 's' } });
    const refused = await volumes.resize('ns', 'clone', 4 * B).catch((error: unknown) => error);
    expect(codeOf(refused)).toBe('volume.shrinkBelowData');
    expect((refused as { details: unknown }).details).toMatchObject({ dataAtByte: 4 * B });
    const { epoch } = await volumes.attach('ns', 'clone', { holder: 'test' });
    await volumes.trim('ns', 'clone', 4 * B, 4 * B, { epoch });
    await volumes.detach('ns', 'clone', epoch);
    expect(await volumes.resize('ns', 'clone', 4 * B)).toMatchObject({ sizeBytes: 4 * B, origin: { sizeBytes: 4 * B } });
    await volumes.resize('ns', 'clone', 8 * B);
    const expected = new Uint8Array(8 * B);
    expected.set(pattern(8 * B, 1).subarray(0, 4 * B));
    expectBytes(await readAll(volumes, 'clone', 8 * B), expected);
  });

  it('keeps a clone of a whole written volume and its snapshots equal to the model through any writes, trims, snapshots and deletions', async () => {
    // Every block inherited and holding bytes: each change of the clone meets its origin's bytes.
    const size = 8 * B;
    await fc.assert(
      fc.asyncProperty(fc.array(volumeStep(size, 2 * B), { minLength: 1, maxLength: 12 }), async (steps) => {
        const { volumes } = setup({ ...small, snapshotsMax: 4 });
        await originWithSnapshot(volumes, size, pattern(size, 1));
        await volumes.create('ns', { name: 'clone', from: { volume: 'origin', snapshot: 's' } });
        const { epoch } = await volumes.attach('ns', 'clone', { holder: 'test' });
        const model = pattern(size, 1);
        const views = await applyVolumeSteps(volumes, 'clone', epoch, steps, model, 4);
        for (const [name, view] of views) expectBytes(await readAll(volumes, 'clone', size, name), view);
        expectBytes(await readAll(volumes, 'clone', size), model);
      }),
      { numRuns: Number(process.env.CLONE_RUNS ?? 150) },
    );
  });

  it('keeps every volume and snapshot equal to its model through writes, trims, snapshots, clones of clones and deletions', async () => {
    const size = 8 * B;
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('write' as const),
        pick: fc.nat(10),
        offset: fc.nat(size - 1),
        length: fc.integer({ min: 1, max: 2 * B }),
        seed: fc.nat(250),
      }),
      fc.record({
        kind: fc.constant('trim' as const),
        pick: fc.nat(10),
        offset: fc.nat(size - 1),
        length: fc.integer({ min: 1, max: 2 * B }),
      }),
      fc.record({ kind: fc.constant('snapshot' as const), pick: fc.nat(10) }),
      fc.record({ kind: fc.constant('clone' as const), pick: fc.nat(20), grow: fc.boolean() }),
      fc.record({ kind: fc.constant('deleteSnapshot' as const), pick: fc.nat(20) }),
      fc.record({ kind: fc.constant('deleteVolume' as const), pick: fc.nat(10) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 16 }), async (ops) => {
        const { volumes } = setup({ ...small, snapshotsMax: 4 });
        // Each volume's model bytes and epoch; each snapshot's model bytes and its clones.
        const disks = new Map<string, { bytes: Uint8Array; epoch: number }>();
        const snapshots = new Map<string, { volume: string; name: string; bytes: Uint8Array; clones: Set<string> }>();
        const originOf = new Map<string, string>();
        const { epoch } = await createAttached(volumes, 'v0', size);
        disks.set('v0', { bytes: new Uint8Array(size), epoch });
        let next = 0;
        const pick = <T>(items: T[], at: number) => (items.length > 0 ? items[at % items.length] : undefined);
        for (const each of ops) {
          if (each.kind === 'write' || each.kind === 'trim') {
            const name = pick([...disks.keys()], each.pick)!;
            const disk = disks.get(name)!;
            const length = Math.min(each.length, disk.bytes.byteLength - each.offset);
            if (length <= 0) continue;
            if (each.kind === 'write') {
              const data = pattern(length, each.seed);
              await volumes.write('ns', name, each.offset, data, { epoch: disk.epoch });
              disk.bytes.set(data, each.offset);
            } else {
              await volumes.trim('ns', name, each.offset, length, { epoch: disk.epoch });
              disk.bytes.fill(0, each.offset, each.offset + length);
            }
          } else if (each.kind === 'snapshot') {
            const volume = pick([...disks.keys()], each.pick)!;
            if ([...snapshots.values()].filter((snapshot) => snapshot.volume === volume).length >= 4) continue;
            const name = `s${(next += 1)}`;
            await volumes.createSnapshot('ns', volume, name);
            snapshots.set(`${volume}@${name}`, { volume, name, bytes: Uint8Array.from(disks.get(volume)!.bytes), clones: new Set() });
          } else if (each.kind === 'clone') {
            const snapshot = pick([...snapshots.values()], each.pick);
            if (!snapshot) continue;
            const name = `v${(next += 1)}`;
            const sizeBytes = snapshot.bytes.byteLength + (each.grow ? 2 * B : 0);
            await volumes.create('ns', { name, sizeBytes, from: { volume: snapshot.volume, snapshot: snapshot.name } });
            const bytes = new Uint8Array(sizeBytes);
            bytes.set(snapshot.bytes);
            const { epoch: cloneEpoch } = await volumes.attach('ns', name, { holder: 'test' });
            disks.set(name, { bytes, epoch: cloneEpoch });
            snapshot.clones.add(name);
            originOf.set(name, `${snapshot.volume}@${snapshot.name}`);
          } else if (each.kind === 'deleteSnapshot') {
            const snapshot = pick([...snapshots.values()], each.pick);
            if (!snapshot) continue;
            const deleting = volumes.deleteSnapshot('ns', snapshot.volume, snapshot.name);
            if (snapshot.clones.size > 0) {
              expect(codeOf(await deleting.catch((error: unknown) => error))).toBe('volume.hasClones');
              continue;
            }
            await deleting;
            snapshots.delete(`${snapshot.volume}@${snapshot.name}`);
          } else {
            const name = pick([...disks.keys()], each.pick)!;
            const cloned = [...snapshots.values()].some((snapshot) => snapshot.volume === name && snapshot.clones.size > 0);
            if (cloned) {
              expect(codeOf(await volumes.delete('ns', name).catch((error: unknown) => error))).toBe('volume.hasClones');
              continue;
            }
            await deleteWhole(volumes, name);
            disks.delete(name);
            for (const [key, snapshot] of snapshots) if (snapshot.volume === name) snapshots.delete(key);
            const origin = originOf.get(name);
            if (origin) snapshots.get(origin)?.clones.delete(name);
            if (disks.size === 0) break;
          }
        }
        for (const [name, disk] of disks) expectBytes(await readAll(volumes, name, disk.bytes.byteLength), disk.bytes);
        for (const snapshot of snapshots.values()) {
          expectBytes(await readAll(volumes, snapshot.volume, snapshot.bytes.byteLength, snapshot.name), snapshot.bytes);
        }
      }),
      { numRuns: Number(process.env.CLONE_RUNS ?? 40) },
    );
  });
});
