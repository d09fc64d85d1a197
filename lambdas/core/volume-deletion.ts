// A volume's deletion (docs/volumes.md): resumable, a budget of keys per request. The record is marked `deleting`
// first with a new epoch (no read or write is served from then on, and the fences stop a writer in flight), the
// blocks, copies and fences go next, the record last, so a delete cut short is never forgotten. A volume whose
// snapshots live clones read is refused (volume-clones.ts); a deleted clone leaves its origin's list last.
import { forAllBounded } from './bounded';
import { isRingstoreError } from './errors';
import type { KvService } from './kv';
import { blockKeyPrefix, volumeKeyKind, volumeNamespaceOf } from './volume-layout';
import type { VolumeClones } from './volume-clones';
import type { VolumeLeases } from './volume-leases';
import type { VolumeRecord, VolumeRecords } from './volume-records';
import { hasClones } from './volume-snapshots';
import type { StorageQuota } from '../ports';

export interface VolumeDeletion {
  name: string;
  status: 'deleted' | 'deleting';
  /** Blocks this request removed. */
  blocksDeleted: number;
}

export interface VolumeDeletionsDeps {
  kv: Pick<KvService, 'list' | 'delete'>;
  records: VolumeRecords;
  leases: Pick<VolumeLeases, 'fenceAll'>;
  clones: Pick<VolumeClones, 'gone' | 'unlist'>;
  limits: { deleteBlocksPerRequest: number };
}

/** Block keys listed per page (the listing's maximum). */
const listPageBlocks = 1_000;
/** Keys a delete removes at once. */
const deleteConcurrency = 16;

/** The clones a volume's snapshots list. */
const clonesOf = (record: VolumeRecord) => (record.snapshots ?? []).flatMap((snapshot) => snapshot.clones ?? []);

export class VolumeDeletions {
  constructor(private readonly deps: VolumeDeletionsDeps) {}

  /**
   * Deletes a volume with its blocks: marks it deleting (no read or write is served from then on), removes up to
   * `deleteBlocksPerRequest` blocks, and answers `deleting` while some remain; called again, it goes on where it
   * stopped. The record goes last, so a delete cut short is never forgotten.
   */
  async delete(namespace: string, name: string, quota?: StorageQuota): Promise<VolumeDeletion> {
    const keyspace = volumeNamespaceOf(namespace);
    let { record } = await this.deps.records.read(namespace, name, 'any');
    if (record.state !== 'deleting') {
      const gone = await this.deps.clones.gone(namespace, clonesOf(record));
      ({ record } = await this.deps.records.change(
        namespace,
        name,
        (current) => {
          if (current.state === 'deleting') return undefined;
          // A clone listed since the read above is not among the gone: refused, as a live one is.
          const live = clonesOf(current).filter((clone) => !gone.has(clone.id));
          if (live.length > 0) throw hasClones(`volume ${name}`, live);
          // A new epoch with no lease: the writer's next write is refused, and the fences below stop one in flight.
          const deleting: VolumeRecord = { ...current, state: 'deleting', epoch: current.epoch + 1 };
          delete deleting.lease;
          return deleting;
        },
        'any',
      ));
    }
    // Again on every call (idempotent): a delete cut short while fencing finishes it before removing blocks.
    if (record.epoch > 1) await this.deps.leases.fenceAll(namespace, record, record.epoch);
    let blocksDeleted = 0;
    // Blocks and the placement groups' fences, against the request's budget.
    let keysDeleted = 0;
    for (;;) {
      const budget = this.deps.limits.deleteBlocksPerRequest - keysDeleted;
      if (budget <= 0) return { name, status: 'deleting', blocksDeleted };
      const page = await this.deps.kv.list(keyspace, { prefix: blockKeyPrefix(record.id), limit: Math.min(listPageBlocks, budget) });
      if (page.items.length === 0) break;
      await forAllBounded(page.items, deleteConcurrency, async (item) => {
        await this.deps.kv.delete(keyspace, item.key, { consistency: 'strong' }).catch((error: unknown) => {
          // Trimmed meanwhile: nothing left to delete.
          if (!isRingstoreError(error, 'kv.notFound')) throw error;
        });
        if (volumeKeyKind(item.key)?.kind === 'block') blocksDeleted += 1;
        keysDeleted += 1;
      });
    }
    await this.deps.records.delete(namespace, name, record.epoch, quota);
    await this.deps.clones.unlist(namespace, record);
    return { name, status: 'deleted', blocksDeleted };
  }
}
