// Clones (docs/volumes.md, "Clones"): a volume made from a snapshot, copy-on-write. Making one copies nothing: the
// clone's record names its origin (the volume, the snapshot and the bytes it inherits), and a block the clone never
// wrote reads as the snapshot holds it (volume-views.ts). Its first write of a block writes the whole block, the
// origin's bytes merged with the write's.
//
// The snapshot lists its clones, so it cannot be deleted while one lives (nor its volume). A clone's record is made
// first, `creating`, then listed by the snapshot (a change of the origin's record, refused once the snapshot's
// deletion began), then made active: whichever of the listing and the snapshot's deletion comes first, the other
// sees it. A listed clone whose record is gone (a deletion that ended before it unlisted itself) no longer counts.
import { RingstoreError, isRingstoreError } from './errors';
import { type VolumeCloneRef, type VolumeOrigin, type VolumeRecord, type VolumeRecords, validateVolumeName } from './volume-records';
import { notFound, snapshotNamed, unfinished } from './volume-snapshots';
import type { StorageQuota } from '../ports';

export interface VolumeClonesDeps {
  records: VolumeRecords;
}

/** What a clone is made from: a volume's snapshot. */
export interface CloneSource {
  volume: string;
  snapshot: string;
}

export class VolumeClones {
  constructor(private readonly deps: VolumeClonesDeps) {}

  /**
   * Makes volume `made` (named and with its id by the caller) a clone of `from`, as large as `sized` says given the
   * snapshot's size (at least that). Cut short, the same call finishes it.
   */
  async create(
    namespace: string,
    made: Omit<VolumeRecord, 'origin' | 'state' | 'sizeBytes'>,
    from: CloneSource,
    sized: (snapshotBytes: number) => number,
    quota?: StorageQuota,
  ): Promise<VolumeRecord> {
    const { records } = this.deps;
    validateVolumeName(from.volume);
    const { record: source } = await records.read(namespace, from.volume);
    const snapshot = snapshotNamed(source, from.snapshot);
    if (!snapshot) throw notFound(from.volume, from.snapshot);
    if (snapshot.state !== 'ready') throw unfinished(from.volume, snapshot);
    const record = { ...made, sizeBytes: sized(snapshot.sizeBytes) };
    if (record.sizeBytes < snapshot.sizeBytes) {
      throw new RingstoreError(
        'volume.sizeInvalid',
        `a clone of snapshot ${from.snapshot} is at least its ${snapshot.sizeBytes} bytes (got ${record.sizeBytes})`,
        { details: { field: 'sizeBytes', min: snapshot.sizeBytes } },
      );
    }
    const origin: VolumeOrigin = { volume: from.volume, volumeId: source.id, snapshot: from.snapshot, sizeBytes: snapshot.sizeBytes };
    const clone = await this.createRecord(namespace, { ...record, state: 'creating', origin }, quota);
    try {
      await records.change(namespace, from.volume, (current) => {
        const listing = current.id === origin.volumeId ? snapshotNamed(current, from.snapshot) : undefined;
        if (!listing || listing.state === 'deleting') throw notFound(from.volume, from.snapshot);
        if (listing.clones?.some((each) => each.id === clone.id)) return undefined;
        const clones = [...(listing.clones ?? []), { volume: clone.name, id: clone.id }];
        return { ...current, snapshots: current.snapshots!.map((each) => (each === listing ? { ...listing, clones } : each)) };
      });
    } catch (error) {
      // The snapshot's deletion (or its volume's) came first: the clone, which nothing wrote, goes.
      if (isRingstoreError(error, 'volume.snapshotNotFound') || isRingstoreError(error, 'volume.deleting')) {
        await records.delete(namespace, clone.name, clone.epoch, quota);
      }
      throw error;
    }
    const { record: active } = await records.change(
      namespace,
      clone.name,
      (current) => (current.state === 'creating' ? { ...current, state: 'active' } : undefined),
      'any',
    );
    return active;
  }

  /** Of `listed` clones, the ids of those that no longer exist: a volume of that name now is another or none. */
  async gone(namespace: string, listed: readonly VolumeCloneRef[]): Promise<Set<string>> {
    const gone = new Set<string>();
    for (const clone of listed) {
      const found = await this.deps.records.read(namespace, clone.volume, 'any').catch((error: unknown) => {
        if (isRingstoreError(error, 'volume.notFound')) return undefined;
        throw error;
      });
      if (found?.record.id !== clone.id) gone.add(clone.id);
    }
    return gone;
  }

  /** A deleted clone leaves its origin's snapshot's list (its origin may be gone already, listed it stale). */
  async unlist(namespace: string, clone: VolumeRecord): Promise<void> {
    const origin = clone.origin;
    if (!origin) return;
    await this.deps.records
      .change(
        namespace,
        origin.volume,
        (current) => {
          const snapshot = current.id === origin.volumeId ? snapshotNamed(current, origin.snapshot) : undefined;
          if (!snapshot?.clones?.some((each) => each.id === clone.id)) return undefined;
          const clones = snapshot.clones.filter((each) => each.id !== clone.id);
          const { clones: _listed, ...rest } = snapshot;
          const unlisted = clones.length > 0 ? { ...rest, clones } : rest;
          return { ...current, snapshots: current.snapshots!.map((each) => (each === snapshot ? unlisted : each)) };
        },
        'any',
      )
      .catch((error: unknown) => {
        if (!isRingstoreError(error, 'volume.notFound')) throw error;
      });
  }

  /** The clone's record, made `creating`; found so after a creation cut short, it is taken up again. */
  private async createRecord(namespace: string, record: VolumeRecord, quota?: StorageQuota): Promise<VolumeRecord> {
    try {
      return await this.deps.records.create(namespace, record, quota);
    } catch (error) {
      if (!isRingstoreError(error, 'volume.exists')) throw error;
      const { record: existing } = await this.deps.records.read(namespace, record.name, 'any');
      const same = existing.origin?.volumeId === record.origin!.volumeId && existing.origin.snapshot === record.origin!.snapshot;
      if (existing.state === 'creating' && same) return existing;
      throw error;
    }
  }
}
