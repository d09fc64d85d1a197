// Block volumes in the core: records, reads and writes at any offset as one transaction over their blocks,
// trims, deletes that resume, and all-or-nothing across shards through crashes.
import fc from 'fast-check';
import { isRingstoreError } from '../../../lambdas/core/errors';
import { tokenOf } from '../../../lambdas/core/ring';
import { blockKey, blockSpans, volumeNamespaceOf } from '../../../lambdas/core/volume-layout';
import { volumeLimits } from '../../../schemas/topology';
import { transactionCrashPoints } from '../../../lambdas/ports';
import {
  B,
  boundaryAcrossShards,
  createAttached,
  expectBytes,
  pausingRunner,
  pathOf,
  pattern,
  secondInstance,
  setup,
  small,
} from '../../support/volume-world';

describe('block volume layout', () => {
  it('splits a byte range into the blocks it covers, with the bytes of each', () => {
    expect(blockSpans(4090, 12, small)).toEqual([
      { block: 0, start: 4090, end: 4096, at: 0 },
      { block: 1, start: 0, end: 6, at: 6 },
    ]);
    expect(blockSpans(8192, 4096, small)).toEqual([{ block: 2, start: 0, end: 4096, at: 0 }]);
    expect(blockSpans(0, volumeLimits.ioBytesMax, volumeLimits)).toHaveLength(64);
    expect(blockSpans(1, volumeLimits.ioBytesMax, volumeLimits)).toHaveLength(65);
  });

  it("places a group's blocks on one token and consecutive groups apart; user keys keep their own tokens", () => {
    const keyspace = volumeNamespaceOf('ns');
    const tokens = [0, 1, 2, 3].map((block) => tokenOf(keyspace, blockKey('v1', block, small)));
    expect(new Set(tokens).size).toBe(1);
    expect(tokenOf(keyspace, blockKey('v1', 4, small))).not.toBe(tokens[0]);
    // A user namespace's key with a slash is placed by the whole key, as before.
    expect(tokenOf('ns', 'a/b')).not.toBe(tokenOf('ns', 'a/c'));
  });
});

describe('block volumes', () => {
  it('creates, describes and lists volumes; refuses a taken name, a bad size or name', async () => {
    const { volumes } = setup();
    const created = await volumes.create('ns', { name: 'disk', sizeBytes: 64 * B });
    expect(created).toMatchObject({ name: 'disk', sizeBytes: 64 * B, blockBytes: B, state: 'active' });
    await volumes.create('ns', { name: 'another', sizeBytes: B });
    expect(await volumes.describe('ns', 'disk')).toMatchObject({ name: 'disk', allocatedBytes: 0 });
    expect((await volumes.list('ns', { limit: 10 })).volumes.map((volume) => volume.name)).toEqual(['another', 'disk']);
    expect((await volumes.list('other', { limit: 10 })).volumes).toEqual([]);
    const refusals = await Promise.all([
      volumes.create('ns', { name: 'disk', sizeBytes: B }).catch((error: unknown) => error),
      volumes.create('ns', { name: 'odd', sizeBytes: B + 1 }).catch((error: unknown) => error),
      volumes.create('ns', { name: 'zero', sizeBytes: 0 }).catch((error: unknown) => error),
      volumes.create('ns', { name: 'huge', sizeBytes: 2 ** 45 }).catch((error: unknown) => error),
      volumes.create('ns', { name: 'a/b', sizeBytes: B }).catch((error: unknown) => error),
      volumes.describe('ns', 'missing').catch((error: unknown) => error),
    ]);
    expect(refusals.map((error) => (isRingstoreError(error) ? error.code : error))).toEqual([
      'volume.exists',
      'volume.sizeInvalid',
      'volume.sizeInvalid',
      'volume.sizeInvalid',
      'volume.nameInvalid',
      'volume.notFound',
    ]);
  });

  it('reads an unwritten range as zeros, and a write back at any offset, merged with what the blocks held', async () => {
    const { volumes } = setup();
    const { epoch } = await createAttached(volumes, 'disk', 64 * B);
    expectBytes(await volumes.read('ns', 'disk', 100, 9000), new Uint8Array(9000));
    const first = pattern(3 * B, 1);
    await volumes.write('ns', 'disk', B, first, { epoch });
    const unaligned = pattern(5000, 2);
    await volumes.write('ns', 'disk', B + 3000, unaligned, { epoch });
    const expected = new Uint8Array(6 * B);
    expected.set(first, B);
    expected.set(unaligned, B + 3000);
    expectBytes(await volumes.read('ns', 'disk', 0, 6 * B), expected);
    expectBytes(await volumes.read('ns', 'disk', B + 2999, 3), expected.subarray(B + 2999, B + 3002));
    expect((await volumes.describe('ns', 'disk')).allocatedBytes).toBe(3 * B);
  });

  it('refuses a range past the end (416) and an I/O over the maximum (413), changing nothing', async () => {
    const { volumes } = setup();
    const { epoch } = await createAttached(volumes, 'disk', 128 * B);
    const codes = await Promise.all([
      volumes.write('ns', 'disk', 128 * B - 10, pattern(11, 1), { epoch }).catch((error: unknown) => error),
      volumes.read('ns', 'disk', 128 * B, 1).catch((error: unknown) => error),
      volumes.write('ns', 'disk', 0, pattern(small.ioBytesMax + 1, 1), { epoch }).catch((error: unknown) => error),
      volumes.read('ns', 'disk', -1, 10).catch((error: unknown) => error),
    ]);
    expect(codes.map((error) => (isRingstoreError(error) ? error.code : error))).toEqual([
      'volume.rangeNotSatisfiable',
      'volume.rangeNotSatisfiable',
      'volume.ioTooLarge',
      'request.invalid',
    ]);
    expect((await volumes.describe('ns', 'disk')).allocatedBytes).toBe(0);
    // The largest write is taken whole, at an unaligned offset too (65 blocks).
    await volumes.write('ns', 'disk', 1, pattern(small.ioBytesMax, 3), { epoch });
    expectBytes(await volumes.read('ns', 'disk', 1, small.ioBytesMax), pattern(small.ioBytesMax, 3));
  });

  it('keeps blocks out of the namespace: its listing holds none of them', async () => {
    const { volumes, kv } = setup();
    const { epoch } = await createAttached(volumes, 'disk', 16 * B);
    await volumes.write('ns', 'disk', 0, pattern(4 * B, 1), { epoch });
    await kv.put('ns', 'user-key', { value: pattern(3, 1), contentType: 'text/plain' });
    expect((await kv.list('ns', { prefix: '', limit: 100 })).items.map((item) => item.key)).toEqual(['user-key']);
  });

  it('trims: whole blocks are freed, partial ones zeroed, and all read as zeros', async () => {
    const { volumes } = setup();
    const { epoch } = await createAttached(volumes, 'disk', 16 * B);
    await volumes.write('ns', 'disk', 0, pattern(4 * B, 1), { epoch });
    await volumes.trim('ns', 'disk', 100, 2 * B, { epoch });
    const expected = pattern(4 * B, 1);
    expected.fill(0, 100, 100 + 2 * B);
    expectBytes(await volumes.read('ns', 'disk', 0, 4 * B), expected);
    // Block 1 was covered whole: it holds nothing now; blocks 0 and 2 keep their other bytes.
    expect((await volumes.describe('ns', 'disk')).allocatedBytes).toBe(3 * B);
    await volumes.trim('ns', 'disk', 0, 16 * B, { epoch });
    expect((await volumes.describe('ns', 'disk')).allocatedBytes).toBe(0);
    expectBytes(await volumes.read('ns', 'disk', 0, 16 * B), new Uint8Array(16 * B));
  });

  it('writes across two placement groups on different shards as one: all or nothing through a crash', async () => {
    const world = setup();
    const { volumes, faults, txns, clock } = world;
    const { id, epoch } = await createAttached(volumes, 'disk', 400 * B);
    const boundary = boundaryAcrossShards(id);
    const offset = boundary * B - 1000;
    const before = pattern(2000, 1);
    await volumes.write('ns', 'disk', offset, before, { epoch });

    // Crashed before the decision (`after: 1`: the read of the two partial blocks reaches it first): rolled back
    // as a whole once the sweeper finds it past its deadline.
    faults.crashAt('txn.afterPrepare', { after: 1 });
    await expect(volumes.write('ns', 'disk', offset, pattern(2000, 2), { epoch })).rejects.toThrow('crash injected');
    clock.advanceSeconds(60);
    expect(await txns.sweep(0, clock.now, 100)).toMatchObject({ aborted: 1 });
    expectBytes(await volumes.read('ns', 'disk', offset, 2000), before);

    // Crashed after the decision: rolled forward as a whole, by the next reader.
    faults.crashAt('txn.afterDecide', { after: 1 });
    await expect(volumes.write('ns', 'disk', offset, pattern(2000, 3), { epoch })).rejects.toThrow('crash injected');
    expectBytes(await volumes.read('ns', 'disk', offset, 2000), pattern(2000, 3));
  });

  // The crash matrix of a write (docs/volumes.md, "Crashes"): at each transaction step, a write within one placement
  // group (one atomic write on one shard) and one across two groups on two shards (two-phase commit). The point is
  // armed for its first reach, then its second, and so on (the read of the partial head and tail blocks reaches
  // some points before the write does); after each, the sweeper runs past the transaction's deadline.
  it.each(transactionCrashPoints.flatMap((point) => (['one group', 'two shards'] as const).map((span) => [point, span] as const)))(
    '%s, a write over %s: whole or absent, never torn, and the volume takes writes after',
    async (point, span) => {
      const { volumes, faults, txns, clock } = setup();
      const { id, epoch } = await createAttached(volumes, 'disk', 400 * B);
      const [offset, length] = span === 'one group' ? [B + 100, 2 * B] : [boundaryAcrossShards(id) * B - 1000, 2000];
      let current = pattern(length, 1);
      await volumes.write('ns', 'disk', offset, current, { epoch });
      const outcomes: string[] = [];
      for (let after = 0; after < 4; after += 1) {
        const next = pattern(length, after + 2);
        faults.crashAt(point, { after });
        const outcome = await volumes.write('ns', 'disk', offset, next, { epoch }).then(
          () => 'acknowledged',
          (error: unknown) => {
            if (!(error instanceof Error) || !/crash injected/.test(error.message)) throw error;
            return 'crashed';
          },
        );
        faults.disarm();
        clock.advanceSeconds(60);
        await txns.sweep(0, clock.now, 100);
        const read = await volumes.read('ns', 'disk', offset, length);
        const whole = Buffer.from(read).equals(next) ? 'new' : Buffer.from(read).equals(current) ? 'old' : 'torn';
        outcomes.push(`${outcome} ${whole}`);
        if (whole === 'new') current = next;
      }
      // An acknowledged write reads back; a crashed one is all of it or none of it.
      expect(outcomes.filter((outcome) => outcome === 'acknowledged old' || outcome.endsWith('torn'))).toEqual([]);
      // Not vacuous: a crash happened wherever the write's path reaches the point (`pathOf`).
      const reached = outcomes.some((outcome) => outcome.startsWith('crashed'));
      expect({ point, span, outcomes, reached }).toEqual({ point, span, outcomes, reached: pathOf[span].includes(point) });
      await volumes.write('ns', 'disk', offset, pattern(length, 99), { epoch });
      expectBytes(await volumes.read('ns', 'disk', offset, length), pattern(length, 99));
    },
  );

  it('commits a write within one group in one atomic write, with no transaction record', async () => {
    const { volumes, txns, clock } = setup();
    const { epoch } = await createAttached(volumes, 'disk', 16 * B);
    await volumes.write('ns', 'disk', 10, pattern(2 * B, 1), { epoch });
    clock.advanceSeconds(60);
    expect(await txns.sweep(0, clock.now, 100)).toMatchObject({ examined: 0 });
  });

  it('loses neither of two concurrent writes to the two halves of one block', async () => {
    const { volumes } = setup();
    const { epoch } = await createAttached(volumes, 'disk', 4 * B);
    await Promise.all([
      volumes.write('ns', 'disk', 0, pattern(B / 2, 1), { epoch }),
      volumes.write('ns', 'disk', B / 2, pattern(B / 2, 2), { epoch }),
    ]);
    const expected = new Uint8Array(B);
    expected.set(pattern(B / 2, 1), 0);
    expected.set(pattern(B / 2, 2), B / 2);
    expectBytes(await volumes.read('ns', 'disk', 0, B), expected);
  });

  it('deletes a volume a page of blocks at a time, serving nothing meanwhile; its name then starts empty', async () => {
    const { volumes } = setup();
    const { epoch } = await createAttached(volumes, 'disk', 16 * B);
    await volumes.write('ns', 'disk', 0, pattern(8 * B, 1), { epoch });
    // 8 blocks and 4 placement groups' fences, 5 keys a request.
    expect(await volumes.delete('ns', 'disk')).toMatchObject({ name: 'disk', status: 'deleting' });
    await expect(volumes.read('ns', 'disk', 0, 1)).rejects.toMatchObject({ code: 'volume.deleting' });
    await expect(volumes.write('ns', 'disk', 0, pattern(1, 1), { epoch })).rejects.toMatchObject({ code: 'volume.deleting' });
    expect((await volumes.list('ns', { limit: 10 })).volumes).toMatchObject([{ name: 'disk', state: 'deleting' }]);
    const rest = [await volumes.delete('ns', 'disk'), await volumes.delete('ns', 'disk')];
    expect(rest.map((deletion) => deletion.status)).toEqual(['deleting', 'deleted']);
    await expect(volumes.describe('ns', 'disk')).rejects.toMatchObject({ code: 'volume.notFound' });
    await expect(volumes.delete('ns', 'disk')).rejects.toMatchObject({ code: 'volume.notFound' });
    await volumes.create('ns', { name: 'disk', sizeBytes: 16 * B });
    expectBytes(await volumes.read('ns', 'disk', 0, 8 * B), new Uint8Array(8 * B));
  });

  it('starts a volume made again under a deleted one’s name past its epochs: the old writer lands nothing in it', async () => {
    const { volumes } = setup();
    const old = await createAttached(volumes, 'disk', 8 * B);
    await volumes.write('ns', 'disk', 0, pattern(B, 1), { epoch: old.epoch });
    while ((await volumes.delete('ns', 'disk')).status === 'deleting');
    // Made again, never attached: where the deleted one left off, not 0.
    expect((await volumes.create('ns', { name: 'disk', sizeBytes: 8 * B })).epoch).toBeGreaterThan(old.epoch);
    const { epoch } = await volumes.attach('ns', 'disk', { holder: 'new' });
    expect(epoch).toBeGreaterThan(old.epoch + 1);
    await expect(volumes.write('ns', 'disk', 0, pattern(B, 2), { epoch: old.epoch })).rejects.toMatchObject({ code: 'volume.fenced' });
    await volumes.write('ns', 'disk', B, pattern(B, 3), { epoch });
    const expected = new Uint8Array(2 * B);
    expected.set(pattern(B, 3), B);
    expectBytes(await volumes.read('ns', 'disk', 0, 2 * B), expected);
    // The name's epochs are not a volume: not listed.
    expect((await volumes.list('ns', { limit: 10 })).volumes.map((volume) => volume.name)).toEqual(['disk']);
  });

  it('reads back what a model disk holds after any sequence of writes and trims', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            trim: fc.boolean(),
            offset: fc.integer({ min: 0, max: 24 * B - 1 }),
            length: fc.integer({ min: 0, max: 3 * B }),
            seed: fc.integer({ min: 1, max: 200 }),
          }),
          { maxLength: 8 },
        ),
        async (steps) => {
          const { volumes } = setup();
          const { epoch } = await createAttached(volumes, 'disk', 24 * B);
          const model = new Uint8Array(24 * B);
          for (const step of steps) {
            const length = Math.min(step.length, 24 * B - step.offset);
            if (step.trim) {
              await volumes.trim('ns', 'disk', step.offset, length, { epoch });
              model.fill(0, step.offset, step.offset + length);
            } else {
              const bytes = pattern(length, step.seed);
              await volumes.write('ns', 'disk', step.offset, bytes, { epoch });
              model.set(bytes, step.offset);
            }
          }
          for (let offset = 0; offset < model.length; offset += 8 * B) {
            expectBytes(await volumes.read('ns', 'disk', offset, 8 * B), model.subarray(offset, offset + 8 * B));
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('one writer at a time', () => {
  /** A second handler instance over the same world: its own caches, the same tables. */
  it("refuses another holder while a lease is live, naming it; renews the holder's own; takes over after expiry", async () => {
    const world = setup();
    const { volumes, clock } = world;
    await volumes.create('ns', { name: 'disk', sizeBytes: 16 * B });
    const first = await volumes.attach('ns', 'disk', { holder: 'host-a', leaseSeconds: 30 });
    expect(first).toMatchObject({ holder: 'host-a', epoch: 1 });
    await expect(volumes.attach('ns', 'disk', { holder: 'host-b' })).rejects.toMatchObject({
      code: 'volume.leaseHeld',
      details: { holder: 'host-a' },
    });
    clock.advanceSeconds(20);
    expect(await volumes.attach('ns', 'disk', { holder: 'host-a', leaseSeconds: 30 })).toMatchObject({ epoch: 1 });
    clock.advanceSeconds(20);
    await expect(volumes.attach('ns', 'disk', { holder: 'host-b' })).rejects.toMatchObject({ code: 'volume.leaseHeld' });
    clock.advanceSeconds(11);
    expect(await volumes.attach('ns', 'disk', { holder: 'host-b' })).toMatchObject({ holder: 'host-b', epoch: 2 });
    expect(await volumes.describe('ns', 'disk')).toMatchObject({ epoch: 2, lease: { holder: 'host-b', epoch: 2 } });
    await expect(volumes.attach('ns', 'disk', { holder: 'host-c', leaseSeconds: 301 })).rejects.toMatchObject({ code: 'request.invalid' });
  });

  it('refuses every write of a writer taken over, and lets a detached volume be attached at once', async () => {
    const world = setup();
    const { volumes, clock } = world;
    const { epoch } = await createAttached(volumes, 'disk', 16 * B);
    await volumes.write('ns', 'disk', 0, pattern(B, 1), { epoch });
    clock.advanceSeconds(60);
    const other = secondInstance(world);
    const taken = await other.attach('ns', 'disk', { holder: 'host-b' });
    for (const attempt of [
      volumes.write('ns', 'disk', 0, pattern(B, 2), { epoch }),
      volumes.write('ns', 'disk', 9 * B, pattern(10, 2), { epoch }),
      volumes.trim('ns', 'disk', 0, B, { epoch }),
      volumes.detach('ns', 'disk', epoch),
    ]) {
      await expect(attempt).rejects.toMatchObject({ code: 'volume.fenced', details: { epoch, currentEpoch: taken.epoch } });
    }
    expectBytes(await volumes.read('ns', 'disk', 0, B), pattern(B, 1));
    await other.detach('ns', 'disk', taken.epoch);
    expect(await volumes.attach('ns', 'disk', { holder: 'host-a' })).toMatchObject({ epoch: taken.epoch + 1 });
  });

  it('a writer paused between its checks and its transaction cannot land a block once another has attached', async () => {
    const world = setup();
    const { clock } = world;
    // Writer A's next transaction with a put waits for the takeover before it runs.
    const { runner: pausing, pauseNext } = pausingRunner(world);
    const writerA = secondInstance(world, pausing);
    const { epoch, id } = await createAttached(writerA, 'disk', 400 * B);
    // Warm A's fences (it knows their versions), across a group boundary on two shards.
    const boundary = boundaryAcrossShards(id);
    await writerA.write('ns', 'disk', boundary * B - 100, pattern(200, 1), { epoch });
    await writerA.write('ns', 'disk', 0, pattern(B, 1), { epoch });
    const writerB = secondInstance(world);
    pauseNext(async () => {
      clock.advanceSeconds(60);
      await writerB.attach('ns', 'disk', { holder: 'host-b' });
    });
    await expect(writerA.write('ns', 'disk', 0, pattern(B, 2), { epoch })).rejects.toMatchObject({ code: 'volume.fenced' });
    expectBytes(await writerB.read('ns', 'disk', 0, B), pattern(B, 1));
    // The same across two shards (two-phase commit): the fence checks are validated before the decision.
    clock.advanceSeconds(60);
    const again = await writerA.attach('ns', 'disk', { holder: 'host-a' });
    await writerA.write('ns', 'disk', boundary * B - 100, pattern(200, 3), { epoch: again.epoch });
    pauseNext(async () => {
      clock.advanceSeconds(60);
      await writerB.attach('ns', 'disk', { holder: 'host-b' });
    });
    await expect(writerA.write('ns', 'disk', boundary * B - 100, pattern(200, 4), { epoch: again.epoch })).rejects.toMatchObject({
      code: 'volume.fenced',
    });
    expectBytes(await writerB.read('ns', 'disk', boundary * B - 100, 200), pattern(200, 3));
  });
});

describe('resizing', () => {
  it('grows a volume under its attached writer, which writes the new bytes at once (read as zeros until then)', async () => {
    const { volumes } = setup();
    const { epoch } = await createAttached(volumes, 'disk', 6 * B);
    await volumes.write('ns', 'disk', 0, pattern(6 * B, 1), { epoch });
    expect(await volumes.resize('ns', 'disk', 13 * B)).toMatchObject({ sizeBytes: 13 * B, epoch, lease: { epoch } });
    expectBytes(await volumes.read('ns', 'disk', 6 * B, 7 * B), new Uint8Array(7 * B));
    // Groups 2 and 3 are new (4 blocks a group here): their fences hold the writer's epoch.
    await volumes.write('ns', 'disk', 12 * B, pattern(B, 2), { epoch });
    expectBytes(await volumes.read('ns', 'disk', 0, 6 * B), pattern(6 * B, 1));
    expectBytes(await volumes.read('ns', 'disk', 12 * B, B), pattern(B, 2));
  });

  it('shrinks only a detached volume, never past written blocks, and fences the writer whose lease ran out', async () => {
    const { volumes, clock } = setup();
    const { epoch } = await createAttached(volumes, 'disk', 16 * B);
    await volumes.write('ns', 'disk', 9 * B + 5, pattern(10, 1), { epoch });
    await expect(volumes.resize('ns', 'disk', 8 * B)).rejects.toMatchObject({ code: 'volume.leaseHeld' });
    clock.advanceSeconds(60);
    await expect(volumes.resize('ns', 'disk', 8 * B)).rejects.toMatchObject({
      code: 'volume.shrinkBelowData',
      details: { dataAtByte: 9 * B },
    });
    // The attempt moved the epoch on: the writer whose lease ran out is fenced.
    await expect(volumes.write('ns', 'disk', 0, pattern(1, 1), { epoch })).rejects.toMatchObject({ code: 'volume.fenced' });
    const again = await volumes.attach('ns', 'disk', { holder: 'test' });
    await volumes.trim('ns', 'disk', 8 * B, 8 * B, { epoch: again.epoch });
    await volumes.detach('ns', 'disk', again.epoch);
    expect(await volumes.resize('ns', 'disk', 8 * B)).toMatchObject({ sizeBytes: 8 * B });
    await expect(volumes.read('ns', 'disk', 8 * B, 1)).rejects.toMatchObject({ code: 'volume.rangeNotSatisfiable' });
    // Grown back, the cut-off bytes read as zeros.
    await volumes.resize('ns', 'disk', 16 * B);
    expectBytes(await volumes.read('ns', 'disk', 8 * B, 8 * B), new Uint8Array(8 * B));
    await expect(volumes.resize('ns', 'disk', 5)).rejects.toMatchObject({ code: 'volume.sizeInvalid' });
  });
});
