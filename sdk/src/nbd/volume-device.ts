// A Ringstore volume as the NBD server's block device (`ringstore volume serve`): reads, writes and trims go to the
// volume's handle, in parts of its atomic maximum; a writable export holds the volume's lease and renews it at a
// third of its length. A lease lost (another writer took the volume over) fails every later write with EPERM and is
// reported once: the client's writes can then land nowhere, which is what the fence guarantees.
import { ConflictError, NotFoundError, RingstoreError } from '../errors';
import { VOLUME_IO_BYTES_MAX } from '../limits';
import type { Volume } from '../volume';
import { NbdError } from './protocol';
import type { BlockDevice } from './server';

export interface VolumeDeviceOptions {
  /** Serve it read-only: no lease, every write refused. */
  readOnly: boolean;
  /** Serve this snapshot of the volume instead (read-only: no lease, every write refused). */
  snapshot?: string;
  /** Who attaches (shown to another holder refused). */
  holder: string;
  leaseSeconds: number;
  /** One line per lease event (taken, lost). */
  log?: (line: string) => void;
}

export class VolumeDevice implements BlockDevice {
  readonly ioBytesMax = VOLUME_IO_BYTES_MAX;
  private renewal: NodeJS.Timeout | undefined;
  private lost: RingstoreError | undefined;

  private constructor(
    private readonly volume: Volume,
    readonly sizeBytes: number,
    private readonly options: VolumeDeviceOptions,
  ) {}

  get readOnly(): boolean {
    return this.options.readOnly || this.options.snapshot !== undefined;
  }

  /** The device of `volume` (or of its snapshot): its size read, and its lease taken unless it is served read-only. */
  static async open(volume: Volume, options: VolumeDeviceOptions): Promise<VolumeDevice> {
    const sizeBytes = options.snapshot === undefined ? (await volume.describe()).sizeBytes : await snapshotSize(volume, options.snapshot);
    const device = new VolumeDevice(volume, sizeBytes, options);
    if (!device.readOnly) {
      const lease = await volume.attach({ holder: options.holder, leaseSeconds: options.leaseSeconds });
      options.log?.(`attached ${volume.name} as ${options.holder}: epoch ${lease.epoch}, renewed every ${options.leaseSeconds / 3} s`);
      device.renewal = setInterval(() => void device.renew(), (options.leaseSeconds * 1000) / 3);
      device.renewal.unref();
    }
    return device;
  }

  async read(offset: number, length: number): Promise<Uint8Array> {
    const { snapshot } = this.options;
    const bytes =
      snapshot === undefined ? await this.volume.read(offset, length) : await this.volume.readSnapshot(snapshot, offset, length);
    if (bytes.byteLength !== length) throw new Error(`volume ${this.volume.name}: read ${bytes.byteLength} of ${length} bytes`);
    return bytes;
  }

  async write(offset: number, data: Uint8Array): Promise<void> {
    if (this.lost) throw this.lost;
    await this.volume.write(offset, data);
  }

  async trim(offset: number, length: number): Promise<void> {
    if (this.lost) throw this.lost;
    await this.volume.trim(offset, length);
  }

  /** Stops renewing and ends the lease (unless it was lost). */
  async close(): Promise<void> {
    if (this.renewal) clearInterval(this.renewal);
    this.renewal = undefined;
    if (!this.readOnly && !this.lost && this.volume.lease) await this.volume.detach();
  }

  private async renew(): Promise<void> {
    if (this.lost) return;
    try {
      await this.volume.renew();
    } catch (error) {
      if (error instanceof RingstoreError && (error.code === 'volume.leaseHeld' || error.code === 'volume.fenced')) {
        this.lost = error;
        if (this.renewal) clearInterval(this.renewal);
        this.options.log?.(`lost the lease of ${this.volume.name}: ${error.message}; every write is refused from now on`);
        return;
      }
      // A failure to reach the API: the lease may still be live; the next renewal tries again.
      this.options.log?.(`could not renew the lease of ${this.volume.name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

/** The size of `volume`'s snapshot `name` (the volume's when it was taken); `volume.snapshotNotFound` when there is none. */
async function snapshotSize(volume: Volume, name: string): Promise<number> {
  const found = (await volume.snapshots()).find((snapshot) => snapshot.name === name);
  if (!found) {
    const message = `volume ${volume.name} has no snapshot named ${name}`;
    throw new NotFoundError({ message, status: 404, code: 'volume.snapshotNotFound', retryable: false });
  }
  if (found.state !== 'ready') {
    const message = `snapshot ${name} of volume ${volume.name} is ${found.state}: finish it before serving it`;
    throw new ConflictError({ message, status: 409, code: 'volume.snapshotUnfinished', retryable: false });
  }
  return found.sizeBytes;
}

/** The errno an NBD client gets for a volume's failure: a lost lease or a refusal is EPERM, a bad range EINVAL. */
export function volumeErrnoOf(error: unknown): number {
  if (!(error instanceof RingstoreError)) return NbdError.EIO;
  switch (error.code) {
    case 'volume.fenced':
    case 'volume.leaseHeld':
    case 'volume.deleting':
      return NbdError.EPERM;
    case 'volume.rangeNotSatisfiable':
    case 'volume.ioTooLarge':
      return NbdError.EINVAL;
    default:
      return NbdError.EIO;
  }
}
