// /v1/volumes: block volumes (docs/volumes.md): create, list, describe, delete; read a byte range (one HTTP Range),
// write or trim one with the writer's epoch; attach and detach the one writer. One request each, of at most
// VOLUME_IO_BYTES_MAX bytes: the `Volume` handle of `client.volume(name)` (volume.ts) splits larger ones.

import { assertInteger } from '../encoding';
import { LIST_LIMIT_MAX, VOLUME_BLOCK_BYTES, VOLUME_IO_BYTES_MAX } from '../limits';
import type { HttpResponse } from '../transport';
import { type CommandContext, invalidInput, RingstoreCommand } from './command';
import { invalidResponse, readJson, wire, type WireOf } from './response';
import { snapshotFields } from './VolumeSnapshotCommands';

/**
 * Reader of a writer's lease (`VolumeLease` in the OpenAPI document).
 *
 * @example
 * ```ts
 * const lease: VolumeLease = readJson(response, volumeLeaseWire);
 * ```
 */
export const volumeLeaseWire = wire.object({ holder: wire.string, epoch: wire.number, expiresAt: wire.string });

/**
 * A writer's lease: who holds it, the epoch every write and trim carries, and when another holder may take over.
 *
 * @example
 * ```ts
 * const { epoch, expiresAt }: VolumeLease = await client.send(new AttachVolumeCommand({ volume: 'disk', holder: 'host-a' }));
 * ```
 */
export type VolumeLease = WireOf<typeof volumeLeaseWire>;

const volumeFields = {
  name: wire.string,
  sizeBytes: wire.number,
  blockBytes: wire.number,
  createdAt: wire.string,
  state: wire.literal('creating', 'active', 'deleting'),
  epoch: wire.number,
  lease: wire.optional(volumeLeaseWire),
  origin: wire.optional(wire.object({ volume: wire.string, snapshot: wire.string, sizeBytes: wire.number })),
};

/**
 * Reader of a volume (`Volume` in the OpenAPI document), as create and list answer it.
 *
 * @example
 * ```ts
 * const created: VolumeInfo = readJson(response, volumeWire);
 * ```
 */
export const volumeWire = wire.object(volumeFields);

/**
 * A volume: its name, size, block size, creation time, state (`deleting` once its delete began), the current
 * writer epoch (0: never attached) and the last writer's lease (it may have expired).
 *
 * @example
 * ```ts
 * const { name, sizeBytes, state }: VolumeInfo = await client.createVolume('disk', 1024 ** 3);
 * ```
 */
export type VolumeInfo = WireOf<typeof volumeWire>;

/**
 * Reader of a described volume (`VolumeDescription` in the OpenAPI document).
 *
 * @example
 * ```ts
 * const described: VolumeDescription = readJson(response, volumeDescriptionWire);
 * ```
 */
export const volumeDescriptionWire = wire.object({ ...volumeFields, allocatedBytes: wire.number, ...snapshotFields });

/**
 * A volume with `allocatedBytes` (written blocks), `snapshotBytes` (copies its snapshots keep) and its snapshots.
 *
 * @example
 * ```ts
 * const { allocatedBytes, sizeBytes }: VolumeDescription = await client.describeVolume('disk');
 * ```
 */
export type VolumeDescription = WireOf<typeof volumeDescriptionWire>;

/**
 * Reader of a page of volumes (`VolumeList` in the OpenAPI document).
 *
 * @example
 * ```ts
 * const page: VolumeList = readJson(response, volumeListWire);
 * ```
 */
export const volumeListWire = wire.object({ volumes: wire.array(volumeWire), cursor: wire.optional(wire.string) });

/**
 * One page of a namespace's volumes, in name order; `cursor` is absent on the last page.
 *
 * @example
 * ```ts
 * const { volumes, cursor }: VolumeList = await client.listVolumes({ limit: 50 });
 * ```
 */
export type VolumeList = WireOf<typeof volumeListWire>;

/**
 * Reader of a delete's answer (`VolumeDeletion` in the OpenAPI document).
 *
 * @example
 * ```ts
 * const step: VolumeDeletion = readJson(response, volumeDeletionWire);
 * ```
 */
export const volumeDeletionWire = wire.object({
  name: wire.string,
  status: wire.literal('deleted', 'deleting'),
  blocksDeleted: wire.number,
});

/**
 * What one delete request did: `deleted` (the name is free) or `deleting` (blocks remain: delete again), and the
 * blocks this request removed.
 *
 * @example
 * ```ts
 * const { status, blocksDeleted }: VolumeDeletion = await client.send(new DeleteVolumeCommand({ volume: 'disk' }));
 * ```
 */
export type VolumeDeletion = WireOf<typeof volumeDeletionWire>;

/**
 * Reader of a write's or trim's acknowledgement (`VolumeWriteAck` in the OpenAPI document).
 *
 * @example
 * ```ts
 * const ack: VolumeWriteAck = readJson(response, volumeWriteAckWire);
 * ```
 */
export const volumeWriteAckWire = wire.object({ offset: wire.number, length: wire.number });

/**
 * The byte range written (or trimmed), durable on its blocks' owners and replicas.
 *
 * @example
 * ```ts
 * const { offset, length }: VolumeWriteAck = await client.volume('disk').write(0, bytes);
 * ```
 */
export type VolumeWriteAck = WireOf<typeof volumeWriteAckWire>;

/** The path of a volume: its name, checked to be one and percent-encoded (the server checks its pattern). */
export function volumePath(volume: unknown): string {
  if (typeof volume !== 'string' || volume === '') throw invalidInput('volume must be a volume name (a non-empty string)');
  return `/v1/volumes/${encodeURIComponent(volume)}`;
}

/** The content type of a JSON request body. */
export const json = { 'content-type': 'application/json' };

/**
 * Input of {@link CreateVolumeCommand}.
 *
 * @example
 * ```ts
 * const input: CreateVolumeCommandInput = { name: 'disk', sizeBytes: 1024 ** 3 };
 * ```
 */
export interface CreateVolumeCommandInput {
  /** `[A-Za-z0-9][A-Za-z0-9_.-]{0,63}`, as a namespace's. */
  name: string;
  /**
   * A multiple of {@link VOLUME_BLOCK_BYTES} from 4 KiB to 16 TiB. Sparse: nothing is stored until written. Required
   * unless `from` is given: a clone's defaults to its snapshot's size, and is at least that.
   */
  sizeBytes?: number;
  /** Makes the volume a clone of this snapshot: copy-on-write, it reads as the snapshot until written. */
  from?: { volume: string; snapshot: string };
}

/**
 * Creates a sparse volume, or a clone of a snapshot (`POST /v1/volumes`); {@link ConflictError} `volume.exists` when
 * the name is taken. A size that is not a positive multiple of {@link VOLUME_BLOCK_BYTES} is refused before any
 * request.
 *
 * @example
 * ```ts
 * const volume = await client.send(new CreateVolumeCommand({ name: 'disk', sizeBytes: 64 * 1024 ** 2 }));
 * ```
 */
export class CreateVolumeCommand extends RingstoreCommand<CreateVolumeCommandInput, VolumeInfo> {
  override async execute({ transport, signal }: CommandContext): Promise<VolumeInfo> {
    const { name, sizeBytes, from } = this.input;
    volumePath(name);
    if (from) volumePath(from.volume);
    if (sizeBytes !== undefined || !from) {
      const size = sizeBytes ?? Number.NaN;
      assertInteger('sizeBytes', size, VOLUME_BLOCK_BYTES);
      if (size % VOLUME_BLOCK_BYTES !== 0) throw invalidInput(`sizeBytes must be a multiple of ${VOLUME_BLOCK_BYTES}, got ${size}`);
    }
    const body = JSON.stringify({ name, ...(sizeBytes !== undefined ? { sizeBytes } : {}), ...(from ? { from } : {}) });
    const response = await transport.send({ method: 'POST', path: '/v1/volumes', headers: json, body, authenticated: true }, signal);
    return readJson(response, volumeWire);
  }
}

/**
 * Input of {@link ListVolumesCommand}: a page size (1 to {@link LIST_LIMIT_MAX}, default 100) and the previous page's cursor.
 *
 * @example
 * ```ts
 * const input: ListVolumesCommandInput = { limit: 20 };
 * ```
 */
export interface ListVolumesCommandInput {
  limit?: number;
  cursor?: string;
}

/**
 * Lists one page of the namespace's volumes in name order (`GET /v1/volumes`).
 *
 * @example
 * ```ts
 * const { volumes, cursor } = await client.send(new ListVolumesCommand({ limit: 20 }));
 * ```
 */
export class ListVolumesCommand extends RingstoreCommand<ListVolumesCommandInput, VolumeList> {
  constructor(input: ListVolumesCommandInput = {}) {
    super(input);
  }

  override async execute({ transport, signal }: CommandContext): Promise<VolumeList> {
    const { limit, cursor } = this.input;
    if (limit !== undefined) assertInteger('limit', limit, 1, LIST_LIMIT_MAX);
    const response = await transport.send({ method: 'GET', path: '/v1/volumes', query: { limit, cursor }, authenticated: true }, signal);
    const page = readJson(response, volumeListWire);
    // An empty cursor cannot be followed: it marks the last page too.
    return page.cursor === undefined || page.cursor === '' ? { volumes: page.volumes } : page;
  }
}

/**
 * Input of the commands on one volume: its name.
 *
 * @example
 * ```ts
 * const input: VolumeCommandInput = { volume: 'disk' };
 * ```
 */
export interface VolumeCommandInput {
  volume: string;
}

/**
 * Describes a volume with its `allocatedBytes` (`GET /v1/volumes/{volume}`), counted by listing its blocks: a large,
 * full volume takes a while. {@link NotFoundError} `volume.notFound` when there is none.
 *
 * @example
 * ```ts
 * const { sizeBytes, allocatedBytes, lease } = await client.send(new DescribeVolumeCommand({ volume: 'disk' }));
 * ```
 */
export class DescribeVolumeCommand extends RingstoreCommand<VolumeCommandInput, VolumeDescription> {
  override async execute({ transport, signal }: CommandContext): Promise<VolumeDescription> {
    const response = await transport.send({ method: 'GET', path: volumePath(this.input.volume), authenticated: true }, signal);
    return readJson(response, volumeDescriptionWire);
  }
}

/**
 * One step of a volume's delete (`DELETE /v1/volumes/{volume}`): it serves nothing from the first step on; each
 * step removes up to 2,000 blocks and answers `deleting` while some remain (send it again) or `deleted`.
 * `client.deleteVolume` repeats it until the end.
 *
 * @example
 * ```ts
 * let step = await client.send(new DeleteVolumeCommand({ volume: 'disk' }));
 * while (step.status === 'deleting') step = await client.send(new DeleteVolumeCommand({ volume: 'disk' }));
 * ```
 */
export class DeleteVolumeCommand extends RingstoreCommand<VolumeCommandInput, VolumeDeletion> {
  override async execute({ transport, signal }: CommandContext): Promise<VolumeDeletion> {
    const response = await transport.send({ method: 'DELETE', path: volumePath(this.input.volume), authenticated: true }, signal);
    return readJson(response, volumeDeletionWire);
  }
}

/**
 * Input of {@link ReadVolumeCommand}: `length` bytes (0 to {@link VOLUME_IO_BYTES_MAX}) at byte `offset`.
 *
 * @example
 * ```ts
 * const input: ReadVolumeCommandInput = { volume: 'disk', offset: 4096, length: 512 };
 * ```
 */
export interface ReadVolumeCommandInput extends VolumeCommandInput {
  offset: number;
  length: number;
}

/** The bytes of a range answer: a 206 checked against its Content-Range, or the slice of a whole-volume 200. */
export function rangeBytes(response: HttpResponse, offset: number, length: number): Uint8Array {
  if (response.status === 200) return response.body.slice(offset, offset + length);
  const range = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(response.headers.get('content-range')?.trim() ?? '');
  const first = Number(range?.[1]);
  const last = Number(range?.[2]);
  if (range === null || first !== offset || last < first || last - first + 1 !== response.body.byteLength) {
    throw invalidResponse(response, `a range answer whose Content-Range does not match its ${response.body.byteLength} bytes at ${offset}`);
  }
  if (response.body.byteLength > length) throw invalidResponse(response, `${response.body.byteLength} bytes answered for ${length} asked`);
  return response.body;
}

/**
 * Reads `length` bytes at `offset` (`GET /v1/volumes/{volume}/data` with `Range: bytes=offset-last`), at one
 * instant, strongly; unwritten bytes read as zeros. A range that runs past the end of the volume answers the bytes
 * up to it; one that starts past it is refused (416 `volume.rangeNotSatisfiable`). An offset or a length that is
 * not an integer of 0 or more, or a length over {@link VOLUME_IO_BYTES_MAX}, is refused before any request.
 *
 * @example
 * ```ts
 * const head: Uint8Array = await client.send(new ReadVolumeCommand({ volume: 'disk', offset: 0, length: 4096 }));
 * ```
 */
export class ReadVolumeCommand extends RingstoreCommand<ReadVolumeCommandInput, Uint8Array> {
  override async execute({ transport, signal }: CommandContext): Promise<Uint8Array> {
    const { volume, offset, length } = this.input;
    const path = `${volumePath(volume)}/data`;
    assertInteger('offset', offset, 0);
    assertInteger('length', length, 0, VOLUME_IO_BYTES_MAX);
    // HTTP cannot ask for an empty range; there is nothing to read.
    if (length === 0) return new Uint8Array(0);
    const headers = { range: `bytes=${offset}-${offset + length - 1}` };
    const response = await transport.send({ method: 'GET', path, headers, authenticated: true }, signal);
    return rangeBytes(response, offset, length);
  }
}

/**
 * Input of {@link WriteVolumeCommand}: up to {@link VOLUME_IO_BYTES_MAX} bytes at `offset`, with the writer's epoch.
 *
 * @example
 * ```ts
 * const input: WriteVolumeCommandInput = { volume: 'disk', offset: 1000, data: new Uint8Array(3000), epoch: 1 };
 * ```
 */
export interface WriteVolumeCommandInput extends VolumeCommandInput {
  offset: number;
  data: Uint8Array;
  /** The epoch of the writer's lease ({@link AttachVolumeCommand}). */
  epoch: number;
}

/**
 * Writes `data` at any byte `offset` (`PUT /v1/volumes/{volume}/data?offset=&epoch=`), atomically: a reader sees
 * all of it or none. {@link ConflictError} `volume.fenced` once another writer has taken the volume over.
 * Retried as a put is: the same bytes at the same offset and epoch land the same. More than
 * {@link VOLUME_IO_BYTES_MAX} bytes are refused before any request.
 *
 * @example
 * ```ts
 * const { epoch } = await client.send(new AttachVolumeCommand({ volume: 'disk', holder: 'host-a' }));
 * await client.send(new WriteVolumeCommand({ volume: 'disk', offset: 0, data: new Uint8Array([1, 2, 3]), epoch }));
 * ```
 */
export class WriteVolumeCommand extends RingstoreCommand<WriteVolumeCommandInput, VolumeWriteAck> {
  override async execute({ transport, signal }: CommandContext): Promise<VolumeWriteAck> {
    const { volume, offset, data, epoch } = this.input;
    const path = `${volumePath(volume)}/data`;
    assertInteger('offset', offset, 0);
    assertInteger('epoch', epoch, 1);
    if (!(data instanceof Uint8Array)) throw invalidInput('data must be a Uint8Array');
    if (data.byteLength > VOLUME_IO_BYTES_MAX) {
      throw invalidInput(`one write takes at most ${VOLUME_IO_BYTES_MAX} bytes, got ${data.byteLength} (client.volume(name).write splits)`);
    }
    const response = await transport.send(
      {
        method: 'PUT',
        path,
        query: { offset, epoch },
        headers: { 'content-type': 'application/octet-stream' },
        body: data,
        authenticated: true,
        idempotent: true,
      },
      signal,
    );
    return readJson(response, volumeWriteAckWire);
  }
}

/**
 * Input of {@link TrimVolumeCommand}: `length` bytes (0 to {@link VOLUME_IO_BYTES_MAX}) at `offset`, with the writer's epoch.
 *
 * @example
 * ```ts
 * const input: TrimVolumeCommandInput = { volume: 'disk', offset: 0, length: 65536, epoch: 1 };
 * ```
 */
export interface TrimVolumeCommandInput extends VolumeCommandInput {
  offset: number;
  length: number;
  epoch: number;
}

/**
 * Trims a byte range (`POST /v1/volumes/{volume}/trim`): the blocks it covers whole are freed, partial ones zeroed,
 * atomically; it then reads as zeros. Retried as a write is (trimming twice is trimming once).
 *
 * @example
 * ```ts
 * await client.send(new TrimVolumeCommand({ volume: 'disk', offset: 0, length: 65536, epoch }));
 * ```
 */
export class TrimVolumeCommand extends RingstoreCommand<TrimVolumeCommandInput, VolumeWriteAck> {
  override async execute({ transport, signal }: CommandContext): Promise<VolumeWriteAck> {
    const { volume, offset, length, epoch } = this.input;
    const path = `${volumePath(volume)}/trim`;
    assertInteger('offset', offset, 0);
    assertInteger('length', length, 0, VOLUME_IO_BYTES_MAX);
    assertInteger('epoch', epoch, 1);
    const body = JSON.stringify({ offset, length, epoch });
    const response = await transport.send({ method: 'POST', path, headers: json, body, authenticated: true, idempotent: true }, signal);
    return readJson(response, volumeWriteAckWire);
  }
}
