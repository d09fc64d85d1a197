// `ringstore volume snapshot|snapshots|rm-snapshot|clone`: a volume's snapshots (docs/volumes.md, "Snapshots") and the
// volumes cloned from them ("Clones"). Read one with `volume read --snapshot`, export one read-only with
// `volume serve --snapshot`.
import type { Command } from 'commander';
import type { SendOptions } from '../client-connection';
import type { Volume } from '../volume';
import { CommandFailure } from './arguments';
import type { CommandGroupContext } from './command-group';
import { table } from './format';
import { formatBytes, parseVolumeSize } from './volumes';

/**
 * The size of `volume`'s snapshot `name` (the volume's when it was taken), refused clearly when there is none.
 *
 * @example
 * ```ts
 * const sizeBytes = await snapshotSizeOf(client.volume('disk'), 'before-upgrade', call);
 * ```
 */
export async function snapshotSizeOf(volume: Volume, name: string, call: () => SendOptions): Promise<number> {
  const found = (await volume.snapshots(call())).find((snapshot) => snapshot.name === name);
  if (found === undefined)
    throw new CommandFailure(`volume ${volume.name} has no snapshot named ${name} (ringstore volume snapshots ${volume.name})`);
  return found.sizeBytes;
}

/**
 * Adds `volume snapshot|snapshots|rm-snapshot|clone` to the `volume` group.
 *
 * @example
 * ```ts
 * addSnapshotCommands(group, context);
 * ```
 */
export function addSnapshotCommands(group: Command, { client, call, out }: CommandGroupContext): void {
  group
    .command('snapshot')
    .description('take a snapshot: the volume as it is now, kept while it changes (writes go on meanwhile)')
    .argument('<name>', 'the volume')
    .argument('<snapshot>', 'the snapshot name: letters, digits, _ . - (64 at most), starting with a letter or digit')
    .action(async (name: string, snapshot: string) => {
      const taken = await (await client()).volume(name).createSnapshot(snapshot, call());
      out(`took snapshot ${taken.name} of volume ${name} (${taken.sizeBytes.toLocaleString('en-US')} bytes) at ${taken.createdAt}`);
    });
  group
    .command('snapshots')
    .description("a volume's snapshots, oldest first")
    .argument('<name>', 'the volume')
    .option('--json', 'print them as JSON')
    .action(async (name: string, options: { json?: boolean }) => {
      const snapshots = await (await client()).volume(name).snapshots(call());
      if (options.json === true) {
        out(JSON.stringify(snapshots, null, 2));
        return;
      }
      if (snapshots.length === 0) {
        out(`volume ${name} has no snapshots`);
        return;
      }
      const rows = snapshots.map((s) => [
        s.name,
        s.sizeBytes.toLocaleString('en-US'),
        s.createdAt,
        s.state,
        (s.clones ?? []).join(',') || '-',
      ]);
      out(table([['SNAPSHOT', 'SIZE', 'CREATED', 'STATE', 'CLONES'], ...rows]));
    });
  group
    .command('rm-snapshot')
    .description('delete a snapshot and the block copies only it kept')
    .argument('<name>', 'the volume')
    .argument('<snapshot>')
    .action(async (name: string, snapshot: string) => {
      const deleted = await (await client()).volume(name).deleteSnapshot(snapshot, call());
      out(`deleted snapshot ${deleted.name} of volume ${name} (${deleted.copiesDeleted.toLocaleString('en-US')} block copies freed)`);
    });
  group
    .command('clone')
    .description('create a volume from a snapshot: copy-on-write, nothing is copied, it reads as the snapshot until written')
    .argument('<name>', 'the volume the snapshot is of')
    .argument('<snapshot>')
    .argument('<clone>', 'the new volume: letters, digits, _ . - (64 at most), starting with a letter or digit')
    .option('--size <size>', "its size, at least the snapshot's (default: the snapshot's): bytes, or 64M, 1G", parseVolumeSize)
    .option('--json', 'print the volume as JSON')
    .action(async (name: string, snapshot: string, clone: string, options: { size?: number; json?: boolean }) => {
      const sized = options.size === undefined ? {} : { sizeBytes: options.size };
      const created = await (await client()).cloneVolume(clone, { volume: name, snapshot }, sized, call());
      out(
        options.json === true
          ? JSON.stringify(created, null, 2)
          : `created volume ${created.name} from snapshot ${snapshot} of ${name}: ${formatBytes(created.sizeBytes)}`,
      );
    });
}
