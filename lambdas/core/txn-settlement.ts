// The transactions a range's change of owner strands (docs/failover.md, "Transactions"): those with an intent
// in a fenced range on the shard that owns it now. A failover and a rebalance's fenced cut-over both settle
// them under the fence: pending ones aborted, committed ones applied from their records on the new owners.
import { forAllBounded } from './bounded';
import { isCrashInjected } from './faults';
import { tombstoneRetentionSeconds } from './item';
import { isShardFailure } from './replication';
import { Ring, readRingState, tokenOf } from './ring';
import type {
  Clock,
  RangeOwner,
  RingStore,
  ShardHealthStore,
  StoredItem,
  TxnCommittedWrite,
  TxnKeyRef,
  TxnRecordStore,
  TxnWriter,
  ShardCopies,
} from '../ports';

export interface TxnSettlerDeps {
  rings: Pick<RingStore, 'readRing'>;
  shards: Pick<ShardCopies, 'applyReplica'>;
  records: Pick<TxnRecordStore, 'dueBetween' | 'decide' | 'find'>;
  /** When the ranges' previous owners were marked down: the window of deadlines read starts before it. */
  health: Pick<ShardHealthStore, 'all'>;
  clock: Clock;
  limits: {
    /** Committed transactions applied at once. */
    catchUpConcurrency: number;
    /**
     * The transactions settled are those whose deadline lies from this long before the shard was
     * marked down (or now) to `txnLookaheadMs` after now: an intent still unapplied on it was placed
     * before it failed, by a transaction the sweeper (which runs every minute) had not finished.
     */
    txnLookbackMs: number;
    txnLookaheadMs: number;
    txnPageSize: number;
  };
}

/** The transactions of the fenced ranges, found (and the pending ones aborted) beside the hand-over. */
export interface TxnsFound {
  examined: number;
  aborted: number;
  /** Committed ones whose recorded writes the new owners get. */
  committed: string[];
  withoutWrites: string[];
  intentsLeft: Array<{ namespace: string; key: string; txid: string }>;
}

/** What settling the failed owner's transactions did (the failover's report). */
export interface TxnSettlement {
  /** Transaction records read in the window. */
  examined: number;
  /** Pending ones with a key in a handed-over range, aborted (their intents are on the failed owner). */
  aborted: number;
  /** Committed ones with a key in a handed-over range, whose writes were applied from the record. */
  rolledForward: number;
  /** Versions those writes added on the new owners and the other replicas (0: they held them already). */
  versionsApplied: number;
  /** Committed ones decided before records carried their writes: left to the old owner's return. */
  withoutWrites: string[];
  /** Their intents left on the failed owner: cleared when it rejoins (rejoin.ts). */
  intentsLeft: Array<{ namespace: string; key: string; txid: string }>;
}

/** The transaction records' window is read in slices of the deadline index's partitions (a minute), this many at once. */
const settleWindowMs = 60_000;
const settleWindowsAtOnce = 8;

export class TxnSettler {
  constructor(private readonly deps: TxnSettlerDeps) {}

  /**
   * Step 3b, once the fence's lease wait is over (it runs beside the hand-over): the transactions with a
   * write in a fenced range on the shard that owns it now (its intents are there). A pending one is
   * aborted: its intent sits on a shard that is losing the range, so it must not commit (the conditional
   * decision races its coordinator fairly; if the coordinator commits first, it is committed). Returns
   * the committed ones, which `applyCommitted` applies once the new owners are chosen.
   */
  async findTransactions(ends: readonly number[]): Promise<TxnsFound> {
    const ring = new Ring(await readRingState(this.deps.rings));
    const fenced = new Set(ends);
    // Before the publication the ring still names each range's previous owner: the shard its intents are on.
    const previousTables = new Set(ends.map((end) => ring.shard(ring.rangeOf(end).owner).table));
    const stranded = (ref: TxnKeyRef) => {
      const range = ring.rangeOf(tokenOf(ref.namespace, ref.key));
      return fenced.has(range.end) && ring.shard(range.owner).table === ref.table;
    };
    const found: TxnsFound = { examined: 0, aborted: 0, committed: [], withoutWrites: [], intentsLeft: [] };
    const { txnLookbackMs, txnLookaheadMs, txnPageSize } = this.deps.limits;
    const nowMs = this.deps.clock.nowMs();
    const health = await this.deps.health.all();
    const downSinceMs = Math.min(
      nowMs,
      ...[...previousTables].map((table) => {
        const mark = health.get(table);
        return mark && mark.status !== 'available' ? mark.sinceMs : nowMs;
      }),
    );
    const untilMs = nowMs + txnLookaheadMs;
    const seen = new Set<string>();
    // The window is read a minute at a time, the minutes concurrently: the deadline index is partitioned
    // by minute, so one walk over the whole window would take one round trip per minute in turn.
    const windows: Array<[number, number]> = [];
    for (let fromMs = downSinceMs - txnLookbackMs; fromMs < untilMs; fromMs += settleWindowMs) {
      windows.push([fromMs, Math.min(untilMs, fromMs + settleWindowMs)]);
    }
    await forAllBounded(windows, settleWindowsAtOnce, async ([fromMs, toMs]) => {
      for (let cursor = fromMs; ;) {
        const page = await this.deps.records.dueBetween(cursor, toMs, txnPageSize);
        for (const record of page) {
          if (seen.has(record.txid)) continue;
          seen.add(record.txid);
          found.examined += 1;
          const left = record.keys.filter(stranded);
          if (left.length === 0) continue;
          found.intentsLeft.push(...left.map(({ namespace, key }) => ({ namespace, key, txid: record.txid })));
          let current = record;
          if (current.status === 'pending') {
            current = (await this.deps.records.decide(record.txid, 'aborted', { reason: 'failover' })) ?? record;
            if (current.status === 'aborted') found.aborted += 1;
          }
          if (current.status !== 'committed') continue;
          if (current.writes) found.committed.push(current.txid);
          else found.withoutWrites.push(current.txid);
        }
        if (page.length < txnPageSize) return;
        const last = page[page.length - 1]!.deadlineMs;
        // A full page of one millisecond's deadlines moves on by one (the seen set skips repeats).
        cursor = last === cursor ? last + 1 : last;
      }
    });
    return found;
  }

  /**
   * Step 3c, after the hand-over's catch-up and before the publication: each committed transaction
   * `findTransactions` returned has its writes in a handed-over range applied from its record on the new
   * owner and the range's other live candidates, version-guarded: a write the old owner had applied and
   * replicated is already there, and nothing changes.
   */
  async applyCommitted(choices: readonly RangeOwner[], found: TxnsFound): Promise<TxnSettlement> {
    const ring = new Ring(await readRingState(this.deps.rings));
    const newOwners = new Map(choices.map(({ end, owner }) => [end, owner]));
    const settlement: TxnSettlement = {
      examined: found.examined,
      aborted: found.aborted,
      rolledForward: 0,
      versionsApplied: 0,
      withoutWrites: found.withoutWrites,
      intentsLeft: found.intentsLeft,
    };
    await forAllBounded(found.committed, this.deps.limits.catchUpConcurrency, async (txid) => {
      const record = await this.deps.records.find(txid);
      if (record?.status !== 'committed' || !record.writes) return;
      const writer = { txid: record.txid, writes: record.writes.length };
      settlement.versionsApplied += await this.applyWrites(record.writes, writer, ring, newOwners);
      settlement.rolledForward += 1;
    });
    return settlement;
  }

  /** Steps 3b and 3c in turn (in process; the workflow runs 3b beside the hand-over). */
  async settle(choices: readonly RangeOwner[]): Promise<TxnSettlement> {
    return this.applyCommitted(choices, await this.findTransactions(choices.map((choice) => choice.end)));
  }

  private async applyWrites(
    writes: readonly TxnCommittedWrite[],
    writer: TxnWriter,
    ring: Ring,
    newOwners: ReadonlyMap<number, number>,
  ): Promise<number> {
    let applied = 0;
    const nowSeconds = nowSecondsOf(this.deps.clock);
    for (const write of writes) {
      const range = ring.rangeOf(write.token);
      const owner = newOwners.get(range.end);
      if (owner === undefined) continue;
      const item = committedItemOf(write, writer, this.deps.clock.nowMs());
      const copies = [owner, ...range.replicas.filter((shard) => shard !== owner && shard !== range.owner)];
      for (const shard of copies) {
        try {
          const listed = shard === owner;
          // On the new owner the write is the key's change (its old owner never applied the intent): the feed's.
          if (await this.deps.shards.applyReplica(ring.shard(shard).table, item, { nowSeconds, listed, ownerWrite: listed })) applied += 1;
        } catch (error) {
          // Another replica that cannot take it now gets it from anti-entropy; the new owner must take it.
          if (shard === owner || isCrashInjected(error) || !isShardFailure(error)) throw error;
        }
      }
    }
    return applied;
  }
}

function nowSecondsOf(clock: Pick<Clock, 'nowMs'>): number {
  return Math.floor(clock.nowMs() / 1000);
}

/** The item a committed transaction's write leaves on its key, as applying its intent would: with its writer. */
function committedItemOf(write: TxnCommittedWrite, writtenBy: TxnWriter, nowMs: number): StoredItem {
  const { namespace, key, token, version } = write;
  const written = { namespace, key, token, version, modifiedAtMs: nowMs, writtenBy };
  if (write.kind === 'delete') {
    const expiresAtSeconds = Math.floor(nowMs / 1000) + tombstoneRetentionSeconds;
    return { ...written, contentType: '', size: 0, sha256: '', tombstone: true, expiresAtSeconds };
  }
  const { contentType, size, sha256 } = write;
  return { ...written, contentType, size, sha256, tombstone: false, value: write.value ?? new Uint8Array(0) };
}
