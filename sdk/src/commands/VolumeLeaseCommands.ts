// /v1/volumes/{volume}/lease: attach and detach a volume's one writer (docs/volumes.md, "One writer"). The epoch an
// attach answers is what every write and trim of VolumeCommands.ts carries.

import { assertInteger } from '../encoding';
import { type CommandContext, invalidInput, RingstoreCommand } from './command';
import { readJson, wire, type WireOf } from './response';
import { json, type VolumeCommandInput, type VolumeLease, volumeLeaseWire, volumePath } from './VolumeCommands';

/**
 * Reader of a detach's answer (inline in the OpenAPI document).
 *
 * @example
 * ```ts
 * const { detached }: VolumeDetached = readJson(response, volumeDetachedWire);
 * ```
 */
export const volumeDetachedWire = wire.object({ name: wire.string, detached: wire.literal(true) });

/**
 * A detach's answer: the volume has no writer, another holder may attach at once.
 *
 * @example
 * ```ts
 * const done: VolumeDetached = await client.send(new DetachVolumeCommand({ volume: 'disk', epoch: 3 }));
 * ```
 */
export type VolumeDetached = WireOf<typeof volumeDetachedWire>;

/**
 * Input of {@link AttachVolumeCommand}.
 *
 * @example
 * ```ts
 * const input: AttachVolumeCommandInput = { volume: 'disk', holder: 'host-a', leaseSeconds: 60 };
 * ```
 */
export interface AttachVolumeCommandInput extends VolumeCommandInput {
  /** Who attaches (a host, a process; 1 to 128 characters): named to another holder refused. */
  holder: string;
  /** How long the lease lasts unrenewed: 1 to 300 seconds, default 30. */
  leaseSeconds?: number;
}

/**
 * Attaches the volume's one writer (`POST /v1/volumes/{volume}/lease`): answers its lease, whose epoch every write
 * and trim carries. Attaching again as the same holder renews it; another holder is refused while it is live
 * ({@link ConflictError} `volume.leaseHeld`, `details.holder`). Never repeated by the SDK except after a 429.
 *
 * @example
 * ```ts
 * const { epoch, expiresAt } = await client.send(new AttachVolumeCommand({ volume: 'disk', holder: 'host-a' }));
 * ```
 */
export class AttachVolumeCommand extends RingstoreCommand<AttachVolumeCommandInput, VolumeLease> {
  override async execute({ transport, signal }: CommandContext): Promise<VolumeLease> {
    const { volume, holder, leaseSeconds } = this.input;
    const path = `${volumePath(volume)}/lease`;
    if (typeof holder !== 'string' || holder === '') throw invalidInput('holder must be a non-empty string');
    if (leaseSeconds !== undefined) assertInteger('leaseSeconds', leaseSeconds, 1);
    const body = JSON.stringify({ holder, ...(leaseSeconds === undefined ? {} : { leaseSeconds }) });
    const response = await transport.send({ method: 'POST', path, headers: json, body, authenticated: true, idempotent: false }, signal);
    return readJson(response, volumeLeaseWire);
  }
}

/**
 * Input of {@link DetachVolumeCommand}: the epoch of the lease to end.
 *
 * @example
 * ```ts
 * const input: DetachVolumeCommandInput = { volume: 'disk', epoch: 3 };
 * ```
 */
export interface DetachVolumeCommandInput extends VolumeCommandInput {
  epoch: number;
}

/**
 * Detaches the writer of `epoch` (`DELETE /v1/volumes/{volume}/lease?epoch=`): another holder may attach at once.
 * {@link ConflictError} `volume.fenced` when that writer was taken over. Never repeated by the SDK except after a 429.
 *
 * @example
 * ```ts
 * await client.send(new DetachVolumeCommand({ volume: 'disk', epoch }));
 * ```
 */
export class DetachVolumeCommand extends RingstoreCommand<DetachVolumeCommandInput, VolumeDetached> {
  override async execute({ transport, signal }: CommandContext): Promise<VolumeDetached> {
    const { volume, epoch } = this.input;
    const path = `${volumePath(volume)}/lease`;
    assertInteger('epoch', epoch, 1);
    const response = await transport.send({ method: 'DELETE', path, query: { epoch }, authenticated: true, idempotent: false }, signal);
    return readJson(response, volumeDetachedWire);
  }
}
