// /v1/volumes/{volume}/snapshots: a volume's snapshots (docs/volumes.md, "Snapshots"), as the volume's description
// lists them.

import { wire, type WireOf } from './response';

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
});

/**
 * A snapshot of a volume: its name, size (the volume's when taken), creation time and state (`creating` or
 * `deleting`: cut short; the same request again finishes it).
 *
 * @example
 * ```ts
 * const [{ name, state }]: VolumeSnapshotInfo[] = (await client.describeVolume('disk')).snapshots;
 * ```
 */
export type VolumeSnapshotInfo = WireOf<typeof volumeSnapshotWire>;

/** What a volume's description tells of its snapshots: the bytes of the block copies they keep, and the snapshots. */
export const snapshotFields = { snapshotBytes: wire.number, snapshots: wire.array(volumeSnapshotWire) };
