// Bringing replicas back in line (docs/consistency.md): hinted handoff replays the failure log onto a shard that
// returns, before it serves reads again; anti-entropy compares replicas range by range and repairs what
// every other path missed (a record the stream dropped, a hint that could not be written).
import { forAllBounded } from './bounded';
import { isShardFailure } from './replication';
import { isCrashInjected } from './faults';
import type { Ring, TokenRange } from './ring';
import type { RejoinReport } from './rejoin';
import type {
  Clock,
  Hint,
  HintStore,
  MaintenanceStateStore,
  ShardHealthStore,
  ShardCopies,
  ShardIndexes,
  ShardItemReads,
  VersionEntry,
  FaultInjector,
} from '../ports';
import type { HintBacklogMetrics } from '../ports/observability';

export interface MaintenanceDeps {
  shards: ShardItemReads & ShardCopies & ShardIndexes;
  hints: HintStore;
  health: ShardHealthStore;
  clock: Clock;
  state: MaintenanceStateStore;
  faults?: FaultInjector;
  /**
   * Told of a shard that is marked unavailable and still answers no probe (the periodic probe of
   * automatic failover: it starts the shard's failover). Absent: nothing but hint replay waits for it.
   */
  stillDown?: (table: string, nowMs: number) => Promise<void>;
  /**
   * Reconciles a shard that lost ranges to a failover, after its hints and before it serves again
   * (rejoin.ts). Absent: such a shard is left recovering (it never serves its stale copies).
   */
  rejoin?: (table: string) => Promise<RejoinReport[]>;
  /** Told each shard's hint backlog after every run's replay (the hints-backlog alarm). */
  metrics?: HintBacklogMetrics;
  limits: {
    hintReplayPageSize: number;
    hintReplayConcurrency: number;
    antiEntropyRangesPerRun: number;
    /**
     * A scheduled run compares its slice only when the last slice began at least this long ago (0: every
     * run), so anti-entropy keeps one pace whatever the schedule: every run of AWS's one-minute schedule
     * compares, one in fifteen of the local cloud's 2-second runs (that frequent for probes and hint replay).
     */
    antiEntropyMinIntervalMs: number;
    /**
     * How long a shard stays recovering before it may serve again: writers decide "hint, do not try"
     * from a health view up to this old, so a hint can still arrive this long after recovery began.
     */
    recoverySettleMs: number;
  };
}

export interface MaintenanceReport {
  startedAt: string;
  handoff: ReplayReport[];
  antiEntropy: AntiEntropyReport;
}

export interface ReplayReport {
  table: string;
  /** The health transition this pass made, if any. */
  transition?: 'recovering' | 'available';
  /** Hints applied to the replica (it did not hold that version yet). */
  applied: number;
  /** Hints the replica no longer needed (it already held that version or a newer one). */
  alreadyCurrent: number;
  durationMs: number;
  /** Hints replayed per second during this pass (0 when there were none). */
  hintsPerSecond: number;
  /** False when the shard failed again during replay: it stays out of reads. */
  completed: boolean;
  /** A shard back from a failover: its reconciliation with the new owners of the ranges it lost. */
  rejoin?: RejoinReport[];
}

export interface Repair {
  table: string;
  namespace: string;
  key: string;
  /** The version the replica held (0: none). */
  from: number;
  to: number;
}

export interface AntiEntropyReport {
  rangesCompared: number;
  keysCompared: number;
  repairedCount: number;
  /** The first repairs, for the report (bounded). */
  repairs: Repair[];
  /** Ranges skipped because a replica was unavailable (hinted handoff covers those). */
  rangesSkipped: number;
  /** Index of the range the next run starts at (the job walks the ring in slices). */
  nextRange: number;
  /** Ranges of this run's slice left for the next run because its time budget ran out (0: the slice was done). */
  rangesLeft: number;
  durationMs: number;
  /** Set when this scheduled run compared nothing because the last slice is recent (antiEntropyMinIntervalMs): when the next is due. */
  nextSliceAt?: string;
}

/** The report of an anti-entropy slice before it compares anything: it resumes at `nextRange`. */
function nothingCompared(nextRange: number): AntiEntropyReport {
  return { rangesCompared: 0, keysCompared: 0, repairedCount: 0, repairs: [], rangesSkipped: 0, nextRange, rangesLeft: 0, durationMs: 0 };
}

/** Repairs listed in a report; the count is always exact. */
export const repairsReportedMax = 100;

/** The key a probe reads to see whether a shard answers again; it never exists. */
export const probeKey = { namespace: '~ringstore', key: 'probe' } as const;

export class MaintenanceService {
  constructor(private readonly deps: MaintenanceDeps) {}

  /** Each shard's health and waiting hints, with the last run's report. */
  async status(ring: Ring) {
    const health = await this.deps.health.all();
    const shards = await Promise.all(
      ring.shards.map(async (shard) => {
        const record = health.get(shard.table);
        return {
          id: shard.id,
          table: shard.table,
          health: record?.status ?? ('available' as const),
          ...(record ? { since: new Date(record.sinceMs).toISOString() } : {}),
          ...(record?.reason ? { reason: record.reason } : {}),
          pendingHints: await this.deps.hints.count(shard.table),
        };
      }),
    );
    const state = await this.deps.state.readMaintenanceState();
    return { epoch: ring.epoch, shards, ...(state ? { lastMaintenance: state.lastReport as MaintenanceReport } : {}) };
  }

  /**
   * One pass: hinted handoff, then anti-entropy over `rangesMax` ranges from where the last run stopped. Without
   * `rangesMax` (the scheduled run) the slice is the configured one, compared only when the last slice is
   * older than `antiEntropyMinIntervalMs`. With `untilMs`, anti-entropy starts no range after that instant (it
   * answers what is left), so a caller with a deadline (an API request) gets an answer instead of its timeout.
   */
  async run(ring: Ring, options: { rangesMax?: number; untilMs?: number } = {}): Promise<MaintenanceReport> {
    const startedMs = this.deps.clock.nowMs();
    const startedAt = new Date(startedMs).toISOString();
    const { reports: handoff, drained } = await this.handoffPass(ring);
    await this.reportHintBacklog(ring, drained);
    const state = await this.deps.state.readMaintenanceState();
    const fromRange = state?.nextRange ?? 0;
    const sliceDueMs = (state?.antiEntropyAtMs ?? -Infinity) + this.deps.limits.antiEntropyMinIntervalMs;
    if (state && options.rangesMax === undefined && startedMs < sliceDueMs) {
      const antiEntropy = { ...nothingCompared(fromRange % ring.ranges().length), nextSliceAt: new Date(sliceDueMs).toISOString() };
      const report = { startedAt, handoff, antiEntropy };
      await this.deps.state.saveMaintenanceState({ ...state, lastReport: report });
      return report;
    }
    const antiEntropy = await this.antiEntropy(ring, {
      fromRange,
      rangesMax: options.rangesMax ?? this.deps.limits.antiEntropyRangesPerRun,
      ...(options.untilMs === undefined ? {} : { untilMs: options.untilMs }),
    });
    const report = { startedAt, handoff, antiEntropy };
    await this.deps.state.saveMaintenanceState({ nextRange: antiEntropy.nextRange, antiEntropyAtMs: startedMs, lastReport: report });
    return report;
  }

  /**
   * What replay left in each shard's failure log; a log that stays long means its shard is not coming back. A log
   * this run's replay emptied is reported as empty without counting it again (four queries fewer a run).
   */
  private async reportHintBacklog(ring: Ring, drained: ReadonlySet<string>): Promise<void> {
    const { metrics } = this.deps;
    if (!metrics) return;
    // A count that fails is left out: the metric must not fail the run whose repairs matter more.
    const counts = await Promise.all(
      ring.shards.map(
        async (shard) =>
          [shard.table, drained.has(shard.table) ? 0 : await this.deps.hints.count(shard.table).catch(() => undefined)] as const,
      ),
    );
    for (const [table, count] of counts) if (count !== undefined) metrics.hintsPending(table, count);
  }

  /**
   * One hinted-handoff pass over every shard: an unavailable shard that answers a probe moves to
   * recovering; a recovering shard has its hints replayed (per key in version order) and becomes
   * available only when none are left; an available shard's stray hints are replayed as well.
   */
  async handoff(ring: Ring): Promise<ReplayReport[]> {
    return (await this.handoffPass(ring)).reports;
  }

  /** {@link handoff}'s pass, and the tables whose failure log it replayed to the end (empty when it ended). */
  private async handoffPass(ring: Ring): Promise<{ reports: ReplayReport[]; drained: Set<string> }> {
    const health = await this.deps.health.all();
    const reports: ReplayReport[] = [];
    const drained = new Set<string>();
    for (const shard of ring.shards) {
      const status = health.get(shard.table)?.status ?? 'available';
      const rejoining = (ring.state.rejoining ?? []).some((entry) => entry.shard === shard.id);
      let recoveringSince: number | undefined;
      if (status === 'unavailable') {
        if (!(await this.answers(shard.table))) {
          await this.deps.stillDown?.(shard.table, this.deps.clock.nowMs());
          continue;
        }
        recoveringSince = this.deps.clock.nowMs();
        if (!(await this.deps.health.beginRecovery(shard.table, recoveringSince))) continue;
      } else if (status === 'recovering') {
        recoveringSince = health.get(shard.table)!.sinceMs;
      }
      const report = await this.replay(shard.table, recoveringSince, { rejoining });
      if (report.completed) drained.add(shard.table);
      // A shard that came back is always reported; any other only when its replay did or found something.
      const worthReporting = report.transition || report.applied + report.alreadyCurrent > 0 || !report.completed || report.rejoin;
      if (status === 'unavailable' || worthReporting) reports.push(report);
    }
    return { reports, drained };
  }

  /**
   * Replays every hint of `table`. A shard recovering since `recoveringSinceMs` becomes available when
   * its log is empty and it has been recovering for the settle time (else the next run completes it).
   */
  async replay(table: string, recoveringSinceMs?: number, options: { rejoining?: boolean } = {}): Promise<ReplayReport> {
    const started = this.deps.clock.nowMs();
    const recovering = recoveringSinceMs !== undefined;
    const report: ReplayReport = {
      table,
      applied: 0,
      alreadyCurrent: 0,
      durationMs: 0,
      hintsPerSecond: 0,
      completed: true,
      ...(recovering ? { transition: 'recovering' as const } : {}),
    };
    const { hintReplayPageSize, hintReplayConcurrency } = this.deps.limits;
    try {
      for (;;) {
        const page = await this.deps.hints.list(table, hintReplayPageSize);
        if (page.length === 0) break;
        // Keys replay concurrently; the hints of one key replay one by one, oldest version first.
        const byKey = new Map<string, Hint[]>();
        for (const hint of page) {
          const id = `${hint.item.namespace}#${hint.item.key}`;
          byKey.set(id, [...(byKey.get(id) ?? []), hint]);
        }
        await forAllBounded([...byKey.values()], hintReplayConcurrency, async (hints) => {
          for (const hint of hints.sort((a, b) => a.item.version - b.item.version)) {
            const nowSeconds = Math.floor(this.deps.clock.nowMs() / 1000);
            // Hints are addressed to replicas (the owner took the write itself): never a listed copy.
            const applied = await this.deps.shards.applyReplica(table, hint.item, { nowSeconds, listed: false });
            this.deps.faults?.reach('hints.duringReplay');
            await this.deps.hints.remove(hint);
            if (applied) report.applied += 1;
            else report.alreadyCurrent += 1;
          }
        });
      }
      if (options.rejoining) {
        if (!this.deps.rejoin) return { ...report, completed: false };
        report.rejoin = await this.deps.rejoin(table);
      }
      const settled = recovering && this.deps.clock.nowMs() - recoveringSinceMs >= this.deps.limits.recoverySettleMs;
      if (settled && (await this.deps.health.completeRecovery(table, this.deps.clock.nowMs()))) report.transition = 'available';
    } catch (error) {
      if (isCrashInjected(error) || !isShardFailure(error)) throw error;
      report.completed = false;
      await this.deps.health.markUnavailable(table, `failed during hint replay: ${(error as Error).message}`, this.deps.clock.nowMs());
    }
    report.durationMs = this.deps.clock.nowMs() - started;
    const replayed = report.applied + report.alreadyCurrent;
    report.hintsPerSecond = replayed === 0 ? 0 : Math.round((replayed * 1000) / Math.max(1, report.durationMs));
    return report;
  }

  /**
   * Compares the replicas of `rangesMax` token ranges starting at `fromRange` and copies the newest
   * version of every key to each replica that lacks it. The token index makes each range one ordered
   * query per replica; values are read only for keys that are copied.
   */
  async antiEntropy(ring: Ring, options: { fromRange: number; rangesMax: number; untilMs?: number }): Promise<AntiEntropyReport> {
    const started = this.deps.clock.nowMs();
    const ranges = ring.ranges();
    const report = nothingCompared(options.fromRange % ranges.length);
    const health = await this.deps.health.all();
    const count = Math.min(options.rangesMax, ranges.length);
    for (let step = 0; step < count; step += 1) {
      // At least one range a run, so a pass under any deadline makes progress.
      if (step > 0 && options.untilMs !== undefined && this.deps.clock.nowMs() >= options.untilMs) {
        report.rangesLeft = count - step;
        break;
      }
      const index = (options.fromRange + step) % ranges.length;
      const range = ranges[index]!;
      const tables = range.replicas.map((id) => ring.shard(id).table);
      if (tables.some((table) => (health.get(table)?.status ?? 'available') !== 'available')) {
        report.rangesSkipped += 1;
      } else {
        await this.compareRange(range, tables, report);
        report.rangesCompared += 1;
      }
      report.nextRange = (index + 1) % ranges.length;
    }
    report.durationMs = this.deps.clock.nowMs() - started;
    return report;
  }

  private async compareRange(range: TokenRange, tables: string[], report: AntiEntropyReport): Promise<void> {
    const views = await Promise.all(tables.map((table) => this.deps.shards.versionsInRange(table, range)));
    const held = views.map((entries) => new Map(entries.map((entry) => [`${entry.namespace}#${entry.key}`, entry])));
    const newest = new Map<string, { entry: VersionEntry; source: number }>();
    views.forEach((entries, source) => {
      for (const entry of entries) {
        const id = `${entry.namespace}#${entry.key}`;
        const seen = newest.get(id);
        if (!seen || seen.entry.version < entry.version) newest.set(id, { entry, source });
      }
    });
    report.keysCompared += newest.size;
    for (const [id, { entry, source }] of newest) {
      const lagging = tables.filter((_, index) => index !== source && (held[index]!.get(id)?.version ?? 0) < entry.version);
      if (lagging.length === 0) continue;
      // The index may lag the table: the item itself is read (consistently) and copied with the
      // version guard, so a repair can never move a replica backwards.
      const item = await this.deps.shards.get(tables[source]!, entry.namespace, entry.key, { consistent: true });
      if (!item) continue;
      const nowSeconds = Math.floor(this.deps.clock.nowMs() / 1000);
      for (const table of lagging) {
        // The range's first table is the owner: a repair of its copy puts the key back in the listing.
        const listed = table === tables[0];
        if (!(await this.deps.shards.applyReplica(table, item, { nowSeconds, listed }))) continue;
        report.repairedCount += 1;
        if (report.repairs.length < repairsReportedMax) {
          const from = held[tables.indexOf(table)]!.get(id)?.version ?? 0;
          report.repairs.push({ table, namespace: item.namespace, key: item.key, from, to: item.version });
        }
      }
    }
  }

  private async answers(table: string): Promise<boolean> {
    try {
      await this.deps.shards.get(table, probeKey.namespace, probeKey.key, { consistent: true });
      return true;
    } catch (error) {
      if (isShardFailure(error)) return false;
      throw error;
    }
  }
}
