// A block volume service on the in-memory ports, and what its unit tests share: small placement groups (4 blocks)
// so that writes cross groups and shards at offsets a test reaches, byte comparisons that name the first difference.
import fc from 'fast-check';
import { Ring, initialRingState, tokenOf } from '../../lambdas/core/ring';
import { InProcessTxnRunner, type TxnRunner } from '../../lambdas/core/txn-runner';
import { blockKey, volumeNamespaceOf } from '../../lambdas/core/volume-layout';
import { type VolumeLimits, VolumeService, volumeTxnLimits } from '../../lambdas/core/volumes';
import { volumeLimits } from '../../schemas/topology';
import { transactionCrashPoints } from '../../lambdas/ports';
import { memoryTxnWorld, testTxnLimits, CountingIds } from './memory-ports';

export const ring = new Ring(
  initialRingState({ shardCount: 4, replicationFactor: 3, vnodesPerShard: 16, tableName: (id) => `shard-${id}` }),
);
/** Small groups (4 blocks) so that writes cross groups, and so shards, at offsets a test can reach. */
export const small: VolumeLimits = { ...volumeLimits, groupBlocks: 4, deleteBlocksPerRequest: 5 };
export const B = small.blockBytes;

export function setup(volumeLimitsUsed: VolumeLimits = small) {
  const world = memoryTxnWorld(ring, volumeTxnLimits(testTxnLimits, volumeLimitsUsed));
  const { txns, kv, clock, faults } = world;
  const volumes = new VolumeService({
    kv,
    txns: new InProcessTxnRunner(txns),
    ids: new CountingIds(),
    clock,
    limits: volumeLimitsUsed,
    faults,
  });
  return { ...world, volumes };
}

/** Byte arrays compared whole (jest's deep equality takes seconds on a quarter mebibyte); a mismatch names its first byte. */
export function expectBytes(actual: Uint8Array, expected: Uint8Array): void {
  const same = Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength).equals(expected);
  if (same) return;
  const first = actual.findIndex((byte, index) => byte !== expected[index]);
  expect({ length: actual.byteLength, firstDifference: first }).toEqual({ length: expected.byteLength, firstDifference: -1 });
}

/** A volume created and attached for writing: its record and the epoch its writes carry. */
export async function createAttached(volumes: VolumeService, name: string, sizeBytes: number) {
  const record = await volumes.create('ns', { name, sizeBytes });
  const { epoch } = await volumes.attach('ns', name, { holder: 'test' });
  return { ...record, epoch };
}

/**
 * The transaction steps each write reaches: within one placement group, its one atomic write; across two shards, the
 * coordinator's and the participants' (two-phase commit).
 */
export const pathOf: Record<'one group' | 'two shards', readonly string[]> = {
  'one group': ['txn.afterAtomicCommit'],
  'two shards': transactionCrashPoints.filter((point) => point !== 'txn.afterAtomicCommit'),
};

export const pattern = (length: number, seed: number) => Uint8Array.from({ length }, (_, index) => (index * 31 + seed) % 251 || 1);

/** The owner table of a volume block (volume id from its record). */
export function ownerOfBlock(id: string, block: number): string {
  return ring.ownerOf(tokenOf(volumeNamespaceOf('ns'), blockKey(id, block, small))).table;
}

/** The first group boundary (in blocks) whose two sides live on different shards. */
export function boundaryAcrossShards(id: string): number {
  for (let group = 1; group < 200; group += 1) {
    const block = group * small.groupBlocks;
    if (ownerOfBlock(id, block - 1) !== ownerOfBlock(id, block)) return block;
  }
  throw new Error('no group boundary across shards');
}

/** Another service instance (another Lambda) on the same world, with its own transaction runner if given. */
export function secondInstance(
  world: ReturnType<typeof setup>,
  txns: TxnRunner = new InProcessTxnRunner(world.txns),
  limits: VolumeLimits = small,
) {
  return new VolumeService({ kv: world.kv, txns, ids: new CountingIds(), clock: world.clock, limits });
}

/**
 * A transaction runner whose next transaction with a put first awaits what `pauseNext` was given (once): a writer
 * paused between its checks and its transaction, while another instance acts.
 */
export function pausingRunner(world: ReturnType<typeof setup>): { runner: TxnRunner; pauseNext(action: () => Promise<void>): void } {
  const inner = new InProcessTxnRunner(world.txns);
  let pause: (() => Promise<void>) | undefined;
  const runner: TxnRunner = {
    run: async (namespace, ops, options) => {
      const paused = ops.some((op) => op.op === 'put') ? pause : undefined;
      if (paused) {
        pause = undefined;
        await paused();
      }
      return inner.run(namespace, ops, options);
    },
  };
  return { runner, pauseNext: (action) => (pause = action) };
}

/** A random step on one volume of `size` bytes: a write or trim of up to `maxLength` bytes, a snapshot, a deletion of one. */
export function volumeStep(size: number, maxLength: number) {
  return fc.oneof(
    fc.record({
      kind: fc.constant('write' as const),
      offset: fc.nat(size - 1),
      length: fc.integer({ min: 1, max: maxLength }),
      seed: fc.nat(250),
    }),
    fc.record({ kind: fc.constant('trim' as const), offset: fc.nat(size - 1), length: fc.integer({ min: 1, max: maxLength }) }),
    fc.record({ kind: fc.constant('snapshot' as const) }),
    fc.record({ kind: fc.constant('deleteSnapshot' as const), pick: fc.nat(10) }),
  );
}

export type VolumeStep = ReturnType<typeof volumeStep> extends fc.Arbitrary<infer T> ? T : never;

/**
 * Applies `steps` to volume `name` (written with `epoch`) and to `model`, its bytes: the snapshots still kept, each with
 * its model bytes at its instant (at most `snapshotsMax` at once; a snapshot step past it does nothing).
 */
export async function applyVolumeSteps(
  volumes: VolumeService,
  name: string,
  epoch: number,
  steps: readonly VolumeStep[],
  model: Uint8Array,
  snapshotsMax: number,
): Promise<Map<string, Uint8Array>> {
  const views = new Map<string, Uint8Array>();
  let next = 0;
  for (const step of steps) {
    if (step.kind === 'write' || step.kind === 'trim') {
      const length = Math.min(step.length, model.byteLength - step.offset);
      if (step.kind === 'write') {
        await volumes.write('ns', name, step.offset, pattern(length, step.seed), { epoch });
        model.set(pattern(length, step.seed), step.offset);
      } else {
        await volumes.trim('ns', name, step.offset, length, { epoch });
        model.fill(0, step.offset, step.offset + length);
      }
    } else if (step.kind === 'snapshot') {
      if (views.size >= snapshotsMax) continue;
      const snapshot = `s${(next += 1)}`;
      await volumes.createSnapshot('ns', name, snapshot);
      views.set(snapshot, Uint8Array.from(model));
    } else if (views.size > 0) {
      const snapshot = [...views.keys()][step.pick % views.size]!;
      await volumes.deleteSnapshot('ns', name, snapshot);
      views.delete(snapshot);
    }
  }
  return views;
}
