// What cross-region DR adds to the KV path (docs/dr.md), as hooks: a primary tells its backup of a key-sync
// write before acknowledging it and acknowledges only within its lease; a promoted backup settles a key lost in
// the disaster once a write of it is stored; a backup reads every key through its pending set.
import { RingstoreError } from './errors';
import type { StoredItem } from '../ports';
import type { DrShipper, PendingGate } from './dr';
import type { DrWriteGuard } from './dr-promotion';
import type { ReadGate, WriteHooks, WriteSettings } from './write-hooks';

export interface DrWriteParts {
  /** DR primary: a `key-sync` write is acknowledged once the backup's queue holds its key message. */
  shipper?: Pick<DrShipper, 'announce'> | undefined;
  /** Whether this region may acknowledge writes (a primary's lease from its backup, a backup's promotion). */
  writeGuard?: DrWriteGuard | undefined;
  /** DR backup, once promoted: a write of a key lost in the disaster removes its lost entries before its ack. */
  settleLost?: ((namespace: string, key: string) => Promise<unknown>) | undefined;
}

export function drWriteHooks(parts: DrWriteParts): WriteHooks {
  const { shipper, writeGuard, settleLost } = parts;
  return {
    assertWritable: async () => writeGuard?.assertWritable(),
    stored: async (item: StoredItem, settings: WriteSettings) => {
      await settleLost?.(item.namespace, item.key);
      if (shipper && settings.drMode !== 'async') await announceToBackup(shipper, item);
    },
  };
}

/** Sends a key-sync write's key message to the backup region; a failure is the write's retryable answer. */
async function announceToBackup(shipper: Pick<DrShipper, 'announce'>, item: StoredItem): Promise<void> {
  try {
    await shipper.announce(item);
  } catch (error) {
    throw new RingstoreError(
      'dr.backupUnreachable',
      `version ${item.version} of ${item.key} is stored, but the backup region could not be told of it, so the write is not ` +
        'acknowledged (the stream still ships it); retry, or read strongly to see whether it applied',
      { retryable: true, cause: error, details: { version: item.version } },
    );
  }
}

/**
 * A backup region's copy may lag the primary: every read checks the key's pending entries, then reads the
 * owner strongly (docs/dr.md). The cache is not used: the appliers do not write through it.
 */
export function drReadGate(gate: PendingGate): ReadGate {
  return { read: (namespace, key, paths) => gate.read(namespace, key, () => paths.owner()) };
}
