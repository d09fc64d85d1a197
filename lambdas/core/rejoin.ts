// The return of a shard that lost its ranges to a failover (docs/failover.md, "Return"). It comes back
// as a replica of those ranges, never as their owner: maintenance probes it, replays its hints, and then
// reconciles it here, before it serves reads again.
//
// Per lost range, its copies are compared with the range's owner, from both token indexes:
// - a copy older than the owner's is caught up (version-guarded, as anti-entropy does);
// - a copy the owner never saw (a key the owner lacks, a higher version, or the same version with other
//   content) is divergent: an eventual write the shard acknowledged but never replicated before it
//   failed, or a write routed by a stale ring that was never acknowledged. It is reported (the
//   failover's record, a log line with the keys, a metric) and replaced by the owner's copy, or removed,
//   only while it is still the copy that was compared.
// Intents of the transactions the failover settled are cleared from its copies. Then the ring's
// rejoin entry goes (epoch + 1), and the shard may serve again.
import { forAllBounded } from './bounded';
import { rejoinedRing } from './failover';
import { isCrashInjected } from './faults';
import { Ring, readRingState } from './ring';
import type {
  Clock,
  FailoverLog,
  RejoinEntry,
  RingState,
  RingStore,
  ShardCopies,
  ShardIndexes,
  ShardItemReads,
  ShardTransactions,
  VersionEntry,
} from '../ports';

/** A copy on the rejoining shard that its range's owner never saw. */
export interface DivergentCopy {
  namespace: string;
  key: string;
  /** The rejoining shard's version, and the owner's (0: the owner has no copy). */
  version: number;
  ownerVersion: number;
  tombstone: boolean;
}

export interface RejoinReport {
  shard: number;
  failover: string;
  ranges: number;
  keysCompared: number;
  /** Copies behind the owner, brought up to its version. */
  caughtUp: number;
  /** Copies the owner never saw: the exact count, and the first ones with their keys. */
  divergent: number;
  divergentCopies: DivergentCopy[];
  /** Intents of settled transactions cleared from its copies. */
  intentsCleared: number;
  atMs: number;
}

export interface RejoinDeps {
  rings: Pick<RingStore, 'readRing' | 'publishRing'>;
  shards: ShardItemReads & ShardCopies & ShardIndexes & ShardTransactions;
  log: FailoverLog;
  clock: Clock;
  /** Told of every rejoin that found divergent copies (the log line and the metric). */
  onDivergent?: (report: RejoinReport) => void;
  limits: { copyConcurrency: number; divergentReportedMax: number; recordsSearched: number };
}

/** The intents a failover's settle step left on the failed owner, as its record keeps them. */
interface SettledIntent {
  namespace: string;
  key: string;
  txid: string;
}

export class RejoinService {
  constructor(private readonly deps: RejoinDeps) {}

  /** Whether the shard behind `table` lost ranges to a failover and has not rejoined yet. */
  async isRejoining(table: string): Promise<boolean> {
    const state = await this.ring();
    const shard = state.shards.find((candidate) => candidate.table === table);
    return shard !== undefined && (state.rejoining ?? []).some((entry) => entry.shard === shard.id);
  }

  /**
   * Reconciles the shard behind `table` with the owners of every range it lost, one failover at a time,
   * and removes its rejoin entries. Safe to run again: a reconciled copy compares equal.
   */
  async rejoin(table: string): Promise<RejoinReport[]> {
    const reports: RejoinReport[] = [];
    for (;;) {
      const state = await this.ring();
      const shard = state.shards.find((candidate) => candidate.table === table);
      const entry = shard && (state.rejoining ?? []).find((candidate) => candidate.shard === shard.id);
      if (!entry) return reports;
      const report = await this.reconcile(new Ring(state), entry);
      if (await this.deps.rings.publishRing(rejoinedRing(state, entry.shard, entry.failover))) {
        reports.push(report);
        await this.recordOn(entry.failover, report);
        if (report.divergent > 0) this.deps.onDivergent?.(report);
      }
    }
  }

  private async reconcile(ring: Ring, entry: RejoinEntry): Promise<RejoinReport> {
    const table = ring.shard(entry.shard).table;
    const report: RejoinReport = {
      shard: entry.shard,
      failover: entry.failover,
      ranges: 0,
      keysCompared: 0,
      caughtUp: 0,
      divergent: 0,
      divergentCopies: [],
      intentsCleared: 0,
      atMs: this.deps.clock.nowMs(),
    };
    for (const end of entry.ends) {
      const range = ring.rangeOf(end);
      // Moved back to it already (an admin's move-back reconciles first): nothing to compare against.
      if (range.owner === entry.shard) continue;
      const ownerTable = ring.shard(range.owner).table;
      const [mine, theirs] = await Promise.all([
        this.deps.shards.versionsInRange(table, range),
        this.deps.shards.versionsInRange(ownerTable, range),
      ]);
      report.ranges += 1;
      await this.reconcileRange(table, ownerTable, mine, theirs, report);
    }
    report.intentsCleared = await this.clearSettledIntents(table, entry.failover);
    return report;
  }

  private async reconcileRange(
    table: string,
    ownerTable: string,
    mine: readonly VersionEntry[],
    theirs: readonly VersionEntry[],
    report: RejoinReport,
  ): Promise<void> {
    const owners = new Map(theirs.map((entry) => [`${entry.namespace}#${entry.key}`, entry]));
    const mineById = new Map(mine.map((entry) => [`${entry.namespace}#${entry.key}`, entry]));
    const ids = new Set([...mineById.keys(), ...owners.keys()]);
    report.keysCompared += ids.size;
    const nowSeconds = Math.floor(this.deps.clock.nowMs() / 1000);
    await forAllBounded([...ids], this.deps.limits.copyConcurrency, async (id) => {
      const copy = mineById.get(id);
      const owner = owners.get(id);
      const ref = (copy ?? owner)!;
      if (copy && isDivergent(copy, owner)) {
        const current = owner ? await this.deps.shards.get(ownerTable, ref.namespace, ref.key, { consistent: true }) : undefined;
        const { intent: _intent, ...committed } = current ?? { intent: undefined };
        const replacement = current ? (committed as typeof current) : undefined;
        if (
          !(await this.deps.shards.resetCopy(table, { namespace: ref.namespace, key: ref.key, expectVersion: copy.version }, replacement))
        ) {
          return;
        }
        report.divergent += 1;
        if (report.divergentCopies.length < this.deps.limits.divergentReportedMax) {
          report.divergentCopies.push({
            namespace: copy.namespace,
            key: copy.key,
            version: copy.version,
            ownerVersion: owner?.version ?? 0,
            tombstone: copy.tombstone,
          });
        }
        return;
      }
      if (owner && (copy?.version ?? 0) < owner.version) {
        // The index may lag its table: the owner's item, read consistently, copied with the version guard.
        const item = await this.deps.shards.get(ownerTable, owner.namespace, owner.key, { consistent: true });
        if (item && (await this.deps.shards.applyReplica(table, item, { nowSeconds, listed: false }))) report.caughtUp += 1;
      }
    });
  }

  /** Clears, from the rejoining shard's copies, the intents of the transactions its failover settled. */
  private async clearSettledIntents(table: string, failover: string): Promise<number> {
    const record = (await this.deps.log.recent(this.deps.limits.recordsSearched)).find((candidate) => candidate.id === failover);
    const left = intentsOf(record?.report);
    let cleared = 0;
    await forAllBounded(left, this.deps.limits.copyConcurrency, async (intent) => {
      if (await this.deps.shards.clearIntent(table, intent)) cleared += 1;
    });
    return cleared;
  }

  /** The rejoin's report goes on the failover's record, next to what the failover did. */
  private async recordOn(failover: string, report: RejoinReport): Promise<void> {
    try {
      const record = (await this.deps.log.recent(this.deps.limits.recordsSearched)).find((candidate) => candidate.id === failover);
      if (!record) return;
      const previous = typeof record.report === 'object' && record.report !== null ? record.report : {};
      await this.deps.log.save({ ...record, updatedAtMs: this.deps.clock.nowMs(), report: { ...previous, rejoin: report } });
    } catch (error) {
      // The ring already says it rejoined, and onDivergent logs the keys; the record is a convenience.
      if (isCrashInjected(error)) throw error;
    }
  }

  private async ring(): Promise<RingState> {
    return readRingState(this.deps.rings);
  }
}

/**
 * A copy the owner never saw: the owner lacks the key, holds an older version, or holds the same version
 * with other content (two histories that each reached that version).
 */
export function isDivergent(copy: VersionEntry, owner: VersionEntry | undefined): boolean {
  if (!owner) return true;
  if (copy.version !== owner.version) return copy.version > owner.version;
  if (copy.tombstone !== owner.tombstone) return true;
  return copy.sha256 !== undefined && owner.sha256 !== undefined && copy.sha256 !== owner.sha256;
}

function intentsOf(report: unknown): SettledIntent[] {
  const transactions = (report as { transactions?: { intentsLeft?: unknown } } | undefined)?.transactions;
  const left = transactions?.intentsLeft;
  if (!Array.isArray(left)) return [];
  return left.filter(
    (entry): entry is SettledIntent =>
      typeof entry === 'object' &&
      entry !== null &&
      typeof (entry as SettledIntent).namespace === 'string' &&
      typeof (entry as SettledIntent).key === 'string' &&
      typeof (entry as SettledIntent).txid === 'string',
  );
}
