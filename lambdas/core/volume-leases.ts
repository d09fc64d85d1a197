// One writer at a time (docs/volumes.md, "One writer"): attaching a volume takes a lease with a new epoch and
// writes that epoch into the fence of every placement group before it answers; every write carries its epoch and
// checks, inside its own transaction, that the fences of the groups it touches still hold it. A writer taken over
// can therefore land nothing once the new writer's attach has answered, whatever clocks say: the lease's expiry
// only decides when another writer may take over, never whether a write lands. The fences hold the volume's
// snapshot generation the same way (volume-snapshots.ts): a write of a record read before a snapshot's creation
// or deletion lands nowhere the fences have taken the new generation.
import { forAllBounded } from './bounded';
import { RingstoreError, isRingstoreError } from './errors';
import type { KvService } from './kv';
import type { TxnOp } from './txn-plan';
import { type BlockGeometry, fenceKey, groupCount, volumeNamespaceOf } from './volume-layout';
import type { VolumeLease, VolumeRecord, VolumeRecords } from './volume-records';
import type { Clock } from '../ports';

export interface VolumeLeaseLimits extends BlockGeometry {
  leaseSecondsDefault: number;
  leaseSecondsMax: number;
  /** Fences written at once by an attach. */
  fenceConcurrency: number;
}

export interface VolumeLeasesDeps {
  kv: Pick<KvService, 'get' | 'put'>;
  records: VolumeRecords;
  clock: Pick<Clock, 'nowMs'>;
  limits: VolumeLeaseLimits;
}

/** A fence as read: the epoch and generation it holds and its version, which a write's check names. */
interface Fence {
  epoch: number;
  generation: number;
  version: number;
}

/** What a fence is raised to: neither number is ever lowered. */
export interface FenceTarget {
  epoch: number;
  generation: number;
}

/**
 * A write's record is older than a fence's generation (a snapshot was created or deleted since it was read): the
 * write reads the record again and decides its copies anew (volumes.ts). Never reaches a client.
 */
export class GenerationMoved extends Error {
  constructor(readonly volume: string) {
    super(`volume ${volume} took a new snapshot generation during the write`);
  }
}

/** A fence's value: its epoch and generation (a fence written before snapshots existed holds none: 0). */
export function parseFence(value: Uint8Array): FenceTarget {
  const { epoch, generation = 0 } = JSON.parse(Buffer.from(value).toString('utf8')) as { epoch: number; generation?: number };
  return { epoch, generation };
}

/** A record's snapshot generation (absent: 0). */
export const generationOf = (record: VolumeRecord): number => record.generation ?? 0;

const fenceContentType = 'application/json';
/** Tries of an attach whose record another attach changed in between. */
const attachAttemptsMax = 5;

export class VolumeLeases {
  /** The fences this instance read, by keyspace and key: a write checks the version it knows without reading it. */
  private readonly known = new Map<string, Fence>();

  constructor(private readonly deps: VolumeLeasesDeps) {}

  /**
   * Attaches `holder` for writing: renews its own live lease, refuses one another holder still holds
   * (`volume.leaseHeld`, naming it), else takes a new epoch and fences every placement group with it before
   * answering.
   */
  async attach(namespace: string, name: string, input: { holder: string; leaseSeconds?: number }): Promise<VolumeLease> {
    const leaseMs = this.leaseMs(input.leaseSeconds);
    validateHolder(input.holder);
    for (let attempt = 1; ; attempt += 1) {
      const { record, version } = await this.deps.records.read(namespace, name);
      const nowMs = this.deps.clock.nowMs();
      const held = record.lease && record.lease.expiresAtMs > nowMs ? record.lease : undefined;
      if (held && held.holder !== input.holder) {
        throw new RingstoreError('volume.leaseHeld', `volume ${name} is attached to ${held.holder} until ${iso(held.expiresAtMs)}`, {
          details: { holder: held.holder, expiresAt: iso(held.expiresAtMs) },
        });
      }
      // The holder's own live lease at the current epoch is renewed; anything else takes a new epoch.
      const renewing = held !== undefined && held.epoch === record.epoch;
      const epoch = renewing ? record.epoch : record.epoch + 1;
      const lease: VolumeLease = { holder: input.holder, epoch, expiresAtMs: nowMs + leaseMs };
      try {
        await this.deps.records.update(namespace, { ...record, epoch, lease }, version);
      } catch (error) {
        if (isRingstoreError(error, 'kv.preconditionFailed') && attempt < attachAttemptsMax) continue;
        throw error;
      }
      if (!renewing) await this.fenceAll(namespace, record, epoch);
      return lease;
    }
  }

  /** Ends the lease of `epoch`: the volume can then be attached by another holder at once. */
  async detach(namespace: string, name: string, epoch: number): Promise<void> {
    const { record, version } = await this.deps.records.read(namespace, name);
    if (record.lease?.epoch !== epoch) throw fenced(record, epoch);
    const { lease: _ended, ...detached } = record;
    await this.deps.records.update(namespace, detached, version);
  }

  /**
   * Raises every placement group's fence to `epoch` (never lowers one): after it, a write of an older epoch lands
   * nowhere. Idempotent; a volume's delete runs it too, so a writer cannot land a block the delete has passed.
   */
  async fenceAll(namespace: string, record: VolumeRecord, epoch: number): Promise<void> {
    await this.fenceGroups(namespace, record, epoch, 0, groupCount(record.sizeBytes, this.deps.limits));
  }

  /**
   * Raises the fences of groups [from, to) to `epoch` and the record's generation: a grown volume's new groups take
   * its writer's writes.
   */
  async fenceGroups(namespace: string, record: VolumeRecord, epoch: number, from: number, to: number): Promise<void> {
    const groups = Array.from({ length: Math.max(0, to - from) }, (_, index) => from + index);
    const target = { epoch, generation: generationOf(record) };
    await forAllBounded(groups, this.deps.limits.fenceConcurrency, (group) => this.raiseFence(namespace, record.id, group, target));
  }

  /**
   * The checks a write of `epoch` adds to its transaction: each group's fence at the version that holds `epoch` and
   * the record's generation. `volume.fenced` when a fence holds a later epoch; a fence still at an older generation
   * (a snapshot's creation cut short before it reached it) is raised first; {@link GenerationMoved} when a fence
   * holds a later generation than the record.
   */
  async checks(namespace: string, record: VolumeRecord, epoch: number, groups: readonly number[]): Promise<TxnOp[]> {
    if (record.epoch !== epoch) throw fenced(record, epoch);
    const generation = generationOf(record);
    return Promise.all(
      groups.map(async (group) => {
        const key = fenceKey(record.id, group);
        let fence = await this.fenceOf(namespace, key, epoch, generation);
        if (fence.epoch === epoch && fence.generation < generation) {
          await this.raiseFence(namespace, record.id, group, { epoch, generation });
          this.refused(namespace, key);
          fence = await this.fenceOf(namespace, key, epoch, generation);
        }
        if (fence.epoch !== epoch) throw fenced(record, epoch, fence.epoch);
        if (fence.generation !== generation) throw new GenerationMoved(record.name);
        return { op: 'check' as const, key, ifVersion: fence.version };
      }),
    );
  }

  /** A write's check of `key` failed: forget the version known, so the next try reads the fence again. */
  refused(namespace: string, key: string): void {
    this.known.delete(knownKey(namespace, key));
  }

  private async fenceOf(namespace: string, key: string, epoch: number, generation: number): Promise<Fence> {
    const cacheKey = knownKey(namespace, key);
    const known = this.known.get(cacheKey);
    if (known?.epoch === epoch && known.generation === generation) return known;
    const read = await this.readFence(namespace, key);
    const fence = read ?? { epoch: 0, generation: 0, version: 0 };
    this.known.set(cacheKey, fence);
    return fence;
  }

  private async raiseFence(namespace: string, volumeId: string, group: number, target: FenceTarget): Promise<void> {
    const key = fenceKey(volumeId, group);
    for (;;) {
      const current = await this.readFence(namespace, key);
      if (current && current.epoch >= target.epoch && current.generation >= target.generation) return;
      const raised: FenceTarget = {
        epoch: Math.max(target.epoch, current?.epoch ?? 0),
        generation: Math.max(target.generation, current?.generation ?? 0),
      };
      try {
        await this.deps.kv.put(volumeNamespaceOf(namespace), key, {
          value: new Uint8Array(Buffer.from(JSON.stringify(raised), 'utf8')),
          contentType: fenceContentType,
          consistency: 'strong',
          ...(current ? { ifMatch: [current.version] } : { ifNoneMatch: '*' as const }),
        });
        return;
      } catch (error) {
        // Another attach raised it in between: read it again.
        if (!isRingstoreError(error, 'kv.preconditionFailed')) throw error;
      }
    }
  }

  private async readFence(namespace: string, key: string): Promise<Fence | undefined> {
    try {
      const read = await this.deps.kv.get(volumeNamespaceOf(namespace), key, 'strong');
      if (read.kind !== 'value') return undefined;
      return { ...parseFence(read.value), version: read.item.version };
    } catch (error) {
      if (isRingstoreError(error, 'kv.notFound')) return undefined;
      throw error;
    }
  }

  private leaseMs(leaseSeconds: number | undefined): number {
    const { leaseSecondsDefault, leaseSecondsMax } = this.deps.limits;
    const seconds = leaseSeconds ?? leaseSecondsDefault;
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > leaseSecondsMax) {
      throw new RingstoreError('request.invalid', `leaseSeconds must be an integer from 1 to ${leaseSecondsMax}`, {
        details: { field: 'leaseSeconds' },
      });
    }
    return seconds * 1000;
  }
}

/** A write or detach whose epoch is no longer the volume's: another writer took it over (or the volume is being deleted). */
export function fenced(record: VolumeRecord, epoch: number, fenceEpoch?: number): RingstoreError {
  const current = Math.max(record.epoch, fenceEpoch ?? 0);
  const why = record.state === 'deleting' ? 'the volume is being deleted' : `its writer epoch is ${current} now (attach again to write)`;
  return new RingstoreError('volume.fenced', `epoch ${epoch} may no longer write volume ${record.name}: ${why}`, {
    details: { epoch, currentEpoch: current },
  });
}

function validateHolder(holder: string): void {
  if (holder.length < 1 || holder.length > 128) {
    throw new RingstoreError('request.invalid', 'holder must be 1 to 128 characters: who attaches (a host, a process)', {
      details: { field: 'holder' },
    });
  }
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Where a fence's known version is kept: its keyspace and key. */
const knownKey = (namespace: string, key: string) => `${volumeNamespaceOf(namespace)}\u0000${key}`;
