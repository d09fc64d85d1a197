// Block volumes (docs/volumes.md): a namespace's sparse 4 KiB-block disks, kept as keys of its volume keyspace
// (volume-layout.ts). A read or write of up to `ioBytesMax` bytes at any offset is one transaction over the
// blocks it covers: it commits in one atomic write when they share a shard (one placement group), by
// two-phase commit otherwise, so a reader never sees part of a write and a crash leaves all of it or none.
// A partial block is read, merged and written on the condition that it is still at the version read.
import type { Clock, DrMode, FaultInjector, IdSource, StorageQuota, TxnOutcome } from '../ports';
import { RingstoreError, isRingstoreError } from './errors';
import type { KvService } from './kv';
import { txnAbortError } from './txn-errors';
import type { TxnOp } from './txn-plan';
import type { TxnRunner } from './txn-runner';
import {
  type BlockSpan,
  type CopyEntry,
  blockKey,
  blockKeyPrefix,
  blockSpans,
  contentTypeWith,
  copiesOf,
  coversBlock,
  groupOf,
  validateByteRange,
  volumeKeyKind,
  volumeNamespaceOf,
  volumeRecordPrefix,
} from './volume-layout';
import { GenerationMoved, type VolumeLeaseLimits, VolumeLeases, fenced, generationOf } from './volume-leases';
import {
  type VolumeLease,
  type VolumeRecord,
  VolumeRecords,
  type VolumeSnapshot,
  inheritsBlock,
  validateVolumeName,
} from './volume-records';
import { VolumeResize } from './volume-resize';
import { VolumeSnapshots, type VolumeSnapshotLimits, copyOps, keptGenerations, mustCopy } from './volume-snapshots';
import { type CloneSource, VolumeClones } from './volume-clones';
import { VolumeViews } from './volume-views';
import { type VolumeDeletion, VolumeDeletions } from './volume-deletion';

export type { VolumeLease, VolumeOrigin, VolumeRecord, VolumeSnapshot } from './volume-records';
export type { VolumeDeletion } from './volume-deletion';
export { volumeTxnLimits } from './volume-layout';

export interface VolumeLimits extends VolumeLeaseLimits, VolumeSnapshotLimits {
  ioBytesMax: number;
  sizeBytesMax: number;
  deleteBlocksPerRequest: number;
  writeAttemptsMax: number;
}

export interface VolumeServiceDeps {
  /** The volume records, as keys of the volume keyspace. */
  kv: Pick<KvService, 'get' | 'put' | 'delete' | 'list'>;
  /** The blocks' reads and writes. */
  txns: TxnRunner;
  ids: IdSource;
  clock: Pick<Clock, 'nowMs'>;
  limits: VolumeLimits;
  /** Crash points (test runs only). */
  faults?: FaultInjector;
}

export interface VolumeView extends VolumeRecord {
  /** Bytes held by written blocks (an unwritten or trimmed block holds none). */
  allocatedBytes: number;
  /** Bytes held by blocks' copies that snapshots read (volume-snapshots.ts). */
  snapshotBytes: number;
}

export interface VolumeWriteOptions {
  /** The writer's epoch, from its attach: refused (`volume.fenced`) once another writer took the volume over. */
  epoch: number;
  /** How the namespace's writes reach a DR backup region (docs/dr.md). */
  drMode?: DrMode;
}

export interface VolumeWriteAck {
  offset: number;
  length: number;
}

export class VolumeService {
  private readonly records: VolumeRecords;
  private readonly leases: VolumeLeases;
  private readonly resizing: VolumeResize;
  private readonly snapshots: VolumeSnapshots;
  private readonly clones: VolumeClones;
  private readonly views: VolumeViews;
  private readonly deletion: VolumeDeletions;

  constructor(private readonly deps: VolumeServiceDeps) {
    const records = new VolumeRecords(deps.kv);
    this.records = records;
    this.leases = new VolumeLeases({ kv: deps.kv, records, clock: deps.clock, limits: deps.limits });
    this.views = new VolumeViews({ ...deps, records });
    this.resizing = new VolumeResize({ ...deps, records, leases: this.leases, views: this.views });
    this.clones = new VolumeClones({ records });
    this.snapshots = new VolumeSnapshots({ ...deps, records, leases: this.leases, views: this.views, clones: this.clones });
    this.deletion = new VolumeDeletions({ ...deps, records, leases: this.leases, clones: this.clones });
  }

  /** Takes snapshot `snapshot` of the volume (volume-snapshots.ts); called again after a crash, it finishes it. */
  async createSnapshot(namespace: string, name: string, snapshot: string): Promise<VolumeSnapshot> {
    return this.snapshots.create(namespace, name, snapshot);
  }

  /** The volume's snapshots, oldest first. */
  async listSnapshots(namespace: string, name: string): Promise<VolumeSnapshot[]> {
    return this.snapshots.list(namespace, name);
  }

  /** Deletes a snapshot and the blocks' copies only it read; called again after a crash, it finishes it. */
  async deleteSnapshot(namespace: string, name: string, snapshot: string): Promise<{ name: string; copiesDeleted: number }> {
    return this.snapshots.delete(namespace, name, snapshot);
  }

  /** A byte range of a snapshot, as `readRange` reads the volume's. */
  async readSnapshotRange(
    namespace: string,
    name: string,
    snapshot: string,
    rangeOf: (sizeBytes: number) => { offset: number; length: number },
  ): Promise<{ bytes: Uint8Array; offset: number; sizeBytes: number }> {
    return this.snapshots.readRange(namespace, name, snapshot, rangeOf);
  }

  /**
   * Creates a volume: empty, or a clone of a snapshot (`from`, volume-clones.ts; its size defaults to the snapshot's).
   * Its size counts against the namespace's storage quota (`quota.bytes` past it).
   */
  async create(
    namespace: string,
    input: { name: string; sizeBytes?: number; from?: CloneSource },
    options: QuotaOptions = {},
  ): Promise<VolumeRecord> {
    validateVolumeName(input.name);
    const made = {
      name: input.name,
      id: this.deps.ids.newId().replace(/-/g, ''),
      blockBytes: this.deps.limits.blockBytes,
      createdAtMs: this.deps.clock.nowMs(),
      epoch: 0,
    };
    if (input.from) {
      const sized = (snapshotBytes: number) => this.validateSize(input.sizeBytes ?? snapshotBytes);
      return this.clones.create(namespace, made, input.from, sized, options.storageQuota);
    }
    if (input.sizeBytes === undefined) {
      throw new RingstoreError('volume.sizeInvalid', 'sizeBytes is required unless the volume is cloned from a snapshot', {
        details: { field: 'sizeBytes' },
      });
    }
    const record: VolumeRecord = { ...made, sizeBytes: this.validateSize(input.sizeBytes), state: 'active' };
    return this.records.create(namespace, record, options.storageQuota);
  }

  /** Grows or shrinks a volume (volume-resize.ts): shrinking needs it detached and nothing written past the new end. */
  async resize(namespace: string, name: string, sizeBytes: number, options: QuotaOptions = {}): Promise<VolumeRecord> {
    return this.resizing.resize(namespace, name, this.validateSize(sizeBytes), options.storageQuota);
  }

  /** Attaches a writer (volume-leases.ts): its lease and the epoch its writes carry. */
  async attach(namespace: string, name: string, input: { holder: string; leaseSeconds?: number }): Promise<VolumeLease> {
    return this.leases.attach(namespace, name, input);
  }

  /** Ends the writer's lease of `epoch`. */
  async detach(namespace: string, name: string, epoch: number): Promise<void> {
    await this.leases.detach(namespace, name, epoch);
  }

  /**
   * The volume's record and the bytes its written blocks and their snapshots' copies hold (counted by listing them:
   * one page per 1,000 keys).
   */
  async describe(namespace: string, name: string): Promise<VolumeView> {
    const { record } = await this.records.read(namespace, name);
    let allocatedBlocks = 0;
    let copies = 0;
    let cursor: string | undefined;
    do {
      const page = await this.deps.kv.list(volumeNamespaceOf(namespace), {
        prefix: blockKeyPrefix(record.id),
        limit: listPageBlocks,
        ...(cursor ? { cursor } : {}),
      });
      for (const item of page.items) {
        const kind = volumeKeyKind(item.key)?.kind;
        // An empty block item keeps a trimmed block's copy index: it holds no bytes.
        if (kind === 'block' && item.size > 0) allocatedBlocks += 1;
        if (kind === 'copy') copies += 1;
      }
      cursor = page.cursor;
    } while (cursor);
    return { ...record, allocatedBytes: allocatedBlocks * record.blockBytes, snapshotBytes: copies * record.blockBytes };
  }

  /** The namespace's volumes in name order, `limit` at a time. */
  async list(namespace: string, input: { limit: number; cursor?: string }): Promise<{ volumes: VolumeRecord[]; cursor?: string }> {
    const page = await this.deps.kv.list(volumeNamespaceOf(namespace), {
      prefix: volumeRecordPrefix,
      limit: input.limit,
      ...(input.cursor ? { cursor: input.cursor } : {}),
    });
    const volumes: VolumeRecord[] = [];
    for (const item of page.items) {
      const name = item.key.slice(volumeRecordPrefix.length, item.key.lastIndexOf('/'));
      // A record deleted between the listing and this read is left out.
      const found = await this.records.read(namespace, name, 'any').catch((error: unknown) => {
        if (isRingstoreError(error, 'volume.notFound')) return undefined;
        throw error;
      });
      if (found) volumes.push(found.record);
    }
    return { volumes, ...(page.cursor ? { cursor: page.cursor } : {}) };
  }

  /** The sizes of all the namespace's volumes, deleting ones too: what they count for in its storage quota. */
  async provisionedBytes(namespace: string): Promise<number> {
    let bytes = 0;
    let cursor: string | undefined;
    do {
      const page = await this.list(namespace, { limit: listPageVolumes, ...(cursor ? { cursor } : {}) });
      for (const volume of page.volumes) bytes += volume.sizeBytes;
      cursor = page.cursor;
    } while (cursor !== undefined);
    return bytes;
  }

  /**
   * Deletes a volume with its blocks (volume-deletion.ts), `deleteBlocksPerRequest` at a time: `deleting` while some
   * remain; called again, it goes on where it stopped.
   */
  async delete(namespace: string, name: string, options: QuotaOptions = {}): Promise<VolumeDeletion> {
    return this.deletion.delete(namespace, name, options.storageQuota);
  }

  /** `length` bytes at `offset`, read at one instant (strongly); an unwritten block reads as zeros. */
  async read(namespace: string, name: string, offset: number, length: number): Promise<Uint8Array> {
    return (await this.readRange(namespace, name, () => ({ offset, length }))).bytes;
  }

  /** The range `rangeOf` picks from the volume's size (an HTTP Range), read as `read` reads. */
  async readRange(
    namespace: string,
    name: string,
    rangeOf: (sizeBytes: number) => { offset: number; length: number },
  ): Promise<{ bytes: Uint8Array; offset: number; sizeBytes: number }> {
    const { record } = await this.records.read(namespace, name);
    const { offset, length } = rangeOf(record.sizeBytes);
    this.validateRange(record, offset, length);
    const bytes = new Uint8Array(length);
    if (length === 0) return { bytes, offset, sizeBytes: record.sizeBytes };
    const spans = blockSpans(offset, length, this.deps.limits);
    const blocks = await this.readBlocks(namespace, record, spans);
    for (const span of spans) {
      const block = blocks.get(span.block)?.bytes;
      if (block) bytes.set(block.subarray(span.start, span.end), span.at);
    }
    return { bytes, offset, sizeBytes: record.sizeBytes };
  }

  /**
   * Writes `bytes` at `offset` as one transaction: whole blocks are replaced, a partial head or tail block is
   * read, merged and written on the condition that it is still at the version read (retried when another write
   * changed it in between). Acknowledged once the owners and, strong, the replicas hold it.
   */
  async write(namespace: string, name: string, offset: number, bytes: Uint8Array, options: VolumeWriteOptions): Promise<VolumeWriteAck> {
    const { record } = await this.writable(namespace, name, options.epoch);
    this.validateRange(record, offset, bytes.byteLength);
    if (bytes.byteLength === 0) return { offset, length: 0 };
    const spans = blockSpans(offset, bytes.byteLength, this.deps.limits);
    await this.commitSpans(namespace, record, spans, options, (span, current) => {
      const block = new Uint8Array(this.deps.limits.blockBytes);
      if (current) block.set(current);
      block.set(bytes.subarray(span.at, span.at + span.end - span.start), span.start);
      return block;
    });
    return { offset, length: bytes.byteLength };
  }

  /**
   * Trims a byte range (TRIM and WRITE_ZEROES): the blocks it covers whole are deleted, so they hold nothing and
   * read as zeros; a partial head or tail block has its bytes zeroed. All of it at one instant, as a write.
   */
  async trim(namespace: string, name: string, offset: number, length: number, options: VolumeWriteOptions): Promise<VolumeWriteAck> {
    const { record } = await this.writable(namespace, name, options.epoch);
    this.validateRange(record, offset, length);
    if (length === 0) return { offset, length: 0 };
    const spans = blockSpans(offset, length, this.deps.limits);
    await this.commitSpans(namespace, record, spans, options, (span, current) => {
      if (coversBlock(span, this.deps.limits) || !current) return undefined;
      const block = new Uint8Array(current);
      block.fill(0, span.start, span.end);
      return block;
    });
    return { offset, length };
  }

  /**
   * One transaction over `spans`: each block becomes what `next` makes of it (undefined: deleted). Blocks covered
   * whole are written blindly; the others are read first and conditioned on the version read, and deletes on the
   * block being as read. A block a kept snapshot still reads as it is is read too, and copied aside in the same
   * transaction (volume-snapshots.ts). Retried while a concurrent write of those blocks wins the race, and with the
   * record read again when a snapshot's creation or deletion moved the generation.
   */
  private async commitSpans(
    namespace: string,
    written: VolumeRecord,
    spans: readonly BlockSpan[],
    options: VolumeWriteOptions,
    next: (span: BlockSpan, current: Uint8Array | undefined) => Uint8Array | undefined,
  ): Promise<void> {
    const { limits } = this.deps;
    let record = written;
    for (let attempt = 1; ; attempt += 1) {
      const kept = keptGenerations(record);
      // Blind writes need nothing read; partial blocks and deletes need the block's version; with snapshots kept,
      // every block is read, for the copy index it carries, so that a first change copies it and a change keeps it.
      const mustRead =
        kept.length > 0 ? [...spans] : spans.filter((span) => !coversBlock(span, limits) || next(span, undefined) === undefined);
      const current = mustRead.length > 0 ? await this.readBlocks(namespace, record, mustRead) : new Map<number, ReadBlock>();
      const groups = [...new Set(spans.map((span) => groupOf(span.block, limits)))];
      let checks: TxnOp[];
      try {
        checks = await this.leases.checks(namespace, record, options.epoch, groups);
      } catch (error) {
        if (!(error instanceof GenerationMoved) || attempt >= limits.writeAttemptsMax) throw error;
        record = (await this.writable(namespace, record.name, options.epoch)).record;
        continue;
      }
      const copies: TxnOp[] = [];
      const changes: TxnOp[] = [];
      for (const span of spans) {
        const key = blockKey(record.id, span.block, limits);
        const seen = current.get(span.block);
        const content = next(span, seen?.bytes);
        const changed = content !== undefined || seen?.bytes !== undefined;
        // With no snapshot kept, a block's index is dropped: its copies are no one's (a deletion removes them).
        let entries: readonly CopyEntry[] = kept.length > 0 ? (seen?.copies ?? []) : [];
        if (changed && kept.length > 0 && mustCopy(entries, kept, generationOf(record))) {
          const copy = copyOps(record, span.block, seen?.bytes, limits);
          if (copy.value) copies.push(copy.value);
          entries = [...entries, copy.entry];
        }
        const condition = mustRead.includes(span) ? { ifVersion: seen?.version ?? 0 } : {};
        if (content) changes.push({ op: 'put', key, value: content, contentType: contentTypeWith(entries), ...condition });
        // Trimmed: gone, or an empty item (it reads as zeros) while it carries an index or would read its origin's.
        else if (seen?.bytes !== undefined && entries.length === 0 && !inheritsBlock(record, span.block)) {
          changes.push({ op: 'delete', key, ifVersion: seen.version });
        } else if (seen?.bytes !== undefined) {
          changes.push({ op: 'put', key, value: new Uint8Array(0), contentType: contentTypeWith(entries), ifVersion: seen.version });
        }
        // Holding nothing and to hold nothing: checked, so a write that fills it meanwhile makes this one try again.
        else changes.push({ op: 'check', key, ifVersion: seen?.version ?? 0 });
      }
      const run = (ops: TxnOp[]) =>
        this.deps.txns.run(volumeNamespaceOf(namespace), ops, {
          consistency: 'strong',
          ...(options.drMode ? { drMode: options.drMode } : {}),
        });
      // The copies go first, in a transaction of their own: in one with the change, a whole write's blocks and their
      // copies would pass DynamoDB's 400 KB for a two-phase commit's decision record. A copy that lands without its
      // change is listed by no index (so read by no snapshot), and the next try writes it again with the same bytes.
      const outcome = copies.length > 0 ? await run([...checks, ...copies]) : undefined;
      if (outcome?.status === 'aborted') {
        record = await this.afterRace(namespace, record, options.epoch, outcome, attempt);
        continue;
      }
      const changedOutcome = await run([...checks, ...changes]);
      if (changedOutcome.status === 'committed') return;
      record = await this.afterRace(namespace, record, options.epoch, changedOutcome, attempt);
    }
  }

  /**
   * After a write's transaction lost a race: a fence moved (read it again, and the record: refused if another writer
   * raised it), or a block or index changed since read (try again). The record for the next try; a race lost
   * `writeAttemptsMax` times is a retryable conflict.
   */
  private async afterRace(
    namespace: string,
    record: VolumeRecord,
    epoch: number,
    outcome: Extract<TxnOutcome, { status: 'aborted' }>,
    attempt: number,
  ): Promise<VolumeRecord> {
    let next = record;
    if (outcome.key && volumeKeyKind(outcome.key)?.kind === 'fence') {
      this.leases.refused(namespace, outcome.key);
      next = (await this.writable(namespace, record.name, epoch)).record;
    }
    const raced = outcome.reason === 'precondition' || outcome.reason === 'conflict' || outcome.reason === 'notFound';
    if (!raced) throw txnAbortError(outcome);
    // The conditions are the write's own (the versions it read), not the client's: a race it kept losing is a
    // retryable conflict to the client, never a 412 or a 404 it did not ask for.
    if (attempt >= this.deps.limits.writeAttemptsMax) throw txnAbortError({ ...outcome, reason: 'conflict' });
    return next;
  }

  /**
   * The blocks of `spans` as stored, read at one instant: their versions (0: absent), their bytes (none: never
   * written, or trimmed; a clone's block it never wrote: its origin's) and the copy indexes they carry.
   */
  private async readBlocks(namespace: string, record: VolumeRecord, spans: readonly BlockSpan[]): Promise<Map<number, ReadBlock>> {
    const { limits } = this.deps;
    const ops: TxnOp[] = spans.map((span) => ({ op: 'get', key: blockKey(record.id, span.block, limits) }));
    const outcome = await this.deps.txns.run(volumeNamespaceOf(namespace), ops, { consistency: 'strong' });
    if (outcome.status === 'aborted') throw txnAbortError(outcome);
    const blocks = new Map<number, ReadBlock>();
    outcome.reads.forEach((read, index) => {
      const block: ReadBlock = { version: 0, copies: [] };
      if (read.found && read.version !== undefined) {
        block.version = read.version;
        block.copies = copiesOf(read.contentType);
        const bytes = new Uint8Array(Buffer.from(read.valueBase64 ?? '', 'base64'));
        if (bytes.byteLength > 0) block.bytes = bytes;
      }
      blocks.set(spans[index]!.block, block);
    });
    const absent = [...blocks].filter(([, block]) => block.version === 0).map(([number]) => number);
    const inherited = await this.views.inherited(namespace, record, record.origin?.sizeBytes ?? 0, absent);
    for (const [number, bytes] of inherited) if (bytes) blocks.get(number)!.bytes = bytes;
    return blocks;
  }

  /** The record of a volume a writer of `epoch` may write: refused at once when the epoch is no longer the volume's. */
  private async writable(namespace: string, name: string, epoch: number): Promise<{ record: VolumeRecord }> {
    const { record } = await this.records.read(namespace, name);
    if (record.epoch !== epoch) throw fenced(record, epoch);
    return { record };
  }

  /** `sizeBytes` if it is a volume's size, else `volume.sizeInvalid`. */
  private validateSize(sizeBytes: number): number {
    const { blockBytes, sizeBytesMax } = this.deps.limits;
    if (!Number.isSafeInteger(sizeBytes) || sizeBytes < blockBytes || sizeBytes > sizeBytesMax || sizeBytes % blockBytes !== 0) {
      throw new RingstoreError(
        'volume.sizeInvalid',
        `sizeBytes must be a multiple of ${blockBytes} from ${blockBytes} to ${sizeBytesMax} (got ${sizeBytes})`,
        { details: { field: 'sizeBytes', multipleOf: blockBytes, max: sizeBytesMax } },
      );
    }
    return sizeBytes;
  }

  private validateRange(record: VolumeRecord, offset: number, length: number): void {
    validateByteRange(`volume ${record.name}`, record.sizeBytes, offset, length, this.deps.limits.ioBytesMax);
  }
}

/** A block as read: its version (0: absent), its bytes (none: absent, or an empty item) and its copy index. */
interface ReadBlock {
  version: number;
  bytes?: Uint8Array;
  copies: readonly CopyEntry[];
}

/** The namespace's storage quota, which a volume's size counts against (docs/volumes.md, "Quotas"). */
export interface QuotaOptions {
  storageQuota?: StorageQuota;
}

/** Volume records listed per page when the namespace's volumes are counted. */
const listPageVolumes = 1_000;
/** Block keys listed per page (the listing's maximum). */
const listPageBlocks = 1_000;
