// Stage 2 of a rebalance (docs/rebalancing.md): backfilled ranges marked copying (their new replicas take
// every live write from then on), then caught up: every version the owner holds newer than a new replica's
// is copied to it, version-guarded, and the two compared again.
import type { RangeProgress, RebalanceJob, VersionEntry } from '../ports';
import { forAllBounded } from './bounded';
import { RingstoreError } from './errors';
import { withMovePhase } from './rebalance';
import {
  copyTargets,
  idOf,
  nowSeconds,
  publishUnlessFailover,
  relistTargets,
  unchangedSinceBackfill,
  withBackoff,
  type RebalanceDeps,
  type StageContext,
} from './rebalance-context';

/** Copying ranges caught up by one caughtUpTogether call, in multiples of cutoverConcurrency. */
const catchUpBatchWaves = 4;

export class CatchUpStage {
  constructor(private readonly context: StageContext) {}

  private get deps(): RebalanceDeps {
    return this.context.deps;
  }

  /**
   * The backfilled ranges, all marked copying in one ring write and one lease wait (not one per range).
   * The cursor is left as it is: it may be the backfill's, on a range still planned.
   */
  async markCopying(job: RebalanceJob): Promise<RebalanceJob> {
    const backfilled = job.ranges.filter((candidate) => candidate.stage === 'backfilled').map((candidate) => candidate.end);
    const marked = await publishUnlessFailover(
      this.context,
      job,
      (state) => withMovePhase(state, backfilled, 'copying'),
      (ring) => backfilled.every((end) => ring.rangeOf(end).move?.phase !== 'planned'),
    );
    // A failover began since the lane looked: nothing is marked, the next step pauses for it.
    if (!marked) return job;
    this.deps.faults?.reach('rebalance.afterCopying');
    // From here every write of these ranges reaches their new replicas; once no handler routes by an
    // older ring, what the catch-up does not find there, the stream or the fan-out brings.
    await this.deps.sleep(this.deps.limits.leaseWaitMs);
    const copying = new Set(backfilled);
    const ranges = job.ranges.map((candidate) => (copying.has(candidate.end) ? { ...candidate, stage: 'copying' as const } : candidate));
    return this.context.journal.save(job, { ...job, ranges });
  }

  /**
   * The copying ranges from `first` on that need no relist, caught up together: one range at a time,
   * each catch-up's reads waited on their own round trips and each range cost a job save.
   */
  async caughtUpTogether(job: RebalanceJob, first: number): Promise<RebalanceJob> {
    const batch: number[] = [];
    for (
      let index = first;
      index < job.ranges.length && batch.length < this.deps.limits.cutoverConcurrency * catchUpBatchWaves;
      index += 1
    ) {
      const range = job.ranges[index]!;
      if (range.stage === 'copying' && relistTargets(range).length === 0) batch.push(index);
    }
    return this.caughtUp(job, batch);
  }

  /**
   * What was written to the ranges during the backfill, caught up unfenced (cutoverConcurrency at once),
   * then one job save: the cut-over's fenced pass then finds little. A crash before the save catches them
   * all up again (a catch-up is idempotent).
   */
  async caughtUp(job: RebalanceJob, indexes: readonly number[]): Promise<RebalanceJob> {
    const caughtUp = new Map<number, { copied: number; verified: number; behind: number }>();
    await forAllBounded(indexes, this.deps.limits.cutoverConcurrency, async (index) => {
      caughtUp.set(index, await this.catchUp(job.ranges[index]!, 'onePass'));
    });
    const ranges = job.ranges.map((range, index) => {
      const done = caughtUp.get(index);
      return done
        ? {
            ...range,
            stage: 'cutover' as const,
            keysCopied: range.keysCopied + done.copied,
            keysVerified: done.verified,
            keysBehind: done.behind,
          }
        : range;
    });
    return this.context.journal.save(job, { ...job, ranges });
  }

  /**
   * Copies to the range's new replicas every version the owner holds newer than theirs, then compares
   * again; under the fence the owner no longer changes, so a pass that finds nothing behind is the proof.
   * Unfenced (the owner stays), writes keep coming: what the last pass still finds is on its way by the
   * stream and the fan-out, which every new replica has received since the range was marked copying.
   * An owner whose versions are still exactly what the backfill wrote proves as much on its own.
   * `onePass`: one comparison and its copies, no second look (the catch-up before the cut-over's).
   */
  async catchUp(
    range: RangeProgress,
    mode: 'fenced' | 'unfenced' | 'onePass',
    targets: readonly number[] = copyTargets(range),
  ): Promise<{ copied: number; verified: number; behind: number; owned: readonly VersionEntry[] }> {
    const source = this.deps.tableOf(range.from[0]!);
    const fenced = mode === 'fenced';
    let copied = 0;
    const versionsIn = (table: string) => withBackoff(this.deps, () => this.deps.shards.versionsInRange(table, range));
    for (let pass = 1; ; pass += 1) {
      const owned = await versionsIn(source);
      if (pass === 1 && unchangedSinceBackfill(range, owned)) {
        return { copied, verified: owned.length, behind: 0, owned };
      }
      const helds = await Promise.all(targets.map((target) => versionsIn(this.deps.tableOf(target))));
      const behind: Array<{ target: number; entry: VersionEntry }> = [];
      targets.forEach((target, at) => {
        const held = new Map(helds[at]!.map((entry) => [idOf(entry), entry.version]));
        for (const entry of owned) if ((held.get(idOf(entry)) ?? 0) < entry.version) behind.push({ target, entry });
      });
      if (behind.length === 0 || (mode === 'onePass' && pass > 1)) {
        return { copied, verified: owned.length, behind: behind.length, owned };
      }
      if (pass > this.deps.limits.verifyPassesMax) {
        if (!fenced) return { copied, verified: owned.length - behind.length, behind: behind.length, owned };
        throw new RingstoreError(
          'shard.unavailable',
          `the range ending at ${range.end}: ${behind.length} keys still behind on its new replicas after ${pass - 1} catch-up passes`,
          { retryable: true },
        );
      }
      copied += await this.copyBehind(range, range.from[0]!, behind);
    }
  }

  /** Copies each key behind on its target from `source`'s current item, version-guarded; returns the copies written. */
  async copyBehind(range: RangeProgress, source: number, behind: ReadonlyArray<{ target: number; entry: VersionEntry }>): Promise<number> {
    let copied = 0;
    await forAllBounded(behind, this.deps.limits.catchUpConcurrency, async ({ target, entry }) => {
      // The index may lag its table: the item is read consistently and copied with the version guard.
      const item = await this.deps.shards.get(this.deps.tableOf(source), entry.namespace, entry.key, { consistent: true });
      if (!item) return;
      const listed = target === range.to[0] && range.from[0] !== range.to[0];
      copied += await this.deps.ranges.copyItems(this.deps.tableOf(target), [item], { nowSeconds: nowSeconds(this.deps), listed });
    });
    return copied;
  }
}
