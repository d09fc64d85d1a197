// A volume's resize (docs/volumes.md, "Resize"): growing raises the new placement groups' fences to the writer's
// epoch before the record takes the new size, so the attached writer may write there at once; shrinking is for a
// volume no live lease holds: it takes a new epoch (fencing out a writer whose lease ran out), then refuses if any
// written block lies past the new end, so a later grow never brings old bytes back (a clone's inherited bytes count as
// written: trim them first).
import { RingstoreError, isRingstoreError } from './errors';
import { groupCount, groupOf } from './volume-layout';
import type { VolumeLeaseLimits, VolumeLeases } from './volume-leases';
import type { VolumeRecord, VolumeRecords } from './volume-records';
import type { VolumeViews } from './volume-views';
import type { Clock, StorageQuota } from '../ports';

export interface VolumeResizeDeps {
  records: VolumeRecords;
  views: Pick<VolumeViews, 'dataBlocksOfGroup'>;
  leases: VolumeLeases;
  clock: Pick<Clock, 'nowMs'>;
  limits: VolumeLeaseLimits;
}

/** Tries of a resize whose record an attach or another resize changed in between. */
const resizeAttemptsMax = 5;

export class VolumeResize {
  constructor(private readonly deps: VolumeResizeDeps) {}

  /** Resizes the volume to `sizeBytes` (validated by the caller); its record as it ends up. */
  async resize(namespace: string, name: string, sizeBytes: number, quota?: StorageQuota): Promise<VolumeRecord> {
    const { records, leases, limits } = this.deps;
    for (let attempt = 1; ; attempt += 1) {
      const { record, version } = await records.read(namespace, name);
      if (sizeBytes === record.sizeBytes) return record;
      let resized: { record: VolumeRecord; version: number };
      try {
        if (sizeBytes > record.sizeBytes) {
          const groups = [groupCount(record.sizeBytes, limits), groupCount(sizeBytes, limits)] as const;
          if (record.epoch > 0) await leases.fenceGroups(namespace, record, record.epoch, ...groups);
          resized = { record: { ...record, sizeBytes }, version };
        } else {
          resized = await this.shrink(namespace, record, version, sizeBytes);
        }
        await records.update(namespace, resized.record, resized.version, quota);
        return resized.record;
      } catch (error) {
        if (!isRingstoreError(error, 'kv.preconditionFailed') || attempt >= resizeAttemptsMax) throw error;
      }
    }
  }

  /** Fences the writer out, then checks no block lies past the new end: the record to write. */
  private async shrink(
    namespace: string,
    record: VolumeRecord,
    version: number,
    sizeBytes: number,
  ): Promise<{ record: VolumeRecord; version: number }> {
    const lease = record.lease;
    if (lease && lease.expiresAtMs > this.deps.clock.nowMs()) {
      throw new RingstoreError('volume.leaseHeld', `volume ${record.name} is attached to ${lease.holder}: detach it to shrink it`, {
        details: { holder: lease.holder, expiresAt: new Date(lease.expiresAtMs).toISOString() },
      });
    }
    let fenced = { record, version };
    if (record.epoch > 0) {
      const next = { ...record, epoch: record.epoch + 1 };
      delete next.lease;
      fenced = { record: next, version: await this.deps.records.update(namespace, next, version) };
      await this.deps.leases.fenceAll(namespace, next, next.epoch);
    }
    const firstBlock = await this.firstBlockFrom(namespace, record, sizeBytes / record.blockBytes);
    if (firstBlock !== undefined) {
      throw new RingstoreError(
        'volume.shrinkBelowData',
        `volume ${record.name} holds data at byte ${firstBlock * record.blockBytes}, past ${sizeBytes}: trim it first`,
        { details: { sizeBytes, dataAtByte: firstBlock * record.blockBytes } },
      );
    }
    // A clone inherits no more than it holds: a grow later reads zeros past the new end, not its origin's bytes.
    const origin = fenced.record.origin
      ? { ...fenced.record.origin, sizeBytes: Math.min(fenced.record.origin.sizeBytes, sizeBytes) }
      : undefined;
    return { record: { ...fenced.record, sizeBytes, ...(origin ? { origin } : {}) }, version: fenced.version };
  }

  /** The first block at or after `block` (to the volume's end) that holds bytes, its own or inherited, if any. */
  private async firstBlockFrom(namespace: string, record: VolumeRecord, block: number): Promise<number | undefined> {
    const { limits, views } = this.deps;
    for (let group = groupOf(block, limits); group < groupCount(record.sizeBytes, limits); group += 1) {
      const held = await views.dataBlocksOfGroup(namespace, record, undefined, record.origin?.sizeBytes ?? 0, group);
      const past = [...held].filter((each) => each >= block);
      if (past.length > 0) return Math.min(...past);
    }
    return undefined;
  }
}
