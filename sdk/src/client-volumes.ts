// Block volumes (docs/volumes.md): the convenience methods over a namespace's volumes, each one command sent over
// the connection (deleteVolume a loop of them), and `volume(name)`, the handle that reads, writes and trims one.

import {
  CreateVolumeCommand,
  DeleteVolumeCommand,
  DescribeVolumeCommand,
  ListVolumesCommand,
  type ListVolumesCommandInput,
  type VolumeDeletion,
  type VolumeDescription,
  type VolumeInfo,
  type VolumeList,
} from './commands';
import { RingstoreClusterClient } from './client-cluster';
import type { SendOptions } from './client-connection';
import { NotFoundError } from './errors';
import { Volume } from './volume';

/**
 * Options of {@link RingstoreVolumesClient.deleteVolume | RingstoreClient.deleteVolume}.
 *
 * @example
 * ```ts
 * const options: DeleteVolumeOptions = { onProgress: (blocks) => console.log(`${blocks} blocks removed`) };
 * ```
 */
export interface DeleteVolumeOptions {
  /** Called after each request that left blocks to delete, with the blocks removed so far. */
  onProgress?: (blocksDeletedSoFar: number) => void;
}

/**
 * The block-volume methods of a {@link RingstoreClient}: create, list, describe and delete volumes, and
 * {@link RingstoreVolumesClient.volume | volume(name)} to read and write one. Construct a `RingstoreClient`,
 * which has them all.
 *
 * @example
 * ```ts
 * const client = new RingstoreClient({ endpoint: 'http://127.0.0.1:4510', apiKey: 'rs_…' });
 * await client.createVolume('disk', 64 * 1024 * 1024);
 * const { volumes } = await client.listVolumes();
 * ```
 */
export class RingstoreVolumesClient extends RingstoreClusterClient {
  /**
   * Creates a sparse volume of `sizeBytes` (a multiple of 4096, up to 16 TiB); nothing is stored until written.
   * {@link ConflictError} `volume.exists` when the name is taken.
   *
   * @example
   * ```ts
   * const { name, sizeBytes, createdAt } = await client.createVolume('disk', 1024 ** 3);
   * ```
   */
  createVolume(name: string, sizeBytes: number, options?: SendOptions): Promise<VolumeInfo> {
    return this.send(new CreateVolumeCommand({ name, sizeBytes }), options);
  }

  /**
   * Creates volume `name` as a clone of snapshot `from.snapshot` of volume `from.volume`: copy-on-write, nothing is
   * copied, and it reads as the snapshot until written. Its size defaults to the snapshot's (`sizeBytes`: larger).
   * The snapshot and its volume cannot be deleted while the clone lives ({@link ConflictError} `volume.hasClones`).
   *
   * @example
   * ```ts
   * const { origin } = await client.cloneVolume('disk-test', { volume: 'disk', snapshot: 'before-upgrade' });
   * ```
   */
  cloneVolume(
    name: string,
    from: { volume: string; snapshot: string },
    input: { sizeBytes?: number } = {},
    options?: SendOptions,
  ): Promise<VolumeInfo> {
    return this.send(new CreateVolumeCommand({ name, from, ...input }), options);
  }

  /**
   * One page of the namespace's volumes, in name order; `cursor` is absent on the last page.
   *
   * @example
   * ```ts
   * const { volumes, cursor } = await client.listVolumes({ limit: 100 });
   * ```
   */
  listVolumes(input: ListVolumesCommandInput = {}, options?: SendOptions): Promise<VolumeList> {
    return this.send(new ListVolumesCommand(input), options);
  }

  /**
   * A volume with its `allocatedBytes` (counted by listing its blocks: a large, full volume takes a while).
   *
   * @example
   * ```ts
   * const { sizeBytes, allocatedBytes, epoch, lease } = await client.describeVolume('disk');
   * ```
   */
  describeVolume(name: string, options?: SendOptions): Promise<VolumeDescription> {
    return this.send(new DescribeVolumeCommand({ volume: name }), options);
  }

  /**
   * Deletes a volume and its blocks: sends {@link DeleteVolumeCommand} again while the server answers `deleting`
   * (it removes up to 2,000 blocks a request), calling `onProgress` after each such answer. Resolves with
   * `status: 'deleted'` and the blocks removed in all; the name is then free. The volume serves nothing from the
   * first request on; a delete cut short (an abort, an error) goes on where it stopped when called again.
   *
   * @example
   * ```ts
   * const { blocksDeleted } = await client.deleteVolume('disk', { onProgress: (blocks) => console.log(blocks) });
   * ```
   */
  async deleteVolume(name: string, options: DeleteVolumeOptions & SendOptions = {}): Promise<VolumeDeletion> {
    const { onProgress, ...send } = options;
    let blocksDeleted = 0;
    for (let step = 0; ; step++) {
      let answer: VolumeDeletion;
      try {
        answer = await this.send(new DeleteVolumeCommand({ volume: name }), send);
      } catch (error) {
        // Gone after a `deleting` answer: the last request's answer was lost (and it was retried), or another
        // delete finished it. Either way the name is free.
        if (step > 0 && error instanceof NotFoundError) return { name, status: 'deleted', blocksDeleted };
        throw error;
      }
      blocksDeleted += answer.blocksDeleted;
      if (answer.status === 'deleted') return { ...answer, blocksDeleted };
      onProgress?.(blocksDeleted);
    }
  }

  /**
   * The handle of volume `name` (no request): reads, writes and trims of any length, split into requests of at
   * most {@link VOLUME_IO_BYTES_MAX} bytes, and its writer's lease. Each call returns a new handle, with no lease.
   *
   * @example
   * ```ts
   * const disk = client.volume('disk');
   * await disk.attach({ holder: 'host-a' });
   * await disk.write(0, new Uint8Array(8192).fill(1));
   * console.log((await disk.read(0, 16)).join(','));
   * await disk.detach();
   * ```
   */
  volume(name: string): Volume {
    return new Volume(this, name);
  }
}
