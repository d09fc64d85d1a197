// A volume's record (docs/volumes.md): its size, the id that names its blocks, its state and its writer's lease,
// kept as one key of the namespace's volume keyspace and read and written strongly, each change conditioned on
// the version read.
import type { KvService } from './kv';
import type { PutInput } from './kv-writes';
import type { StorageChargeRule, StorageQuota } from '../ports';
import { RingstoreError, isRingstoreError } from './errors';
import { volumeEpochFloorKey, volumeNamespaceOf, volumeRecordKey } from './volume-layout';
import { volumeNamePattern } from '../../schemas/topology';

/** The writer a volume is attached to (docs/volumes.md, "One writer"). */
export interface VolumeLease {
  holder: string;
  epoch: number;
  expiresAtMs: number;
}

export interface VolumeRecord {
  name: string;
  /** Names the blocks: a volume deleted and created again under its name starts empty. */
  id: string;
  sizeBytes: number;
  blockBytes: number;
  createdAtMs: number;
  /**
   * `creating`: a clone not yet listed by its origin's snapshot (volume-clones.ts); `deleting`: its blocks are being
   * removed. Either takes no reads or writes.
   */
  state: 'creating' | 'active' | 'deleting';
  /**
   * The writer epoch every placement group's fence holds (0, or the last epoch of a deleted volume of the same name:
   * never attached): a write carries it, and is refused wherever a fence holds a later one.
   */
  epoch: number;
  /** The attached writer, if any (it may have expired). */
  lease?: VolumeLease;
  /**
   * Raised by every snapshot's creation and deletion (absent: 0), and held by every placement group's fence: a
   * write of a record read before it is refused where the fences hold the new one (volume-snapshots.ts).
   */
  generation?: number;
  /** The volume's snapshots, oldest first (absent: none). */
  snapshots?: VolumeSnapshot[];
  /** A clone's origin (volume-clones.ts): what its blocks it never wrote read as. */
  origin?: VolumeOrigin;
}

/** The snapshot a clone was made from, and how many of its first bytes the clone inherits from it. */
export interface VolumeOrigin {
  volume: string;
  /** The origin volume's id: a volume of the same name made later is not it. */
  volumeId: string;
  snapshot: string;
  /** Bytes below which a block the clone never wrote reads as the snapshot holds it (a shrink lowers it). */
  sizeBytes: number;
}

/**
 * Whether block `block` of `record`, with no item of its own, reads its origin's bytes (a clone's block below the bytes
 * it inherits): an empty item must then stay to hide them, where a plain volume's block may go.
 */
export function inheritsBlock(record: VolumeRecord, block: number): boolean {
  return block * record.blockBytes < (record.origin?.sizeBytes ?? 0);
}

/** A clone a snapshot keeps alive: its name and id (a volume of the same name made later is not it). */
export interface VolumeCloneRef {
  volume: string;
  id: string;
}

/** A snapshot of a volume: its bytes as they were when the volume's generation left `generation`. */
export interface VolumeSnapshot {
  name: string;
  generation: number;
  /** The volume's size when it was taken. */
  sizeBytes: number;
  createdAtMs: number;
  /** `creating` and `deleting`: cut short by a crash; the same request again finishes it. */
  state: 'creating' | 'ready' | 'deleting';
  /** Of a clone's snapshot: the bytes the clone inherited from its origin when it was taken. */
  originBytes?: number;
  /** The volumes cloned from it (absent: none): it cannot be deleted while one lives. */
  clones?: VolumeCloneRef[];
}

/** A record as read, with the version a change of it is conditioned on. */
export interface ReadRecord {
  record: VolumeRecord;
  version: number;
}

const recordContentType = 'application/json';
/** Tries of a record change that an attach, a write's lease change or another change raced. */
const changeAttemptsMax = 5;

const parseRecord = (value: Uint8Array): VolumeRecord => JSON.parse(Buffer.from(value).toString('utf8')) as VolumeRecord;

/**
 * A volume counts against its namespace's storage quota for its whole size, written or not, from its creation until
 * its delete has removed it (docs/volumes.md, "Quotas"): its record's writes are charged that size, in the same
 * transaction as the record, so a create or grow past the quota changes nothing.
 */
function sizeCharge(namespace: string): StorageChargeRule {
  return { namespace, bytesOf: (value) => (value ? parseRecord(value).sizeBytes : 0) };
}

/** The write settings that charge a record's change to the namespace's quota (none without a quota). */
function charged(namespace: string, quota: StorageQuota | undefined) {
  return quota ? { storageQuota: quota, storageCharge: sizeCharge(namespace) } : {};
}

export class VolumeRecords {
  constructor(private readonly kv: Pick<KvService, 'get' | 'put' | 'delete'>) {}

  /** The volume's record read strongly; `active`: refused while it is being deleted. */
  async read(namespace: string, name: string, want: 'active' | 'any' = 'active'): Promise<ReadRecord> {
    validateVolumeName(name);
    let read;
    try {
      read = await this.kv.get(volumeNamespaceOf(namespace), volumeRecordKey(name), 'strong');
    } catch (error) {
      if (isRingstoreError(error, 'kv.notFound')) {
        throw new RingstoreError('volume.notFound', `no volume named ${name}`, { details: { name } });
      }
      throw error;
    }
    if (read.kind !== 'value') throw new RingstoreError('internal', `the record of volume ${name} is not inline`);
    const record = parseRecord(read.value);
    if (want === 'active' && record.state === 'deleting') {
      throw new RingstoreError('volume.deleting', `volume ${name} is being deleted: DELETE it again to finish`, { details: { name } });
    }
    if (want === 'active' && record.state === 'creating') {
      const from = record.origin ? ` from ${record.origin.volume}@${record.origin.snapshot}` : '';
      throw new RingstoreError('volume.creating', `volume ${name} is being cloned${from}: POST it again to finish, or DELETE it`, {
        details: { name },
      });
    }
    return { record, version: read.item.version };
  }

  /**
   * Applies `change` to the record read (undefined: nothing to change), conditioned on the version read; tried again
   * when an attach or another change won the race. The record as it ends up.
   */
  async change(
    namespace: string,
    name: string,
    change: (record: VolumeRecord) => VolumeRecord | undefined,
    want: 'active' | 'any' = 'active',
  ): Promise<{ record: VolumeRecord }> {
    for (let attempt = 1; ; attempt += 1) {
      const { record, version } = await this.read(namespace, name, want);
      const next = change(record);
      if (!next) return { record };
      try {
        await this.update(namespace, next, version);
        return { record: next };
      } catch (error) {
        if (!isRingstoreError(error, 'kv.preconditionFailed') || attempt >= changeAttemptsMax) throw error;
      }
    }
  }

  /**
   * Creates the record, its size charged to `quota` when the namespace has one; its epoch starts where a deleted
   * volume of the same name left off. Answers the record created.
   */
  async create(namespace: string, record: VolumeRecord, quota?: StorageQuota): Promise<VolumeRecord> {
    const created = { ...record, epoch: Math.max(record.epoch, await this.epochFloor(namespace, record.name)) };
    try {
      await this.write(namespace, created, { ifNoneMatch: '*', ...charged(namespace, quota) });
    } catch (error) {
      if (isRingstoreError(error, 'kv.preconditionFailed')) {
        throw new RingstoreError('volume.exists', `a volume named ${record.name} exists already`, { details: { name: record.name } });
      }
      throw error;
    }
    return created;
  }

  /**
   * Replaces the record read at `version`; `kv.preconditionFailed` when it changed since. Answers the new version.
   * A change of size passes the namespace's `quota` (a grow past it is refused, a shrink frees room).
   */
  async update(namespace: string, record: VolumeRecord, version: number, quota?: StorageQuota): Promise<number> {
    return this.write(namespace, record, { ifMatch: [version], ...charged(namespace, quota) });
  }

  /**
   * Removes the record, freeing its size in the namespace's `quota`, after keeping `lastEpoch` (the deleted volume's)
   * as where a volume made again under the name starts.
   */
  async delete(namespace: string, name: string, lastEpoch: number, quota?: StorageQuota): Promise<void> {
    if (lastEpoch > (await this.epochFloor(namespace, name))) {
      await this.kv.put(volumeNamespaceOf(namespace), volumeEpochFloorKey(name), {
        value: new Uint8Array(Buffer.from(String(lastEpoch), 'utf8')),
        contentType: 'text/plain',
        consistency: 'strong',
      });
    }
    const settings = { consistency: 'strong' as const, ...charged(namespace, quota) };
    await this.kv.delete(volumeNamespaceOf(namespace), volumeRecordKey(name), settings).catch((error: unknown) => {
      // Another delete of it finished first.
      if (!isRingstoreError(error, 'kv.notFound')) throw error;
    });
  }

  /** The last epoch a deleted volume of this name was written with (0: none). */
  private async epochFloor(namespace: string, name: string): Promise<number> {
    try {
      const read = await this.kv.get(volumeNamespaceOf(namespace), volumeEpochFloorKey(name), 'strong');
      return read.kind === 'value' ? Number(Buffer.from(read.value).toString('utf8')) || 0 : 0;
    } catch (error) {
      if (isRingstoreError(error, 'kv.notFound')) return 0;
      throw error;
    }
  }

  private async write(
    namespace: string,
    record: VolumeRecord,
    settings: ({ ifNoneMatch: '*' } | { ifMatch: number[] }) & Pick<PutInput, 'storageQuota' | 'storageCharge'>,
  ): Promise<number> {
    const ack = await this.kv.put(volumeNamespaceOf(namespace), volumeRecordKey(record.name), {
      value: new Uint8Array(Buffer.from(JSON.stringify(record), 'utf8')),
      contentType: recordContentType,
      consistency: 'strong',
      ...settings,
    });
    return ack.version;
  }
}

export function validateVolumeName(name: string): void {
  if (!volumeNamePattern.test(name)) {
    throw new RingstoreError('volume.nameInvalid', `a volume name must match ${volumeNamePattern}`, {
      details: { field: 'name', pattern: volumeNamePattern.source },
    });
  }
}
