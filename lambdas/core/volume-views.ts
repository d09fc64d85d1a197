// What a volume's blocks read as, now or at a snapshot (docs/volumes.md, "Snapshots" and "Clones"). A snapshot reads
// each block item with its copy index at one instant, then the copy with the smallest tag at or after its generation
// (volume-snapshots.ts), else the block. A clone's block it never wrote (no item at all) below the bytes it inherits
// reads as its origin's snapshot holds it, which may itself be a clone's: the chain ends at a volume made empty.
// A snapshot never changes once ready and keeps what it reads, so an origin read at any later instant answers the
// same: a clone's read is at the instant its own items were read.
import { RingstoreError } from './errors';
import type { KvService } from './kv';
import { txnAbortError } from './txn-errors';
import type { TxnOp } from './txn-plan';
import type { TxnRunner } from './txn-runner';
import {
  type BlockGeometry,
  blockKey,
  blockKeyPrefix,
  copiesOf,
  copyFor,
  copyKey,
  volumeKeyKind,
  volumeNamespaceOf,
} from './volume-layout';
import type { VolumeRecord, VolumeRecords, VolumeSnapshot } from './volume-records';

export interface VolumeViewsDeps {
  kv: Pick<KvService, 'list'>;
  txns: TxnRunner;
  records: VolumeRecords;
  limits: BlockGeometry;
}

/** A block's bytes as a view holds them (undefined: it reads as zeros). */
export type BlockBytes = Map<number, Uint8Array | undefined>;

const listPageKeys = 1_000;

export class VolumeViews {
  constructor(private readonly deps: VolumeViewsDeps) {}

  /** `blocks` of `record` as its snapshot `snapshot` holds them. */
  async snapshotBlocks(namespace: string, record: VolumeRecord, snapshot: VolumeSnapshot, blocks: readonly number[]): Promise<BlockBytes> {
    const { limits } = this.deps;
    const found: BlockBytes = new Map();
    if (blocks.length === 0) return found;
    const items = await this.read(
      namespace,
      blocks.map((block) => blockKey(record.id, block, limits)),
    );
    const fromCopies: { block: number; key: string }[] = [];
    const absent: number[] = [];
    blocks.forEach((block, index) => {
      const item = items[index]!;
      const copy = copyFor(item.found ? copiesOf(item.contentType) : [], snapshot.generation);
      if (copy?.zero) found.set(block, undefined);
      else if (copy) fromCopies.push({ block, key: copyKey(record.id, block, copy.tag, limits) });
      else if (item.found) found.set(block, nonEmpty(decoded(item)));
      else absent.push(block);
    });
    if (fromCopies.length > 0) {
      // Copies never change once written, and the snapshot keeps the ones it reads: any instant will do.
      const copies = await this.read(
        namespace,
        fromCopies.map(({ key }) => key),
      );
      fromCopies.forEach(({ block, key }, index) => {
        const copy = copies[index]!;
        if (!copy.found) throw new RingstoreError('internal', `snapshot ${snapshot.name} of volume ${record.name} misses its copy ${key}`);
        found.set(block, nonEmpty(decoded(copy)));
      });
    }
    for (const [block, bytes] of await this.inherited(namespace, record, snapshot.originBytes ?? 0, absent)) found.set(block, bytes);
    return found;
  }

  /**
   * `blocks`, which `record` holds no item of, as its origin's snapshot holds them: those below `inheritedBytes` (the
   * record's own for the volume now, its snapshot's for a snapshot); none for a volume that is not a clone.
   */
  async inherited(namespace: string, record: VolumeRecord, inheritedBytes: number, blocks: readonly number[]): Promise<BlockBytes> {
    const within = blocks.filter((block) => block * this.deps.limits.blockBytes < inheritedBytes);
    if (!record.origin || within.length === 0) return new Map();
    const { source, snapshot } = await this.originOf(namespace, record);
    return this.snapshotBlocks(namespace, source, snapshot, within);
  }

  /**
   * The blocks of placement group `group` that hold bytes in a view of `record` (its snapshot of `generation`, or the
   * volume now when undefined), counting those it inherits below `inheritedBytes`: what a shrink may not cut off.
   * Listed, not read: a block item with bytes, or a copy that is not of a block that held nothing.
   */
  async dataBlocksOfGroup(
    namespace: string,
    record: VolumeRecord,
    generation: number | undefined,
    inheritedBytes: number,
    group: number,
  ): Promise<Set<number>> {
    const held = new Set<number>();
    // Blocks the view reads from the record's own items, with bytes or not: an origin's bytes are hidden there.
    const own = new Set<number>();
    let cursor: string | undefined;
    do {
      const page = await this.deps.kv.list(volumeNamespaceOf(namespace), {
        prefix: `${blockKeyPrefix(record.id)}${group}/`,
        limit: listPageKeys,
        ...(cursor ? { cursor } : {}),
      });
      for (const item of page.items) {
        const kind = volumeKeyKind(item.key);
        if (kind?.kind !== 'block') continue;
        own.add(kind.block);
        const copy = generation === undefined ? undefined : copyFor(copiesOf(item.contentType), generation);
        if (copy ? !copy.zero : item.size > 0) held.add(kind.block);
      }
      cursor = page.cursor;
    } while (cursor);
    if (record.origin && inheritedBytes > 0) {
      const { source, snapshot } = await this.originOf(namespace, record);
      const inherited = await this.dataBlocksOfGroup(namespace, source, snapshot.generation, snapshot.originBytes ?? 0, group);
      for (const block of inherited) {
        if (!own.has(block) && block * this.deps.limits.blockBytes < inheritedBytes) held.add(block);
      }
    }
    return held;
  }

  /** A clone's origin volume and the snapshot it was made from; either gone is a broken invariant. */
  private async originOf(namespace: string, record: VolumeRecord): Promise<{ source: VolumeRecord; snapshot: VolumeSnapshot }> {
    const origin = record.origin!;
    const { record: source } = await this.deps.records.read(namespace, origin.volume, 'any');
    const snapshot = source.id === origin.volumeId ? source.snapshots?.find((each) => each.name === origin.snapshot) : undefined;
    if (!snapshot) {
      throw new RingstoreError(
        'internal',
        `clone ${record.name} misses its origin, snapshot ${origin.snapshot} of volume ${origin.volume}`,
      );
    }
    return { source, snapshot };
  }

  private async read(namespace: string, keys: readonly string[]) {
    const ops: TxnOp[] = keys.map((key) => ({ op: 'get' as const, key }));
    const outcome = await this.deps.txns.run(volumeNamespaceOf(namespace), ops, { consistency: 'strong' });
    if (outcome.status === 'aborted') throw txnAbortError(outcome);
    return outcome.reads;
  }
}

export function decoded(read: { found: boolean; valueBase64?: string }): Uint8Array | undefined {
  return read.found ? new Uint8Array(Buffer.from(read.valueBase64 ?? '', 'base64')) : undefined;
}

/** Bytes, or undefined for none (an empty item: a trimmed block that keeps its index, or hides its origin's). */
const nonEmpty = (bytes: Uint8Array | undefined) => (bytes && bytes.byteLength > 0 ? bytes : undefined);
