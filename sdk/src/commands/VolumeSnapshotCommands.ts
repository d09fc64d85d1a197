// /v1/volumes/{volume}/snapshots: a volume's snapshots (docs/volumes.md, "Snapshots"): take, list, delete, and read
// a byte range of one as the volume was when it was taken. One request each: `Volume.readSnapshot` splits reads.

import { assertInteger } from '../encoding';
import { VOLUME_IO_BYTES_MAX } from '../limits';
import { type CommandContext, invalidInput, RingstoreCommand } from './command';
import { readJson, wire, type WireOf } from './response';
import { rangeBytes, type VolumeCommandInput, volumePath } from './VolumeCommands';

/**
 * Reader of a snapshot (`VolumeSnapshot` in the OpenAPI document).
 *
 * @example
 * ```ts
 * const snapshot: VolumeSnapshotInfo = readJson(response, volumeSnapshotWire);
 * ```
 */
export const volumeSnapshotWire = wire.object({
  name: wire.string,
  sizeBytes: wire.number,
  createdAt: wire.string,
  state: wire.literal('creating', 'ready', 'deleting'),
  clones: wire.optional(wire.array(wire.string)),
});

/**
 * A snapshot of a volume: its name, size (the volume's when taken), creation time, state (`creating` or
 * `deleting`: cut short; the same request again finishes it) and the volumes cloned from it.
 *
 * @example
 * ```ts
 * const [{ name, state }]: VolumeSnapshotInfo[] = (await client.describeVolume('disk')).snapshots;
 * ```
 */
export type VolumeSnapshotInfo = WireOf<typeof volumeSnapshotWire>;

/** What a volume's description tells of its snapshots: the bytes of the block copies they keep, and the snapshots. */
export const snapshotFields = { snapshotBytes: wire.number, snapshots: wire.array(volumeSnapshotWire) };

/**
 * Reader of a volume's snapshots (`VolumeSnapshotList` in the OpenAPI document).
 *
 * @example
 * ```ts
 * const { snapshots } = readJson(response, volumeSnapshotListWire);
 * ```
 */
export const volumeSnapshotListWire = wire.object({ snapshots: wire.array(volumeSnapshotWire) });

/**
 * Reader of a snapshot's deletion (`VolumeSnapshotDeletion` in the OpenAPI document).
 *
 * @example
 * ```ts
 * const { copiesDeleted }: VolumeSnapshotDeletion = readJson(response, volumeSnapshotDeletionWire);
 * ```
 */
export const volumeSnapshotDeletionWire = wire.object({ name: wire.string, copiesDeleted: wire.number });

/**
 * A snapshot's deletion: its name and the block copies only it read, now freed.
 *
 * @example
 * ```ts
 * const { copiesDeleted }: VolumeSnapshotDeletion = await client.volume('disk').deleteSnapshot('before-upgrade');
 * ```
 */
export type VolumeSnapshotDeletion = WireOf<typeof volumeSnapshotDeletionWire>;

/**
 * Input of the commands on one snapshot: the volume's name and the snapshot's.
 *
 * @example
 * ```ts
 * const input: VolumeSnapshotCommandInput = { volume: 'disk', snapshot: 'before-upgrade' };
 * ```
 */
export interface VolumeSnapshotCommandInput extends VolumeCommandInput {
  snapshot: string;
}

const json = { 'content-type': 'application/json' };

/** The path of a volume's snapshot, both names checked to be names and percent-encoded. */
function snapshotPath(volume: unknown, snapshot: unknown): string {
  if (typeof snapshot !== 'string' || snapshot === '') throw invalidInput('snapshot must be a snapshot name (a non-empty string)');
  return `${volumePath(volume)}/snapshots/${encodeURIComponent(snapshot)}`;
}

/**
 * Takes a snapshot (`POST /v1/volumes/{volume}/snapshots`): the volume at one instant, kept while it changes.
 * {@link ConflictError} `volume.snapshotExists` for a taken name, `volume.snapshotLimit` at 32. Sent again after a
 * failure, it finishes a creation cut short.
 *
 * @example
 * ```ts
 * const taken = await client.send(new CreateVolumeSnapshotCommand({ volume: 'disk', snapshot: 'before-upgrade' }));
 * ```
 */
export class CreateVolumeSnapshotCommand extends RingstoreCommand<VolumeSnapshotCommandInput, VolumeSnapshotInfo> {
  override async execute({ transport, signal }: CommandContext): Promise<VolumeSnapshotInfo> {
    const { volume, snapshot } = this.input;
    snapshotPath(volume, snapshot);
    const path = `${volumePath(volume)}/snapshots`;
    const body = JSON.stringify({ name: snapshot });
    return readJson(await transport.send({ method: 'POST', path, headers: json, body, authenticated: true }, signal), volumeSnapshotWire);
  }
}

/**
 * Lists a volume's snapshots, oldest first (`GET /v1/volumes/{volume}/snapshots`).
 *
 * @example
 * ```ts
 * const snapshots = await client.send(new ListVolumeSnapshotsCommand({ volume: 'disk' }));
 * ```
 */
export class ListVolumeSnapshotsCommand extends RingstoreCommand<VolumeCommandInput, VolumeSnapshotInfo[]> {
  override async execute({ transport, signal }: CommandContext): Promise<VolumeSnapshotInfo[]> {
    const path = `${volumePath(this.input.volume)}/snapshots`;
    return readJson(await transport.send({ method: 'GET', path, authenticated: true }, signal), volumeSnapshotListWire).snapshots;
  }
}

/**
 * Deletes a snapshot with the block copies only it read (`DELETE /v1/volumes/{volume}/snapshots/{snapshot}`);
 * {@link NotFoundError} `volume.snapshotNotFound` when there is none. Sent again, it finishes a deletion cut short.
 *
 * @example
 * ```ts
 * await client.send(new DeleteVolumeSnapshotCommand({ volume: 'disk', snapshot: 'before-upgrade' }));
 * ```
 */
export class DeleteVolumeSnapshotCommand extends RingstoreCommand<VolumeSnapshotCommandInput, VolumeSnapshotDeletion> {
  override async execute({ transport, signal }: CommandContext): Promise<VolumeSnapshotDeletion> {
    const path = snapshotPath(this.input.volume, this.input.snapshot);
    return readJson(await transport.send({ method: 'DELETE', path, authenticated: true }, signal), volumeSnapshotDeletionWire);
  }
}

/**
 * Input of {@link ReadVolumeSnapshotCommand}: `length` bytes (0 to {@link VOLUME_IO_BYTES_MAX}) at byte `offset`.
 *
 * @example
 * ```ts
 * const input: ReadVolumeSnapshotCommandInput = { volume: 'disk', snapshot: 'before-upgrade', offset: 0, length: 4096 };
 * ```
 */
export interface ReadVolumeSnapshotCommandInput extends VolumeSnapshotCommandInput {
  offset: number;
  length: number;
}

/**
 * Reads `length` bytes at `offset` of a snapshot (`GET /v1/volumes/{volume}/snapshots/{snapshot}/data` with a
 * Range): the volume's bytes when it was taken. A range past the snapshot's end answers the bytes up to it; one that
 * starts past it is refused (416).
 *
 * @example
 * ```ts
 * const head = await client.send(new ReadVolumeSnapshotCommand({ volume: 'disk', snapshot: 'before-upgrade', offset: 0, length: 4096 }));
 * ```
 */
export class ReadVolumeSnapshotCommand extends RingstoreCommand<ReadVolumeSnapshotCommandInput, Uint8Array> {
  override async execute({ transport, signal }: CommandContext): Promise<Uint8Array> {
    const { volume, snapshot, offset, length } = this.input;
    const path = `${snapshotPath(volume, snapshot)}/data`;
    assertInteger('offset', offset, 0);
    assertInteger('length', length, 0, VOLUME_IO_BYTES_MAX);
    if (length === 0) return new Uint8Array(0);
    const headers = { range: `bytes=${offset}-${offset + length - 1}` };
    return rangeBytes(await transport.send({ method: 'GET', path, headers, authenticated: true }, signal), offset, length);
  }
}
