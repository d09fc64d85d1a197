// The primary region's side of DR (docs/dr.md): each write's key message sent to the backup ahead of its value
// (a key-sync write waits for it; the shard streams ship every write), the values uploaded after their keys.
import { forAllBounded } from './bounded';
import { keyHashOf, keyMessageOf, needsNoValue, valueObjectKeyOf } from './dr-messages';
import { carriesCommittedChange, type OwnerChange } from './replication';
import { inHistory, retryFrom, type OwnershipWeighing } from './stream-ownership';
import type { BlobStore, Clock, DrKeyChannel, DrKeyMessage, DrMetrics, DrWriteNotice, FaultInjector, StoredItem } from '../ports';

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
  /** Writes a table made of a key whose range it no longer owned, which never reached the range's owner (StreamOwnership). */
  notInEffect: number;
  /** Values a newer write replaced before they could be read (their key's newer version follows). */
  superseded: number;
  /** Index of the first change that could not be shipped; the stream retries from there. */
  firstFailedIndex?: number;
  /** Set when that change lies in a range under a fence: it is weighed again once the fence lifts. */
  awaitingFence?: true;
}

/** Ships the primary's writes to the backup region: key messages ahead of values. */
export class DrShipper {
  constructor(private readonly deps: DrShipperDeps) {}

  /** A key-sync write's notice or its withdrawal (docs/dr.md): resolves once the backup's queue holds it. */
  async notify(notice: DrWriteNotice): Promise<void> {
    const started = this.deps.clock?.monotonicMs();
    await this.deps.keys.send([notice]);
    if (started !== undefined && this.deps.clock && notice.notice === 'announced') {
      this.deps.metrics?.keySyncSent(this.deps.clock.monotonicMs() - started);
    }
  }

  /** A committed transaction's writes (key-sync): resolves once the backup's queue holds all their messages. */
  async announceAll(messages: readonly DrKeyMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const started = this.deps.clock?.monotonicMs();
    await this.deps.keys.send(messages);
    if (started !== undefined && this.deps.clock) this.deps.metrics?.keySyncSent(this.deps.clock.monotonicMs() - started);
  }

  /**
   * The writes of one shard stream batch in their keys' history, as `weighing` stands them (StreamOwnership: a former
   * owner's write refused to its client is not shipped, so the backup never learns a version the primary never had),
   * newest version per key: their key messages first (a `key-sync` write's message is sent again here and dropped by
   * the queue's deduplication), then their values. A failure reports the first change to retry from; shipping a
   * version twice is harmless.
   */
  async shipOwnerChanges(changes: readonly OwnerChange[], weighing: OwnershipWeighing): Promise<ShipResult> {
    const result: ShipResult = { shipped: 0, ignored: 0, superseded: 0, notInEffect: 0 };
    const newest = new Map<string, { index: number; item: StoredItem }>();
    // A write that a newer one replaced within the batch still has its key message sent when it is a
    // transaction's (the backup counts a transaction's writes before applying any of them) or carries a
    // write id (its notice is settled by it).
    const replacedWrites: StoredItem[] = [];
    weighing.standings.forEach((standing, index) => {
      const change = changes[index]!;
      if (standing === 'notInEffect') {
        result.notInEffect += 1;
        return;
      }
      if (!inHistory(standing) || !carriesCommittedChange(change)) {
        result.ignored += 1;
        return;
      }
      const id = keyHashOf(change.item.namespace, change.item.key);
      const seen = newest.get(id);
      if (seen) result.ignored += 1;
      if (!seen || seen.item.version < change.item.version) newest.set(id, { index, item: change.item });
      const replaced = seen && seen.item.version < change.item.version ? seen.item : seen ? change.item : undefined;
      // A replaced write's key message still settles its notice (its write id), as a newer one would not.
      if (replaced?.writtenBy || replaced?.writeId !== undefined) replacedWrites.push(replaced);
    });
    const stopped = weighing.stoppedAt ? retryFrom(weighing.stoppedAt) : {};
    const batch = [...newest.values()];
    try {
      const keyMessages = [...batch.map(({ item }) => item), ...replacedWrites].map((item) => keyMessageOf(item));
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
    if (failedIndexes.length) return { ...result, firstFailedIndex: Math.min(...failedIndexes) };
    return { ...result, ...stopped };
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
