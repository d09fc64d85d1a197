// Cross-region disaster recovery (docs/dr.md). The primary sends each write's small key message to the
// backup region ahead of its value; the backup records the key as pending until the value is applied,
// and a read of a pending key waits for it or is refused, so the backup never serves a value older than
// one it knows was written. After a disaster, a key whose value never came is refused as lost.
import { createHash } from 'node:crypto';
import { drPrefixes } from '../../schemas/topology';
import { forAllBounded } from './bounded';
import { RingstoreError } from './errors';
import { tombstoneRetentionSeconds } from './item';
import { carriesCommittedChange, type OwnerChange } from './replication';
import { type Ring, tokenOf } from './ring';
import type { RingSource } from './ring-source';
import type {
  BlobStore,
  Clock,
  DrKeyChannel,
  DrKeyMessage,
  DrMetrics,
  DrSyncState,
  DrSyncStateStore,
  FaultInjector,
  PendingEntry,
  PendingStore,
  ShardStore,
  StoredItem,
} from '../ports';

/** Folder of a key in the pending table and in the value objects: a fixed-length name for any key. */
export function keyHashOf(namespace: string, key: string): string {
  return createHash('sha256').update(`${namespace}#${key}`).digest('hex').slice(0, 32);
}

/** Versions are zero-padded in object keys so one key's values list in version order. */
const versionDigits = 16;

/**
 * Where one version's value travels to in the backup bucket. The sha256 prefix keeps two different
 * values written at one version (a stray write of a shard a failover took over) from overwriting each other.
 */
export function valueObjectKeyOf(message: Pick<DrKeyMessage, 'namespace' | 'key' | 'version' | 'sha256'>): string {
  const version = String(message.version).padStart(versionDigits, '0');
  return `${drPrefixes.values}${keyHashOf(message.namespace, message.key)}/${version}-${message.sha256.slice(0, 16)}`;
}

const valueObjectKeyPattern = new RegExp(`^${drPrefixes.values}([0-9a-f]{32})/(\\d{${versionDigits}})-([0-9a-f]{16})$`);

/** The key hash and version a value object's name carries; undefined for any other object. */
export function parseValueObjectKey(objectKey: string): { keyHash: string; version: number; shaPrefix: string } | undefined {
  const match = valueObjectKeyPattern.exec(objectKey);
  if (!match) return undefined;
  return { keyHash: match[1]!, version: Number(match[2]), shaPrefix: match[3]! };
}

/**
 * The FIFO message group: one per key, so one key's messages arrive in order while different keys flow
 * in parallel (a high-throughput FIFO queue scales with the number of groups).
 */
export function messageGroupOf(message: Pick<DrKeyMessage, 'namespace' | 'key'>): string {
  return keyHashOf(message.namespace, message.key);
}

/** The FIFO deduplication id: a message sent twice for one version (write path and stream) is delivered once. */
export function deduplicationIdOf(message: Pick<DrKeyMessage, 'namespace' | 'key' | 'version'>): string {
  return `${keyHashOf(message.namespace, message.key)}-${message.version}`;
}

export function keyMessageOf(item: StoredItem): DrKeyMessage {
  const writer = item.writtenBy;
  return {
    namespace: item.namespace,
    key: item.key,
    version: item.version,
    ...(writer ? { txid: writer.txid, txnWrites: writer.writes } : {}),
    writtenAtMs: item.modifiedAtMs ?? 0,
    size: item.size,
    sha256: item.sha256,
    contentType: item.contentType,
    deleted: item.tombstone,
    ...(item.expiresAtSeconds === undefined || item.tombstone ? {} : { expiresAtSeconds: item.expiresAtSeconds }),
  };
}

/** A message whose value is the message itself: a delete, or an empty value (no object travels). */
export function needsNoValue(message: DrKeyMessage): boolean {
  return message.deleted || message.size === 0;
}

/** A write of a transaction that wrote several keys: the backup applies it with the others, as a unit. */
export function isTransactionMember(message: DrKeyMessage): message is DrKeyMessage & { txid: string; txnWrites: number } {
  return message.txid !== undefined && (message.txnWrites ?? 1) > 1;
}

// ---------------------------------------------------------------------------------------------------
// Primary region

export interface DrShipperDeps {
  keys: DrKeyChannel;
  /** The backup region's bucket, where values travel to. */
  backupValues: BlobStore;
  /** This region's blob bucket, where values over the inline limit live. */
  blobs: BlobStore;
  faults?: FaultInjector;
  limits: { shipConcurrency: number };
  /** Times the write path's key-sync messages. */
  metrics?: DrMetrics;
  clock?: Clock;
  /**
   * `keyFirst` (Ringstore): every key message of a batch is durable in the backup before any value
   * leaves. `together`: each value, then its key message, as a store that ships key and value as one
   * does; the backup learns of a write only with its value (the benchmark's baseline, never deployed).
   */
  order?: 'keyFirst' | 'together';
}

export interface ShipResult {
  shipped: number;
  /** Records of replica copies, of intents only, and older versions of a key shipped in the same batch. */
  ignored: number;
  /** Values a newer write replaced before they could be read (their key's newer version follows). */
  superseded: number;
  /** Index of the first change that could not be shipped; the stream retries from there. */
  firstFailedIndex?: number;
}

/** Ships the primary's writes to the backup region: key messages ahead of values. */
export class DrShipper {
  constructor(private readonly deps: DrShipperDeps) {}

  /** The write path of a `key-sync` namespace: resolves once the backup's queue holds the key message. */
  async announce(item: StoredItem): Promise<void> {
    await this.announceAll([keyMessageOf(item)]);
  }

  /** A committed transaction's writes (key-sync): resolves once the backup's queue holds all their messages. */
  async announceAll(messages: readonly DrKeyMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const started = this.deps.clock?.monotonicMs();
    await this.deps.keys.send(messages);
    if (started !== undefined && this.deps.clock) this.deps.metrics?.keySyncSent(this.deps.clock.monotonicMs() - started);
  }

  /**
   * The owner changes of one shard stream batch, newest version per key: their key messages first (a
   * `key-sync` write's message is sent again here and dropped by the queue's deduplication), then their
   * values. A failure reports the first change to retry from; shipping a version twice is harmless.
   */
  async shipOwnerChanges(changes: readonly OwnerChange[], ring: Ring): Promise<ShipResult> {
    const result: ShipResult = { shipped: 0, ignored: 0, superseded: 0 };
    const newest = new Map<string, { index: number; item: StoredItem }>();
    // A transaction's write that a newer one replaced within the batch still has its key message sent:
    // the backup counts a transaction's writes before applying any of them.
    const replacedTransactionWrites: StoredItem[] = [];
    changes.forEach((change, index) => {
      if (ring.ownerOf(change.item.token).table !== change.sourceTable || !carriesCommittedChange(change)) {
        result.ignored += 1;
        return;
      }
      const id = keyHashOf(change.item.namespace, change.item.key);
      const seen = newest.get(id);
      if (seen) result.ignored += 1;
      if (!seen || seen.item.version < change.item.version) newest.set(id, { index, item: change.item });
      const replaced = seen && seen.item.version < change.item.version ? seen.item : seen ? change.item : undefined;
      if (replaced?.writtenBy) replacedTransactionWrites.push(replaced);
    });
    const batch = [...newest.values()];
    try {
      const keyMessages = [...batch.map(({ item }) => item), ...replacedTransactionWrites].map((item) => keyMessageOf(item));
      if (this.deps.order !== 'together') await this.deps.keys.send(keyMessages);
      this.deps.faults?.reach('dr.afterKeys');
    } catch {
      return { ...result, firstFailedIndex: Math.min(...batch.map(({ index }) => index)) };
    }
    const failedIndexes: number[] = [];
    await forAllBounded(batch, this.deps.limits.shipConcurrency, async ({ index, item }) => {
      try {
        const outcome = await this.shipValue(item);
        if (outcome === 'superseded') result.superseded += 1;
        else result.shipped += 1;
      } catch {
        failedIndexes.push(index);
      }
    });
    if (failedIndexes.length) result.firstFailedIndex = Math.min(...failedIndexes);
    return result;
  }

  private async shipValue(item: StoredItem): Promise<'shipped' | 'superseded'> {
    const message = keyMessageOf(item);
    if (!needsNoValue(message)) {
      const bytes = item.value ?? (await this.blobBytes(item));
      if (bytes === undefined) return 'superseded';
      await this.deps.backupValues.put(valueObjectKeyOf(message), bytes, message.contentType);
      this.deps.faults?.reach('dr.afterValue');
    }
    if (this.deps.order === 'together') await this.deps.keys.send([message]);
    return 'shipped';
  }

  /** A large value's bytes; undefined once a newer write replaced (and removed) them. */
  private async blobBytes(item: StoredItem): Promise<Uint8Array | undefined> {
    const objectKey = item.blob?.objectKey;
    if (!objectKey || (await this.deps.blobs.size(objectKey)) === undefined) return undefined;
    return this.deps.blobs.get(objectKey);
  }
}

/**
 * Starts (or restarts) the initial sync from the first range (POST /v1/admin/dr/sync); one already
 * running goes on as it is. Maintenance ships it (InitialSync.step).
 */
export async function startInitialSync(state: DrSyncStateStore, ring: Ring, clock: Clock): Promise<DrSyncState> {
  const current = await state.readSync();
  if (current?.status === 'running') return current;
  const now = clock.nowMs();
  const started: DrSyncState = {
    status: 'running',
    nextRange: 0,
    ranges: ring.ranges().length,
    keys: 0,
    startedAtMs: now,
    updatedAtMs: now,
  };
  await state.saveSync(started);
  return started;
}

export interface InitialSyncDeps {
  shipper: Pick<DrShipper, 'shipOwnerChanges'>;
  shards: ShardStore;
  state: DrSyncStateStore;
  clock: Clock;
  limits: { rangesPerRun: number; readConcurrency: number };
}

/**
 * The primary's initial sync: each owner's keys of each token range (from the token index, then the
 * items), shipped as the stream would ship them, a slice of ranges per maintenance run. Writes made
 * meanwhile are shipped by the stream too; the backup applies whichever version is newer.
 */
export class InitialSync {
  constructor(private readonly deps: InitialSyncDeps) {}

  /**
   * Ships the next slice of ranges of a running sync and saves where it stopped; a failure leaves the
   * saved range as it was, so the next run ships it again (the backup's version guards make that harmless).
   */
  async step(ring: Ring): Promise<DrSyncState | undefined> {
    const state = await this.deps.state.readSync();
    if (state?.status !== 'running') return state;
    const ranges = ring.ranges();
    let { nextRange, keys } = state;
    for (const range of ranges.slice(nextRange, nextRange + this.deps.limits.rangesPerRun)) {
      const owner = ring.shard(range.owner).table;
      const entries = await this.deps.shards.versionsInRange(owner, range);
      const items: StoredItem[] = [];
      await forAllBounded(entries, this.deps.limits.readConcurrency, async (entry) => {
        const item = await this.deps.shards.get(owner, entry.namespace, entry.key, { consistent: true });
        if (item && item.version > 0) items.push(item);
      });
      const result = await this.deps.shipper.shipOwnerChanges(
        items.map((item) => ({ sourceTable: owner, item })),
        ring,
      );
      if (result.firstFailedIndex !== undefined)
        throw new RingstoreError('dr.backupUnreachable', `the initial sync could not ship range ${nextRange}; the next run retries it`, {
          retryable: true,
        });
      keys += items.length;
      nextRange += 1;
    }
    const next: DrSyncState = {
      ...state,
      nextRange,
      keys,
      ranges: ranges.length,
      status: nextRange >= ranges.length ? 'completed' : 'running',
      updatedAtMs: this.deps.clock.nowMs(),
    };
    await this.deps.state.saveSync(next);
    return next;
  }
}

// ---------------------------------------------------------------------------------------------------
// Backup region

export interface BackupApplierDeps {
  pending: PendingStore;
  /** This region's blob bucket: the values arrive in it, and large ones stay there as the items' blobs. */
  values: BlobStore;
  shards: ShardStore;
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

/**
 * The backup's two appliers. Whichever of a write's key message and value arrives second applies the
 * value; a key is pending from its message until then. Every step is idempotent and version-guarded,
 * so duplicated, reordered and late messages and values never move a key backwards.
 */
export class BackupApplier {
  constructor(private readonly deps: BackupApplierDeps) {}

  /** The key-applier: one key message from the queue. */
  async receiveKey(message: DrKeyMessage): Promise<KeyOutcome> {
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
        report.examined += 1;
        if (promoted) {
          await this.deps.pending.clear(entry.keyHash, entry.version);
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

// ---------------------------------------------------------------------------------------------------
// Reads in the backup region

export type GateVerdict =
  | { kind: 'serve' }
  | { kind: 'pending'; version: number; writtenAtMs: number }
  | { kind: 'lost'; version: number; txid?: string; writtenAtMs: number };

/**
 * Whether the copy a backup read found may be served, given the key's pending entries read before it.
 * The newest entry ahead of the copy decides: still pending, the read waits for it; lost, the key is
 * refused. Entries the copy has caught up with (applied, or superseded by a newer write) are no bar.
 */
export function gateVerdict(
  entries: readonly PendingEntry[],
  item: StoredItem | undefined,
  options: { promoted?: boolean } = {},
): GateVerdict {
  const held = item?.version ?? 0;
  // In a promoted region only lost entries count: a pending one is a shipment of a write the old primary
  // never acknowledged, which the sweep drops.
  const counted = options.promoted ? entries.filter((entry) => entry.state === 'lost') : entries;
  let newest: PendingEntry | undefined;
  for (const entry of counted) if (entry.version > held && (!newest || entry.version > newest.version)) newest = entry;
  if (!newest) return { kind: 'serve' };
  if (newest.state === 'lost') {
    return { kind: 'lost', version: newest.version, writtenAtMs: newest.writtenAtMs, ...(newest.txid ? { txid: newest.txid } : {}) };
  }
  return { kind: 'pending', version: newest.version, writtenAtMs: newest.writtenAtMs };
}

function lostKeyError(key: string, verdict: Extract<GateVerdict, { kind: 'lost' }>): RingstoreError {
  return new RingstoreError(
    'dr.lost',
    `key ${key} was written at version ${verdict.version} in the primary region, and that value was lost in the disaster: ` +
      'this region refuses the key until it is written again (see GET /v1/admin/dr/report)',
    {
      details: {
        key,
        version: verdict.version,
        writtenAt: new Date(verdict.writtenAtMs).toISOString(),
        ...(verdict.txid ? { txid: verdict.txid } : {}),
      },
    },
  );
}

export interface PendingGateDeps {
  pending: PendingStore;
  clock: Clock;
  sleep: (ms: number) => Promise<void>;
  faults?: FaultInjector;
  limits: { pendingWaitMs: number; pendingPollMs: number };
  /** Whether this region has been promoted (a cached read is fine: the state only moves forward). */
  promoted?: () => Promise<boolean>;
}

/** The backup region's read gate: every read of a key checks the key's pending entries first. */
export class PendingGate {
  constructor(private readonly deps: PendingGateDeps) {}

  /**
   * `read` (the key's copy in this region) if no write the backup knows of is ahead of it; else waits
   * up to the bounded time for the value, then answers 503 `replication.pending`. A lost key is 410.
   * The entries are read before the copy: a value applied in between clears its entry only after the
   * copy holds it, so a copy read later is at least as new as every entry that was missing.
   */
  async read(namespace: string, key: string, read: () => Promise<StoredItem | undefined>): Promise<StoredItem | undefined> {
    const { pending, clock, limits } = this.deps;
    const keyHash = keyHashOf(namespace, key);
    const started = clock.nowMs();
    for (;;) {
      // The deliberately broken mode the disaster suite must catch (tests only): no pending check.
      const entries = this.deps.faults?.isBroken('drServeWithoutPendingCheck') ? [] : await pending.entriesOf(keyHash);
      const item = await read();
      const verdict = gateVerdict(entries, item, { promoted: (await this.deps.promoted?.()) ?? false });
      if (verdict.kind === 'serve') return item;
      if (verdict.kind === 'lost') throw lostKeyError(key, verdict);
      const waitedMs = clock.nowMs() - started;
      if (waitedMs >= limits.pendingWaitMs) {
        throw new RingstoreError(
          'replication.pending',
          `key ${key} was written at version ${verdict.version} in the primary region and its value has not reached this region yet; retry`,
          { retryable: true, details: { key, version: verdict.version, waitedMs } },
        );
      }
      await this.deps.sleep(Math.min(limits.pendingPollMs, limits.pendingWaitMs - waitedMs));
    }
  }

  /**
   * A promoted region's check of a key a transaction touches (its reads do not pass `read`): 410 if a
   * write lost in the disaster is ahead of the key's copy. `read` is called only when the key has lost entries.
   */
  async assertNotLost(namespace: string, key: string, read: () => Promise<StoredItem | undefined>): Promise<void> {
    const lost = (await this.deps.pending.entriesOf(keyHashOf(namespace, key))).filter((entry) => entry.state === 'lost');
    if (lost.length === 0) return;
    const verdict = gateVerdict(lost, await read(), { promoted: true });
    if (verdict.kind === 'lost') throw lostKeyError(key, verdict);
  }
}
