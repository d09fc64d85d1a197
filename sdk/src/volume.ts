// The handle of one block volume (`client.volume(name)`): reads, writes and trims of any length, split into
// requests of at most VOLUME_IO_BYTES_MAX bytes, and the writer's lease, whose epoch the handle keeps and every
// write and trim carries.

import {
  DescribeVolumeCommand,
  ReadVolumeCommand,
  TrimVolumeCommand,
  type VolumeDescription,
  type VolumeLease,
  type VolumeWriteAck,
  WriteVolumeCommand,
} from './commands/VolumeCommands';
import { AttachVolumeCommand, DetachVolumeCommand, type VolumeDetached } from './commands/VolumeLeaseCommands';
import {
  CreateVolumeSnapshotCommand,
  DeleteVolumeSnapshotCommand,
  ListVolumeSnapshotsCommand,
  ReadVolumeSnapshotCommand,
  type VolumeSnapshotDeletion,
  type VolumeSnapshotInfo,
} from './commands/VolumeSnapshotCommands';
import { invalidInput } from './commands/command';
import type { RingstoreConnection, SendOptions } from './client-connection';
import { assertInteger } from './encoding';
import { RingstoreError } from './errors';
import { VOLUME_IO_BYTES_MAX } from './limits';

/**
 * What {@link Volume.attach} takes: who the writer is, and how long its lease lasts unrenewed (1 to 300 s, default 30).
 *
 * @example
 * ```ts
 * const input: VolumeAttachInput = { holder: 'host-a', leaseSeconds: 60 };
 * ```
 */
export interface VolumeAttachInput {
  holder: string;
  leaseSeconds?: number;
}

/** The parts of `length` bytes at `offset`: consecutive, each at most VOLUME_IO_BYTES_MAX bytes. */
function* partsOf(offset: number, length: number): Generator<{ at: number; offset: number; length: number }> {
  for (let at = 0; at < length; at += VOLUME_IO_BYTES_MAX) {
    yield { at, offset: offset + at, length: Math.min(VOLUME_IO_BYTES_MAX, length - at) };
  }
}

/** `length` bytes at `offset`, read part by part; fewer when a part meets the end (nothing after it to read). */
async function readInParts(
  offset: number,
  length: number,
  readPart: (part: { offset: number; length: number }) => Promise<Uint8Array>,
): Promise<Uint8Array> {
  assertInteger('offset', offset, 0);
  assertInteger('length', length, 0);
  const bytes = new Uint8Array(length);
  for (const part of partsOf(offset, length)) {
    const read = await readPart({ offset: part.offset, length: part.length });
    bytes.set(read, part.at);
    if (read.byteLength < part.length) return bytes.slice(0, part.at + read.byteLength);
  }
  return bytes;
}

/**
 * One block volume, as `client.volume(name)` returns it: reads, writes and trims of any length at any offset, and
 * its writer's lease. A read, write or trim of more than {@link VOLUME_IO_BYTES_MAX} bytes is sent as consecutive
 * requests of at most that size, in order: **each part is atomic, not the whole** (a failure part-way leaves the
 * parts before it written, and is thrown as it came). Writes and trims need the lease of {@link Volume.attach},
 * whose epoch the handle keeps and sends with each of them until {@link Volume.detach}. Not meant to be shared by
 * concurrent tasks that attach as different holders: one handle, one writer.
 *
 * @example
 * ```ts
 * const disk = client.volume('disk');
 * await disk.attach({ holder: 'host-a' });
 * await disk.write(1000, new Uint8Array(1024 * 1024).fill(7)); // 4 requests of at most 256 KiB
 * const bytes = await disk.read(1000, 1024 * 1024);
 * await disk.detach();
 * ```
 */
export class Volume {
  private attached?: { input: VolumeAttachInput; lease: VolumeLease };

  constructor(
    private readonly connection: Pick<RingstoreConnection, 'send'>,
    /** The volume's name. */
    readonly name: string,
  ) {}

  /**
   * The lease of the last {@link Volume.attach} or {@link Volume.renew}; undefined before the first and after
   * {@link Volume.detach}. Its `expiresAt` is the server's clock: renew well before it.
   *
   * @example
   * ```ts
   * console.log(disk.lease?.epoch, disk.lease?.expiresAt);
   * ```
   */
  get lease(): VolumeLease | undefined {
    return this.attached?.lease;
  }

  /**
   * The volume with its `allocatedBytes`, writer epoch and lease.
   *
   * @example
   * ```ts
   * const { sizeBytes, allocatedBytes } = await disk.describe();
   * ```
   */
  describe(options?: SendOptions): Promise<VolumeDescription> {
    return this.connection.send(new DescribeVolumeCommand({ volume: this.name }), options);
  }

  /**
   * Reads `length` bytes at `offset`; unwritten bytes read as zeros. Each part of at most
   * {@link VOLUME_IO_BYTES_MAX} bytes is read at one instant (not the whole). A range that runs past the end of
   * the volume answers the bytes up to it (fewer than `length`); one that starts past it is refused (416
   * `volume.rangeNotSatisfiable`). Needs no lease.
   *
   * @example
   * ```ts
   * const firstMiB = await disk.read(0, 1024 * 1024);
   * ```
   */
  read(offset: number, length: number, options?: SendOptions): Promise<Uint8Array> {
    return readInParts(offset, length, (part) => this.connection.send(new ReadVolumeCommand({ volume: this.name, ...part }), options));
  }

  /**
   * Writes `bytes` at `offset` with the lease's epoch, as consecutive writes of at most
   * {@link VOLUME_IO_BYTES_MAX} bytes, each atomic; resolves with the whole range written. A `ValidationError`
   * before {@link Volume.attach}; {@link ConflictError} `volume.fenced` once another writer took the volume over.
   *
   * @example
   * ```ts
   * const { offset, length } = await disk.write(4096, new TextEncoder().encode('hello'));
   * ```
   */
  async write(offset: number, bytes: Uint8Array, options?: SendOptions): Promise<VolumeWriteAck> {
    const epoch = this.writerEpoch('write');
    assertInteger('offset', offset, 0);
    if (!(bytes instanceof Uint8Array)) throw invalidInput('bytes must be a Uint8Array');
    for (const part of partsOf(offset, bytes.byteLength)) {
      const data = bytes.subarray(part.at, part.at + part.length);
      await this.connection.send(new WriteVolumeCommand({ volume: this.name, offset: part.offset, data, epoch }), options);
    }
    return { offset, length: bytes.byteLength };
  }

  /**
   * Trims `length` bytes at `offset` (they read as zeros; whole blocks are freed) with the lease's epoch, as
   * consecutive trims of at most {@link VOLUME_IO_BYTES_MAX} bytes, each atomic. A `ValidationError` before
   * {@link Volume.attach}.
   *
   * @example
   * ```ts
   * await disk.trim(0, 1024 * 1024);
   * ```
   */
  async trim(offset: number, length: number, options?: SendOptions): Promise<VolumeWriteAck> {
    const epoch = this.writerEpoch('trim');
    assertInteger('offset', offset, 0);
    assertInteger('length', length, 0);
    for (const part of partsOf(offset, length)) {
      await this.connection.send(new TrimVolumeCommand({ volume: this.name, offset: part.offset, length: part.length, epoch }), options);
    }
    return { offset, length };
  }

  /**
   * Attaches as the volume's one writer and keeps the lease: later writes and trims carry its epoch.
   * {@link ConflictError} `volume.leaseHeld` (`details.holder`) while another holder's lease is live.
   *
   * @example
   * ```ts
   * const { epoch, expiresAt } = await disk.attach({ holder: `host-a-${process.pid}`, leaseSeconds: 60 });
   * ```
   */
  async attach(input: VolumeAttachInput, options?: SendOptions): Promise<VolumeLease> {
    const lease = await this.connection.send(new AttachVolumeCommand({ volume: this.name, ...input }), options);
    this.attached = { input: { ...input }, lease };
    return lease;
  }

  /**
   * Renews the lease: attaches again as the same holder, for as long. The epoch stays while the lease is live; a
   * lease that expired with no one taking over comes back with a new epoch, which the handle keeps.
   *
   * @example
   * ```ts
   * setInterval(() => void disk.renew(), 10_000);
   * ```
   */
  async renew(options?: SendOptions): Promise<VolumeLease> {
    const attached = this.attached;
    if (attached === undefined) throw invalidInput(`volume ${this.name} is not attached: attach it before renewing its lease`);
    return this.attach(attached.input, options);
  }

  /**
   * Ends the lease: another holder may attach at once, and this handle writes no more until attached again.
   * {@link ConflictError} `volume.fenced` when another writer took the volume over (the handle lets go too).
   *
   * @example
   * ```ts
   * await disk.detach();
   * ```
   */
  async detach(options?: SendOptions): Promise<VolumeDetached> {
    const lease = this.attached?.lease;
    if (lease === undefined) throw invalidInput(`volume ${this.name} is not attached: there is no lease to end`);
    try {
      const detached = await this.connection.send(new DetachVolumeCommand({ volume: this.name, epoch: lease.epoch }), options);
      delete this.attached;
      return detached;
    } catch (error) {
      // Taken over or gone: the lease is not this handle's any more.
      if (error instanceof RingstoreError && (error.code === 'volume.fenced' || error.code === 'volume.notFound')) delete this.attached;
      throw error;
    }
  }

  /**
   * Takes snapshot `name`: the volume at one instant, kept while it changes (copy-on-write per block). Needs no
   * lease; writes go on meanwhile. Called again after a failure, it finishes a creation cut short.
   *
   * @example
   * ```ts
   * const { name, createdAt } = await disk.createSnapshot('before-upgrade');
   * ```
   */
  createSnapshot(name: string, options?: SendOptions): Promise<VolumeSnapshotInfo> {
    return this.connection.send(new CreateVolumeSnapshotCommand({ volume: this.name, snapshot: name }), options);
  }

  /**
   * The volume's snapshots, oldest first.
   *
   * @example
   * ```ts
   * for (const { name, sizeBytes } of await disk.snapshots()) console.log(name, sizeBytes);
   * ```
   */
  snapshots(options?: SendOptions): Promise<VolumeSnapshotInfo[]> {
    return this.connection.send(new ListVolumeSnapshotsCommand({ volume: this.name }), options);
  }

  /**
   * Deletes snapshot `name` with the block copies only it read.
   *
   * @example
   * ```ts
   * const { copiesDeleted } = await disk.deleteSnapshot('before-upgrade');
   * ```
   */
  deleteSnapshot(name: string, options?: SendOptions): Promise<VolumeSnapshotDeletion> {
    return this.connection.send(new DeleteVolumeSnapshotCommand({ volume: this.name, snapshot: name }), options);
  }

  /**
   * Reads `length` bytes at `offset` of snapshot `name`, as the volume was when it was taken, in parts of at most
   * {@link VOLUME_IO_BYTES_MAX} bytes; a range past its end answers the bytes up to it.
   *
   * @example
   * ```ts
   * const before = await disk.readSnapshot('before-upgrade', 0, 1024 * 1024);
   * ```
   */
  readSnapshot(name: string, offset: number, length: number, options?: SendOptions): Promise<Uint8Array> {
    return readInParts(offset, length, (part) =>
      this.connection.send(new ReadVolumeSnapshotCommand({ volume: this.name, snapshot: name, ...part }), options),
    );
  }

  private writerEpoch(what: 'write' | 'trim'): number {
    const epoch = this.attached?.lease.epoch;
    if (epoch === undefined) {
      throw invalidInput(`volume ${this.name} is not attached: attach it (volume.attach({ holder })) before a ${what}`);
    }
    return epoch;
  }
}
