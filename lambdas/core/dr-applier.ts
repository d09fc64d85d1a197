// The backup region's appliers (docs/dr.md): a key message marks its key pending; its value, when it arrives,
// is checked against the message and applied, version-guarded; a transaction's writes are applied whole.
import { createHash } from 'node:crypto';
import {
  isTransactionMember,
  isWriteNotice,
  keyHashOf,
  needsNoValue,
  noticeSortKeyOf,
  parseValueObjectKey,
  valueObjectKeyOf,
} from './dr-messages';
import { tombstoneRetentionSeconds } from './item';
import { tokenOf } from './ring';
import type { RingSource } from './ring-source';
import type {
  BlobStore,
  Clock,
  DrKeyMessage,
  DrMetrics,
  DrQueueMessage,
  DrWriteNotice,
  FaultInjector,
  PendingEntry,
  PendingStore,
  ShardCopies,
  ShardItemReads,
  StoredItem,
} from '../ports';

export interface BackupApplierDeps {
  pending: PendingStore;
  /** This region's blob bucket: the values arrive in it, and large ones stay there as the items' blobs. */
  values: BlobStore;
  shards: ShardItemReads & ShardCopies;
  ring: RingSource;
  clock: Clock;
  faults?: FaultInjector;
  limits: { inlineValueBytesMax: number };
  /** A value whose bytes do not match its key message's sha256: it is not applied, the key stays pending. */
  onCorrupt?: (entry: PendingEntry, actualSha256: string) => void;
  metrics?: DrMetrics;
  /**
   * Whether this region has been promoted (read fresh). A promoted region takes no more shipments from
   * the old primary: whatever still arrives is from writes it never acknowledged (the promotion waited
   * out its lease and drained the queue), and must not land over the new primary's writes.
   */
  promoted?: () => Promise<boolean>;
}

export type KeyOutcome = 'applied' | 'pending' | 'current' | 'ignored';

/** What one sweep of old pending entries did, and what it saw of the pending table. */
export interface PendingSweepReport {
  examined: number;
  applied: number;
  cleared: number;
  /** Entries read: pending and lost ones, and how long the oldest pending one had waited. */
  pending: number;
  lost: number;
  oldestPendingAgeMs: number;
  /** Whether the sweep read the whole table (else the counts are of the pages it read). */
  complete: boolean;
}
/** `awaitingTransaction`: the value is a transaction's, applied once all of its writes are here. */
export type ValueOutcome = 'applied' | 'awaitingKey' | 'awaitingTransaction' | 'ignored' | 'corrupt';

/** A transaction's unit in the backup: applied whole, waiting for some of its writes, or unable to apply. */
export type TransactionUnitOutcome = 'applied' | 'incomplete' | 'corrupt' | 'lost';

/** A value checked against its key message, ready to store: its bytes if inline, else its object as the blob. */
type CheckedValue = Pick<StoredItem, 'value' | 'blob'>;

/** A notice's pending entry, with the content the notice announced (no value follows a notice itself). */
function noticeEntryOf(notice: DrWriteNotice, keyHash: string, receivedAtMs: number): PendingEntry {
  return {
    namespace: notice.namespace,
    key: notice.key,
    keyHash,
    version: noticeSortKeyOf(notice.writeId),
    writeId: notice.writeId,
    notice: true,
    state: 'pending',
    writtenAtMs: notice.writtenAtMs,
    receivedAtMs,
    ...(notice.content ?? { size: 0, sha256: '', contentType: '', deleted: false }),
  };
}

/**
 * The backup's two appliers. Whichever of a write's key message and value arrives second applies the
 * value; a key is pending from its message until then. Every step is idempotent and version-guarded,
 * so duplicated, reordered and late messages and values never move a key backwards.
 */
export class BackupApplier {
  constructor(private readonly deps: BackupApplierDeps) {}

  /** The key-applier: one message from the queue, a key message or a write's notice. */
  async receive(message: DrQueueMessage): Promise<KeyOutcome> {
    return isWriteNotice(message) ? this.receiveNotice(message) : this.receiveKey(message);
  }

  /**
   * A key-sync write's notice: from here the key is pending (ahead of any copy: the write's version is not
   * known yet) until a key message carrying its write id comes (that write's version, or a newer one), or
   * the primary withdraws it (the owner write failed) or settles it (maintenance, for a notice left behind).
   */
  async receiveNotice(notice: DrWriteNotice): Promise<KeyOutcome> {
    if (await this.deps.promoted?.()) return 'ignored';
    const keyHash = keyHashOf(notice.namespace, notice.key);
    if (notice.notice === 'withdrawn') {
      await this.deps.pending.removeNotice(keyHash, notice.writeId);
      return 'current';
    }
    const receivedAtMs = this.deps.clock.nowMs();
    await this.deps.pending.record(noticeEntryOf(notice, keyHash, receivedAtMs));
    this.deps.metrics?.keyReceived(Math.max(0, receivedAtMs - notice.writtenAtMs));
    return 'pending';
  }

  /**
   * One key message from the queue. One carrying a write id settles that write's notice, once the message's
   * own entry is recorded (or its version applied): the key is never unknown in between.
   */
  async receiveKey(message: DrKeyMessage): Promise<KeyOutcome> {
    const outcome = await this.receiveVersion(message);
    if (outcome !== 'ignored' && message.writeId !== undefined) {
      await this.deps.pending.removeNotice(keyHashOf(message.namespace, message.key), message.writeId);
    }
    return outcome;
  }

  private async receiveVersion(message: DrKeyMessage): Promise<KeyOutcome> {
    if (await this.deps.promoted?.()) return 'ignored';
    const keyHash = keyHashOf(message.namespace, message.key);
    if (this.asUnit(message)) return this.receiveTransactionKey(message, keyHash);
    if (needsNoValue(message)) {
      const applied = await this.store(this.itemOf(message, {}));
      await this.clearUpTo(keyHash, message.version);
      return applied ? 'applied' : 'current';
    }
    const entry = await this.recordPending(message, keyHash);
    if (entry === 'current') return 'current';
    // Its object may have arrived first (its applier found no entry and left it).
    return (await this.applyValue(entry)) === 'applied' ? 'applied' : 'pending';
  }

  /**
   * Records a key message's entry, before anything else: from here on a read of the key waits for this
   * version. Then `current` if the backup holds that version already (a duplicate or late message):
   * checked after recording, so a value applier running meanwhile either sees the entry or has applied
   * the value.
   */
  private async recordPending(message: DrKeyMessage, keyHash: string): Promise<PendingEntry | 'current'> {
    const entry: PendingEntry = { ...message, keyHash, state: 'pending', receivedAtMs: this.deps.clock.nowMs() };
    await this.deps.pending.record(entry);
    this.deps.metrics?.keyReceived(Math.max(0, entry.receivedAtMs - message.writtenAtMs));
    this.deps.faults?.reach('dr.afterPending');
    const held = await this.heldVersion(message);
    if (held < message.version) return entry;
    await this.clearUpTo(keyHash, held);
    return 'current';
  }

  /**
   * Clears a key's entries up to `version` (applied, or superseded by it). A transaction's write
   * superseded here never gets its value (the primary shipped the newer one instead), so its transaction
   * is tried again now that the write no longer holds it back (`except`: the one applying).
   */
  private async clearUpTo(keyHash: string, version: number, except?: string): Promise<void> {
    const removed = await this.deps.pending.clear(keyHash, version);
    const held = new Map<string, number>();
    for (const entry of removed) if (this.asUnit(entry) && entry.txid !== except) held.set(entry.txid, entry.txnWrites);
    for (const [txid, writes] of held) await this.applyTransaction(txid, writes);
  }

  /** Whether a write is applied with the rest of its transaction (the broken mode applies each on its own). */
  private asUnit(message: DrKeyMessage): message is DrKeyMessage & { txid: string; txnWrites: number } {
    return isTransactionMember(message) && !this.deps.faults?.isBroken('drApplyTransactionsPerKey');
  }

  /**
   * A transaction's key message: recorded pending (a delete too: it is applied with the others), and
   * counted as one of the transaction's writes; the one that completes the transaction applies it.
   */
  private async receiveTransactionKey(message: DrKeyMessage & { txid: string; txnWrites: number }, keyHash: string): Promise<KeyOutcome> {
    const recorded = await this.recordPending(message, keyHash);
    // Counted even when the backup holds a newer version of the key (a later write went ahead): the
    // others wait for this count. A duplicate of a transaction applied already leaves one small item.
    await this.deps.pending.recordTransactionWrite(message.txid, { keyHash, version: message.version });
    if ((await this.applyTransaction(message.txid, message.txnWrites)) === 'applied') return 'applied';
    return recorded === 'current' ? 'current' : 'pending';
  }

  /**
   * Applies a transaction's writes in this region if every one of them is here: each key message
   * recorded, each value in the bucket and matching its sha256. Else nothing is applied: the writes
   * stay pending (a read of any of them waits or is refused), so no reader sees part of the transaction.
   * Every write is stored before any pending entry is cleared: a crash in between leaves the rest
   * pending, and the next delivery, the sweep or the promotion applies them again (version-guarded).
   */
  async applyTransaction(txid: string, writes: number): Promise<TransactionUnitOutcome> {
    const members = await this.deps.pending.transactionWrites(txid);
    if (members.length < writes) return 'incomplete';
    const found = await Promise.all(members.map((member) => this.deps.pending.find(member.keyHash, member.version)));
    // A write without an entry was applied already (a retry after a crash) or superseded by a newer one.
    const entries = found.filter((entry): entry is PendingEntry => entry !== undefined);
    if (entries.some((entry) => entry.state === 'lost')) return 'lost';
    const checked: Array<{ entry: PendingEntry; value: CheckedValue | 'missing' | 'corrupt' }> = await Promise.all(
      entries.map(async (entry) => ({ entry, value: needsNoValue(entry) ? {} : await this.checkedValue(entry) })),
    );
    if (checked.some(({ value }) => value === 'corrupt')) return 'corrupt';
    if (checked.some(({ value }) => value === 'missing')) return 'incomplete';
    for (const { entry, value } of checked) {
      await this.store(this.itemOf(entry, value as CheckedValue));
      this.deps.metrics?.valueApplied(Math.max(0, this.deps.clock.nowMs() - entry.writtenAtMs));
      this.deps.faults?.reach('dr.afterTransactionWrite');
    }
    for (const { entry, value } of checked) {
      await this.clearUpTo(entry.keyHash, entry.version, txid);
      if ((value as CheckedValue).value) await this.deps.values.delete(valueObjectKeyOf(entry)).catch(() => undefined);
    }
    await this.deps.pending.clearTransaction(txid);
    return 'applied';
  }

  /**
   * The backup's sweep (run by maintenance): a key pending for longer than `olderThanMs` whose value is
   * in the bucket (its object-created event was lost, or failed every retry) is applied now; one the
   * backup holds already is cleared. Bounded by `pagesMax` pages of `pageSize` entries per run.
   */
  async retryPending(options: { olderThanMs: number; pageSize: number; pagesMax: number }): Promise<PendingSweepReport> {
    const report: PendingSweepReport = { examined: 0, applied: 0, cleared: 0, pending: 0, lost: 0, oldestPendingAgeMs: 0, complete: false };
    const now = this.deps.clock.nowMs();
    // In a promoted region every entry the promotion kept is lost; a pending one came from a write the
    // old primary never acknowledged (recorded while the promotion ran): it is dropped, not applied.
    const promoted = (await this.deps.promoted?.()) ?? false;
    const cutoff = promoted ? Infinity : this.deps.clock.nowMs() - options.olderThanMs;
    let cursor: string | undefined;
    for (let page = 0; page < options.pagesMax; page += 1) {
      const scanned = await this.deps.pending.scan(options.pageSize, cursor);
      for (const entry of scanned.entries) {
        if (entry.state === 'lost') report.lost += 1;
        else {
          report.pending += 1;
          report.oldestPendingAgeMs = Math.max(report.oldestPendingAgeMs, now - entry.receivedAtMs);
        }
        if (entry.state !== 'pending' || entry.receivedAtMs > cutoff) continue;
        // A notice has no value to apply: its key message or the primary settles it (a promoted region drops it).
        if (entry.notice && !promoted) continue;
        report.examined += 1;
        if (promoted) {
          if (entry.notice && entry.writeId !== undefined) await this.deps.pending.removeNotice(entry.keyHash, entry.writeId);
          else await this.deps.pending.clear(entry.keyHash, entry.version);
          report.cleared += 1;
          continue;
        }
        if (this.asUnit(entry)) {
          if ((await this.applyTransaction(entry.txid, entry.txnWrites)) === 'applied') report.applied += 1;
          continue;
        }
        const held = await this.heldVersion(entry);
        if (held >= entry.version) {
          await this.clearUpTo(entry.keyHash, held);
          report.cleared += 1;
        } else if ((await this.applyValue(entry)) === 'applied') {
          report.applied += 1;
        }
      }
      cursor = scanned.cursor;
      if (!cursor) {
        report.complete = true;
        break;
      }
    }
    const { pending, lost, oldestPendingAgeMs } = report;
    this.deps.metrics?.pendingObserved({ pending, lost, oldestPendingAgeMs });
    return report;
  }

  /** The value-applier: one object created in the bucket. */
  async receiveValue(objectKey: string): Promise<ValueOutcome> {
    const parsed = parseValueObjectKey(objectKey);
    if (!parsed) return 'ignored';
    const entry = await this.deps.pending.find(parsed.keyHash, parsed.version);
    // No entry: its key message has not arrived (the key applier applies it then), or the value was applied.
    if (!entry || valueObjectKeyOf(entry) !== objectKey) return 'awaitingKey';
    // A promotion gave up on it: a value arriving later is offered back by reconciliation, never applied.
    if (entry.state === 'lost') return 'ignored';
    if (await this.deps.promoted?.()) return 'ignored';
    if (this.asUnit(entry)) {
      const outcome = await this.applyTransaction(entry.txid, entry.txnWrites);
      return outcome === 'applied' ? 'applied' : outcome === 'corrupt' ? 'corrupt' : 'awaitingTransaction';
    }
    const outcome = await this.applyValue(entry);
    return outcome === 'missing' ? 'ignored' : outcome;
  }

  /** `missing`: the object is gone (applied meanwhile by another delivery, which removes an inline value's object). */
  private async applyValue(entry: PendingEntry): Promise<'applied' | 'corrupt' | 'missing'> {
    const value = await this.checkedValue(entry);
    if (value === 'missing' || value === 'corrupt') return value;
    await this.store(this.itemOf(entry, value));
    this.deps.metrics?.valueApplied(Math.max(0, this.deps.clock.nowMs() - entry.writtenAtMs));
    this.deps.faults?.reach('dr.afterApply');
    await this.clearUpTo(entry.keyHash, entry.version);
    // An inline value now lives in the items; a large one stays as their blob.
    if (value.value) await this.deps.values.delete(valueObjectKeyOf(entry)).catch(() => undefined);
    return 'applied';
  }

  /** The value of an entry from the bucket, checked against its sha256: its bytes if inline, else its object as the blob. */
  private async checkedValue(entry: PendingEntry): Promise<CheckedValue | 'missing' | 'corrupt'> {
    const { values } = this.deps;
    const objectKey = valueObjectKeyOf(entry);
    if ((await values.size(objectKey)) === undefined) return 'missing';
    const inline = entry.size <= this.deps.limits.inlineValueBytesMax;
    const bytes = inline ? await values.get(objectKey) : undefined;
    const sha256 = bytes ? createHash('sha256').update(bytes).digest('hex') : await values.sha256(objectKey);
    if (sha256 !== entry.sha256) {
      this.deps.onCorrupt?.(entry, sha256);
      this.deps.metrics?.valueCorrupt();
      return 'corrupt';
    }
    return bytes ? { value: bytes } : { blob: { objectKey } };
  }

  /** The version the backup's owner holds (strongly read), 0 for none. */
  private async heldVersion(message: DrKeyMessage): Promise<number> {
    const ring = await this.deps.ring.current();
    const owner = ring.ownerOf(tokenOf(message.namespace, message.key));
    const item = await this.deps.shards.get(owner.table, message.namespace, message.key, { consistent: true });
    return item?.version ?? 0;
  }

  /**
   * Stores the version on every replica of the key in this region (owner first, listed), each
   * version-guarded. Throws if any copy fails, so the entry stays pending and the delivery is retried.
   * True when any copy took it.
   */
  private async store(item: StoredItem): Promise<boolean> {
    const ring = await this.deps.ring.current();
    const nowSeconds = Math.floor(this.deps.clock.nowMs() / 1000);
    const copies = ring.replicasOf(item.token);
    const applied = await Promise.all(
      copies.map((shard, index) => this.deps.shards.applyReplica(shard.table, item, { nowSeconds, listed: index === 0 })),
    );
    return applied.some(Boolean);
  }

  private itemOf(message: DrKeyMessage, content: Pick<StoredItem, 'value' | 'blob'>): StoredItem {
    const token = tokenOf(message.namespace, message.key);
    const base = { namespace: message.namespace, key: message.key, version: message.version, token, modifiedAtMs: message.writtenAtMs };
    if (message.deleted) {
      const nowSeconds = Math.floor(this.deps.clock.nowMs() / 1000);
      const tombstone = { contentType: '', size: 0, sha256: '', tombstone: true, expiresAtSeconds: nowSeconds + tombstoneRetentionSeconds };
      return { ...base, ...tombstone };
    }
    return {
      ...base,
      contentType: message.contentType,
      size: message.size,
      sha256: message.sha256,
      tombstone: false,
      ...(message.expiresAtSeconds === undefined ? {} : { expiresAtSeconds: message.expiresAtSeconds }),
      ...(message.size === 0 ? { value: new Uint8Array() } : content),
    };
  }
}
