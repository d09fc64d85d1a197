// A volume's snapshots (docs/volumes.md, "Snapshots"): copy-on-write at block level. Taking a snapshot costs one
// record write and a fence raise per placement group, whatever the volume holds; afterwards a block's first change
// copies its old bytes aside, in a transaction just before the change's.
//
// The record's generation G rises by one at every snapshot creation and deletion; a snapshot taken while it was g
// sees each block as it was at the end of generation g. A block's first write in generation G (with a snapshot that
// needs it) copies the block as it is into `<block>@<G-1>` and lists that tag in the block's copy index, which the
// block item carries in its content type (so the change stays one item per block). A snapshot of generation s reads
// the block with its index: the copy with the smallest tag ≥ s, else the block itself. Every placement group's fence
// holds G, so a write of a record read before a creation or deletion lands nowhere the new generation has reached.
import { forAllBounded } from './bounded';
import { RingstoreError } from './errors';
import type { KvService } from './kv';
import { txnAbortError } from './txn-errors';
import type { TxnOp } from './txn-plan';
import type { TxnRunner } from './txn-runner';
import {
  type BlockGeometry,
  type CopyEntry,
  blockKeyPrefix,
  blockSpans,
  contentTypeWith,
  copiesOf,
  copyKey,
  fenceKey,
  groupOf,
  blockKey,
  validateByteRange,
  volumeKeyKind,
  volumeNamespaceOf,
} from './volume-layout';
import { type VolumeLeases, generationOf, parseFence } from './volume-leases';
import {
  type VolumeCloneRef,
  type VolumeRecord,
  type VolumeRecords,
  type VolumeSnapshot,
  inheritsBlock,
  validateVolumeName,
} from './volume-records';
import { type VolumeViews, decoded } from './volume-views';
import type { Clock, FaultInjector } from '../ports';

export interface VolumeSnapshotLimits extends BlockGeometry {
  snapshotsMax: number;
  ioBytesMax: number;
}

export interface VolumeSnapshotsDeps {
  kv: Pick<KvService, 'list'>;
  /** Crash points of a snapshot's creation (test runs only). */
  faults?: FaultInjector;
  txns: TxnRunner;
  records: VolumeRecords;
  leases: VolumeLeases;
  views: VolumeViews;
  /** Which of a snapshot's listed clones are gone (volume-clones.ts). */
  clones: { gone(namespace: string, listed: readonly VolumeCloneRef[]): Promise<Set<string>> };
  clock: Pick<Clock, 'nowMs'>;
  limits: VolumeSnapshotLimits;
}

/** The generations of the snapshots whose bytes are kept: every snapshot not being deleted. */
export function keptGenerations(record: VolumeRecord): number[] {
  return (record.snapshots ?? []).filter((snapshot) => snapshot.state !== 'deleting').map((snapshot) => snapshot.generation);
}

/**
 * Whether a change of a block in the record's generation G must first copy the block (tag G-1): some kept snapshot
 * would otherwise read the change, because no copy tagged at or after it exists yet.
 */
export function mustCopy(entries: readonly CopyEntry[], kept: readonly number[], generation: number): boolean {
  const lastTag = entries.reduce((last, entry) => Math.max(last, entry.tag), -1);
  return kept.some((snapshot) => snapshot > lastTag && snapshot <= generation - 1);
}

/**
 * The entries a kept snapshot still reads: a copy tagged T, after the kept copy before it tagged P, serves the
 * snapshots of generations in (P, T]; with none of them kept, it goes.
 */
export function entriesStillRead(entries: readonly CopyEntry[], kept: readonly number[]): CopyEntry[] {
  const sorted = [...entries].sort((a, b) => a.tag - b.tag);
  const stay: CopyEntry[] = [];
  let previous = -1;
  for (const entry of sorted) {
    if (kept.some((snapshot) => snapshot > previous && snapshot <= entry.tag)) {
      stay.push(entry);
      previous = entry.tag;
    }
  }
  return stay;
}

const copyContentType = 'application/octet-stream';
/** Tries of one block's pruning that a write of the block raced. */
const pruneAttemptsMax = 5;
const listPageKeys = 1_000;
const pruneConcurrency = 16;

/**
 * What copies a block before its first change in the record's generation: the put of its copy (none for a block
 * that held nothing), and the entry its index gains with the change.
 */
export function copyOps(
  record: VolumeRecord,
  block: number,
  current: Uint8Array | undefined,
  geometry: BlockGeometry,
): { value?: TxnOp; entry: CopyEntry } {
  const tag = generationOf(record) - 1;
  if (!current) return { entry: { tag, zero: true } };
  // Unconditional: every copy of this tag holds the same bytes (what the block held when its index lacked the tag).
  return {
    value: { op: 'put', key: copyKey(record.id, block, tag, geometry), value: current, contentType: copyContentType },
    entry: { tag },
  };
}

export class VolumeSnapshots {
  constructor(private readonly deps: VolumeSnapshotsDeps) {}

  /**
   * Takes snapshot `name` of the volume: the record takes it and a new generation, then every placement group's
   * fence takes that generation, then the snapshot is ready. Cut short, the same call finishes it.
   */
  async create(namespace: string, volume: string, name: string): Promise<VolumeSnapshot> {
    validateVolumeName(name);
    const { record } = await this.deps.records.change(namespace, volume, (current) => {
      const existing = snapshotNamed(current, name);
      if (existing?.state === 'ready') {
        throw new RingstoreError('volume.snapshotExists', `volume ${volume} has a snapshot named ${name} already`, { details: { name } });
      }
      if (existing?.state === 'deleting') throw unfinished(volume, existing);
      if (existing) return undefined;
      const { snapshotsMax } = this.deps.limits;
      if ((current.snapshots ?? []).length >= snapshotsMax) {
        throw new RingstoreError('volume.snapshotLimit', `volume ${volume} has ${snapshotsMax} snapshots, its maximum: delete one first`, {
          details: { max: snapshotsMax },
        });
      }
      const generation = generationOf(current);
      const snapshot: VolumeSnapshot = {
        name,
        generation,
        sizeBytes: current.sizeBytes,
        createdAtMs: this.deps.clock.nowMs(),
        state: 'creating',
        ...(current.origin ? { originBytes: current.origin.sizeBytes } : {}),
      };
      return { ...current, generation: generation + 1, snapshots: [...(current.snapshots ?? []), snapshot] };
    });
    this.deps.faults?.reach('volume.afterSnapshotRecord');
    await this.deps.leases.fenceAll(namespace, record, record.epoch);
    this.deps.faults?.reach('volume.afterSnapshotFences');
    const ready = await this.deps.records.change(namespace, volume, (current) => {
      const snapshot = snapshotNamed(current, name);
      if (!snapshot || snapshot.state === 'deleting') throw notFound(volume, name);
      if (snapshot.state === 'ready') return undefined;
      return withSnapshot(current, { ...snapshot, state: 'ready' });
    });
    return snapshotNamed(ready.record, name)!;
  }

  /** The volume's snapshots, oldest first. */
  async list(namespace: string, volume: string): Promise<VolumeSnapshot[]> {
    const { record } = await this.deps.records.read(namespace, volume);
    return record.snapshots ?? [];
  }

  /**
   * Deletes snapshot `name`: it leaves the kept ones in a new generation (which the fences take, so no write of an
   * older record copies for it), then every block's copies no kept snapshot reads are removed, then the record forgets
   * it. Cut short, the same call finishes it.
   */
  async delete(namespace: string, volume: string, name: string): Promise<{ name: string; copiesDeleted: number }> {
    const listed = snapshotNamed((await this.deps.records.read(namespace, volume)).record, name)?.clones ?? [];
    const gone = await this.deps.clones.gone(namespace, listed);
    const { record } = await this.deps.records.change(namespace, volume, (current) => {
      const snapshot = snapshotNamed(current, name);
      if (!snapshot) throw notFound(volume, name);
      if (snapshot.state === 'deleting') return undefined;
      // A clone listed since the read above is not among the gone: refused, as a live one is.
      const live = (snapshot.clones ?? []).filter((clone) => !gone.has(clone.id));
      if (live.length > 0) throw hasClones(`snapshot ${name} of volume ${volume}`, live);
      const { clones: _gone, ...deleting } = snapshot;
      return withSnapshot({ ...current, generation: generationOf(current) + 1 }, { ...deleting, state: 'deleting' });
    });
    await this.deps.leases.fenceAll(namespace, record, record.epoch);
    const copiesDeleted = await this.prune(namespace, record);
    await this.deps.records.change(namespace, volume, (current) => {
      if (!snapshotNamed(current, name)) return undefined;
      return { ...current, snapshots: (current.snapshots ?? []).filter((snapshot) => snapshot.name !== name) };
    });
    return { name, copiesDeleted };
  }

  /**
   * The range `rangeOf` picks from snapshot `name`'s size (an HTTP Range), as it was when the snapshot was taken; an
   * unwritten block reads as zeros.
   */
  async readRange(
    namespace: string,
    volume: string,
    name: string,
    rangeOf: (sizeBytes: number) => { offset: number; length: number },
  ): Promise<{ bytes: Uint8Array; offset: number; sizeBytes: number }> {
    const { record } = await this.deps.records.read(namespace, volume);
    const snapshot = snapshotNamed(record, name);
    if (!snapshot) throw notFound(volume, name);
    if (snapshot.state !== 'ready') throw unfinished(volume, snapshot);
    const { offset, length } = rangeOf(snapshot.sizeBytes);
    validateByteRange(`snapshot ${name} of volume ${volume}`, snapshot.sizeBytes, offset, length, this.deps.limits.ioBytesMax);
    const bytes = await this.readBytes(namespace, record, snapshot, offset, length);
    return { bytes, offset, sizeBytes: snapshot.sizeBytes };
  }

  private async readBytes(
    namespace: string,
    record: VolumeRecord,
    snapshot: VolumeSnapshot,
    offset: number,
    length: number,
  ): Promise<Uint8Array> {
    const bytes = new Uint8Array(length);
    if (length === 0) return bytes;
    const spans = blockSpans(offset, length, this.deps.limits);
    const blocks = await this.deps.views.snapshotBlocks(
      namespace,
      record,
      snapshot,
      spans.map((span) => span.block),
    );
    for (const span of spans) {
      const block = blocks.get(span.block);
      if (block) bytes.set(block.subarray(span.start, span.end), span.at);
    }
    return bytes;
  }

  /** Removes, block by block, the copies no kept snapshot reads. Answers how many copies went. */
  private async prune(namespace: string, record: VolumeRecord): Promise<number> {
    const keyspace = volumeNamespaceOf(namespace);
    let cursor: string | undefined;
    let deleted = 0;
    do {
      const page = await this.deps.kv.list(keyspace, {
        prefix: blockKeyPrefix(record.id),
        limit: listPageKeys,
        ...(cursor ? { cursor } : {}),
      });
      // Each block with an index or a copy on this page, with the tags of its copies here.
      const listed = new Map<number, number[]>();
      for (const item of page.items) {
        const kind = volumeKeyKind(item.key);
        const indexed = kind?.kind === 'block' && copiesOf(item.contentType).length > 0;
        if (indexed || kind?.kind === 'copy') listed.set(kind.block, listed.get(kind.block) ?? []);
        if (kind?.kind === 'copy') listed.get(kind.block)!.push(kind.tag);
      }
      await forAllBounded([...listed], pruneConcurrency, async ([block, tags]) => {
        deleted += await this.pruneBlock(namespace, record, block, tags);
      });
      cursor = page.cursor;
    } while (cursor);
    return deleted;
  }

  /**
   * Drops the copies of `block` no kept snapshot reads, checking its group's fence still holds the generation the
   * kept snapshots were read at: a snapshot created meanwhile raised it, and its copies must stay. Drops too the copies
   * among `listed` tags that no index lists and that a past generation made: a write that gave up between its copy's
   * transaction and its change's left them (one of the current generation may still be in flight, and stays).
   */
  private async pruneBlock(namespace: string, volume: VolumeRecord, block: number, listed: readonly number[]): Promise<number> {
    const { limits, txns, records } = this.deps;
    const keyspace = volumeNamespaceOf(namespace);
    const key = blockKey(volume.id, block, limits);
    const fence = fenceKey(volume.id, groupOf(block, limits));
    let record = volume;
    for (let attempt = 1; ; attempt += 1) {
      const read = await txns.run(
        keyspace,
        [
          { op: 'get', key },
          { op: 'get', key: fence },
        ],
        { consistency: 'strong' },
      );
      if (read.status === 'aborted') throw txnAbortError(read);
      const [found, fenceRead] = [read.reads[0]!, read.reads[1]!];
      const fenceNow =
        fenceRead.found && fenceRead.version !== undefined ? { ...parseFence(decoded(fenceRead)!), version: fenceRead.version } : undefined;
      if (fenceNow && fenceNow.generation > generationOf(record)) {
        record = (await records.read(namespace, record.name, 'any')).record;
        continue;
      }
      const version = found.found ? (found.version ?? 0) : 0;
      const entries = found.found ? copiesOf(found.contentType) : [];
      const stay = entriesStillRead(entries, keptGenerations(record));
      const orphans = listed.filter((tag) => tag <= generationOf(record) - 2 && !entries.some((entry) => entry.tag === tag));
      if (stay.length === entries.length && orphans.length === 0) return 0;
      const going = entries.filter((entry) => !stay.includes(entry));
      const value = decoded(found) ?? new Uint8Array(0);
      const ops: TxnOp[] = [{ op: 'check', key: fence, ifVersion: fenceNow?.version ?? 0 }];
      // The block keeps its bytes and the entries still read; an emptied block that held nothing goes, unless it hides
      // a clone's inherited bytes (a trim's empty item).
      if (stay.length === entries.length) ops.push({ op: 'check', key, ifVersion: version });
      else if (stay.length === 0 && value.byteLength === 0 && !inheritsBlock(record, block)) {
        ops.push({ op: 'delete', key, ifVersion: version });
      } else ops.push({ op: 'put', key, value, contentType: contentTypeWith(stay), ifVersion: version });
      const dropped = [...going.filter((entry) => !entry.zero).map((entry) => entry.tag), ...orphans];
      for (const tag of dropped) ops.push({ op: 'delete', key: copyKey(volume.id, block, tag, limits) });
      const outcome = await txns.run(keyspace, ops, { consistency: 'strong' });
      if (outcome.status === 'committed') return dropped.length;
      const raced = outcome.reason === 'precondition' || outcome.reason === 'conflict';
      if (!raced || attempt >= pruneAttemptsMax) throw txnAbortError(outcome);
    }
  }
}

export const snapshotNamed = (record: VolumeRecord, name: string) => (record.snapshots ?? []).find((snapshot) => snapshot.name === name);

const withSnapshot = (record: VolumeRecord, snapshot: VolumeSnapshot): VolumeRecord => ({
  ...record,
  snapshots: (record.snapshots ?? []).map((each) => (each.name === snapshot.name ? snapshot : each)),
});

/** Refuses to delete `what` (a snapshot, or a volume with one) while clones read from it. */
export function hasClones(what: string, live: readonly VolumeCloneRef[]): RingstoreError {
  const names = live.map((clone) => clone.volume);
  return new RingstoreError('volume.hasClones', `${what} is read by its clones ${names.join(', ')}: delete them first`, {
    details: { clones: names },
  });
}

export function notFound(volume: string, name: string): RingstoreError {
  return new RingstoreError('volume.snapshotNotFound', `volume ${volume} has no snapshot named ${name}`, { details: { name } });
}

export function unfinished(volume: string, snapshot: VolumeSnapshot): RingstoreError {
  const again = snapshot.state === 'creating' ? 'POST it again' : 'DELETE it again';
  return new RingstoreError(
    'volume.snapshotUnfinished',
    `snapshot ${snapshot.name} of volume ${volume} is ${snapshot.state}: ${again} to finish`,
    {
      details: { name: snapshot.name, state: snapshot.state },
    },
  );
}
