// The primary's settling of write notices left behind in its backup (docs/dr.md, "When the backup knows of a
// write"). A key-sync write's notice is settled by the stream's key message carrying its write id, or by
// its withdrawal when the owner write fails. A writer that died between its notice and its owner write (or
// whose withdrawal failed) leaves the notice pending, and the key unreadable in the backup: this settles it.
import { keyMessageOf } from './dr-messages';
import type { Clock, DrKeyChannel, PendingStore, StoredItem } from '../ports';

export interface NoticeSettlerDeps {
  /** The backup's pending table, across the link. */
  backupPending: Pick<PendingStore, 'scanNotices'>;
  /** The key's owner item in this region, read strongly (a tombstone included); undefined if it has none. */
  readOwner: (namespace: string, key: string) => Promise<StoredItem | undefined>;
  keys: DrKeyChannel;
  clock: Pick<Clock, 'nowMs'>;
  limits: {
    /**
     * A notice older than this is settled. Longer than any owner write can take to land once sent (the
     * write path's request timeouts are seconds), so the owner's item, read now, holds that write's
     * version or a newer one, if the write happened at all.
     */
    settleAfterMs: number;
    pageSize: number;
    pagesMax: number;
  };
}

export interface NoticeSettleReport {
  examined: number;
  /** Notices settled by the key's current version. */
  settled: number;
  /** Notices of a key the owner does not hold: the write never happened; withdrawn. */
  withdrawn: number;
}

/** Settles the backup's old write notices against this region's owners (run by the primary's maintenance). */
export class NoticeSettler {
  constructor(private readonly deps: NoticeSettlerDeps) {}

  /**
   * Each notice older than the settle time gets the key's current owner version as a key message carrying
   * the notice's write id: the backup waits for that version, which is the noticed write's or newer (the
   * write cannot land after the settle time), and drops the notice. A key the owner does not hold at all
   * was never written by it: the notice is withdrawn. `olderThanMs` replaces the settle time only where no
   * write can be in flight (a test whose load has stopped).
   */
  async settleOld(options: { olderThanMs?: number } = {}): Promise<NoticeSettleReport> {
    const { backupPending, readOwner, keys, clock, limits } = this.deps;
    const report: NoticeSettleReport = { examined: 0, settled: 0, withdrawn: 0 };
    const cutoff = clock.nowMs() - (options.olderThanMs ?? limits.settleAfterMs);
    let cursor: string | undefined;
    for (let page = 0; page < limits.pagesMax; page += 1) {
      const scanned = await backupPending.scanNotices(limits.pageSize, cursor);
      for (const notice of scanned.entries) {
        if (notice.writeId === undefined || notice.writtenAtMs > cutoff) continue;
        report.examined += 1;
        const { namespace, key, writeId, writtenAtMs } = notice;
        const item = await readOwner(namespace, key);
        if (item) {
          await keys.send([{ ...keyMessageOf(item), writeId }]);
          report.settled += 1;
        } else {
          await keys.send([{ notice: 'withdrawn', namespace, key, writeId, writtenAtMs }]);
          report.withdrawn += 1;
        }
      }
      cursor = scanned.cursor;
      if (!cursor) break;
    }
    return report;
  }
}
