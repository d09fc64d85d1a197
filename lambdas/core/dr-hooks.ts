// What cross-region DR adds to the KV path and to transactions (docs/dr.md), as hooks: a primary tells its
// backup of a key-sync write (its notice, beside the owner write; a committed transaction's writes after the
// commit) before acknowledging it and acknowledges
// only within its lease; a promoted backup settles a key lost in the disaster once a write of it is stored,
// and refuses a transaction over one; a backup reads every key through its pending set.
import { RingstoreError, invariant } from './errors';
import type { Clock, DrKeyMessage, IdSource, StoredItem, TxnCommittedWrite, TxnExecution } from '../ports';
import type { PendingGate } from './dr-pending-gate';
import type { DrShipper } from './dr-shipper';
import type { DrWriteGuard } from './dr-promotion';
import { writeCountOf, type TxnHooks } from './txn-hooks';
import type { AnnouncedWrite, ReadGate, WriteAnnouncement, WriteHooks, WriteSettings } from './write-hooks';

export interface DrWriteParts {
  /** DR primary: a `key-sync` write is acknowledged once the backup's queue holds its notice. */
  shipper?: Pick<DrShipper, 'notify'> | undefined;
  /** Write ids of the notices (random: a notice and its withdrawal are deduplicated by it). */
  ids: Pick<IdSource, 'newId'>;
  /** Whether this region may acknowledge writes (a primary's lease from its backup, a backup's promotion). */
  writeGuard?: DrWriteGuard | undefined;
  /** DR backup, once promoted: a write of a key lost in the disaster removes its lost entries before its ack. */
  settleLost?: ((namespace: string, key: string) => Promise<unknown>) | undefined;
}

export function drWriteHooks(parts: DrWriteParts): WriteHooks {
  const { shipper, ids, writeGuard, settleLost } = parts;
  const keySync = (settings: WriteSettings) => shipper !== undefined && settings.drMode !== 'async';
  return {
    assertWritable: async () => writeGuard?.assertWritable(),
    announce: (write, settings) => (shipper && keySync(settings) ? announceWrite(shipper, ids.newId(), write) : undefined),
    stored: async (item: StoredItem, settings: WriteSettings, announced?: AnnouncedWrite) => {
      await settleLost?.(item.namespace, item.key);
      if (!shipper || !keySync(settings)) return;
      invariant(announced !== undefined, `a key-sync write of ${item.key} was stored without its notice`);
      await noticeDurable(announced, item);
    },
  };
}

/**
 * A key-sync write's notice, sent to the backup as its owner write starts (docs/dr.md, "When the backup knows of a
 * write"): the backup holds the key pending from the notice until a key message carrying the write id comes.
 * A withdrawal follows the notice (one message group, in order), so the backup drops it.
 */
function announceWrite(shipper: Pick<DrShipper, 'notify'>, writeId: string, write: WriteAnnouncement): AnnouncedWrite {
  const { namespace, key, writtenAtMs, content } = write;
  const sent = shipper.notify({ notice: 'announced', namespace, key, writeId, writtenAtMs, content });
  sent.catch(() => undefined);
  return {
    writeId,
    sent,
    withdraw: async () => {
      await sent.catch(() => undefined);
      await shipper.notify({ notice: 'withdrawn', namespace, key, writeId, writtenAtMs });
    },
  };
}

/** A stored write's notice must be durable in the backup's queue before the write is acknowledged. */
async function noticeDurable(announced: AnnouncedWrite, item: StoredItem): Promise<void> {
  try {
    await announced.sent;
  } catch (error) {
    throw backupUnreachable(item, error);
  }
}

function backupUnreachable(item: StoredItem, cause: unknown): RingstoreError {
  return new RingstoreError(
    'dr.backupUnreachable',
    `version ${item.version} of ${item.key} is stored, but the backup region could not be told of it, so the write is not ` +
      'acknowledged (the stream still ships it); retry, or read strongly to see whether it applied',
    { retryable: true, cause, details: { version: item.version } },
  );
}

/**
 * A backup region's copy may lag the primary: every read checks the key's pending entries, then reads the
 * owner strongly (docs/dr.md). The cache is not used: the appliers do not write through it.
 */
export function drReadGate(gate: PendingGate): ReadGate {
  return { read: (namespace, key, paths) => gate.read(namespace, key, () => paths.owner()) };
}

export interface DrTxnParts {
  /** Whether this region may run and acknowledge transactions (a primary's lease, a backup's promotion). */
  writeGuard?: DrWriteGuard | undefined;
  /** DR primary: a key-sync namespace's committed transaction is answered once the backup knows of its writes. */
  shipper?: Pick<DrShipper, 'announceAll'> | undefined;
  /** DR backup, once promoted: a transaction touching a key lost in the disaster is refused (410 dr.lost). */
  lostKeys?: Pick<PendingGate, 'assertNotLost'> | undefined;
  clock: Pick<Clock, 'nowMs'>;
}

/** What DR adds around a transaction (docs/dr.md, "Transactions"). */
export function drTxnHooks(parts: DrTxnParts): TxnHooks {
  const { writeGuard, shipper, lostKeys, clock } = parts;
  return {
    assertAcknowledgeable: async () => writeGuard?.assertWritable(),
    ...(lostKeys ? { assertKeyServable: (namespace, key, stored) => lostKeys.assertNotLost(namespace, key, stored) } : {}),
    decided: async (execution, outcome, { drMode }) => {
      if (!shipper || drMode === 'async' || outcome.status !== 'committed') return;
      await announceCommitted(shipper, execution, outcome.writes, clock.nowMs());
    },
  };
}

/**
 * DR primary, key-sync namespace: the key messages of a committed transaction's writes, durable in the
 * backup's queue before the transaction is answered. A transaction the backup could not be told of is
 * committed but not acknowledged: its outcome is unknown to the client, as after a lost answer (read before
 * retrying). The shard streams ship its writes anyway.
 */
async function announceCommitted(
  shipper: Pick<DrShipper, 'announceAll'>,
  execution: TxnExecution,
  writes: ReadonlyArray<Pick<TxnCommittedWrite, 'key' | 'version'>>,
  writtenAtMs: number,
): Promise<void> {
  const versions = new Map(writes.map((write) => [write.key, write.version]));
  const messages: DrKeyMessage[] = execution.participants.flatMap((participant) =>
    participant.keys.flatMap(({ key, write }) => {
      const version = versions.get(key);
      if (!write || version === undefined) return [];
      const deleted = write.kind === 'delete';
      return [
        {
          namespace: execution.namespace,
          key,
          version,
          txid: execution.txid,
          txnWrites: writeCountOf(execution),
          writtenAtMs,
          size: deleted ? 0 : write.size,
          sha256: deleted ? '' : write.sha256,
          contentType: deleted ? '' : write.contentType,
          deleted,
        },
      ];
    }),
  );
  try {
    await shipper.announceAll(messages);
  } catch (error) {
    throw new RingstoreError(
      'txn.outcomeUnknown',
      `transaction ${execution.txid} committed, but the backup region could not be told of its writes, so it is not acknowledged; ` +
        'read its keys strongly before retrying',
      { retryable: false, cause: error, details: { txid: execution.txid } },
    );
  }
}
