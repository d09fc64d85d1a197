// Stage 4 of a rebalance (docs/rebalancing.md): once every range has moved, the ring is finished (joining
// shards active, leaving ones gone) and, after every handler has seen it, the copies the moved ranges left
// behind are removed.
import type { RangeProgress, RebalanceJob } from '../ports';
import { forAllBounded } from './bounded';
import { finishedRing, leftBehind } from './rebalance';
import { publishRing, readRing, withBackoff, type RebalanceDeps, type StageContext } from './rebalance-context';

export class CleanupStage {
  constructor(private readonly context: StageContext) {}

  private get deps(): RebalanceDeps {
    return this.context.deps;
  }

  /** Every range has moved: the ring is finished, then the copies left behind are removed, range by range. */
  async finishAndClean(job: RebalanceJob): Promise<RebalanceJob> {
    let ringFinishedAtMs = job.ringFinishedAtMs;
    if (ringFinishedAtMs === undefined) {
      const state = await readRing(this.deps);
      if (state.rebalance === job.id) {
        await publishRing(this.deps, finishedRing, (ring) => !ring.rebalancing && ring.state.rebalance === undefined);
        this.deps.faults?.reach('rebalance.afterFinish');
      }
      // Recorded once: a cleanup that takes several steps (a crash, a budget spent) waits for the handlers once.
      // A step after a crash here records a later time than the ring's, which only waits longer.
      ringFinishedAtMs = this.deps.clock.nowMs();
      job = await this.context.journal.save(job, { ...job, ringFinishedAtMs });
    }
    if (job.ranges.some((range) => range.stage === 'moved' && leftBehind(range).length > 0)) {
      // A handler or stream reader with an older ring may still copy to a shard the range left: wait it out.
      // The steps run in Lambdas whose clocks agree to milliseconds; the wait has its margin (ringLeaseMarginMs).
      const waitMs = ringFinishedAtMs + this.deps.limits.ringRefreshWaitMs - this.deps.clock.nowMs();
      if (waitMs > 0) await this.deps.sleep(waitMs);
    }
    const moved = job.ranges.flatMap((range, index) => (range.stage === 'moved' ? [index] : []));
    // Several ranges at once, one job save for each batch of them (the cleanup is idempotent: a batch
    // cut short by a crash is cleaned again).
    const batch = this.deps.limits.cutoverConcurrency;
    for (let from = 0; from < moved.length; from += batch) {
      const cleaned = new Map<number, number>();
      await forAllBounded(moved.slice(from, from + batch), batch, async (index) => {
        cleaned.set(index, await this.cleanRange(job.ranges[index]!));
      });
      const ranges = job.ranges.map((range, index) =>
        cleaned.has(index) ? { ...range, stage: 'cleaned' as const, keysCleaned: cleaned.get(index)! } : range,
      );
      job = await this.context.journal.save(job, { ...job, ranges });
      if (this.context.budgetSpent()) return job;
    }
    return this.context.journal.save(job, {
      ...job,
      status: job.cancelledFrom ? 'cancelled' : 'done',
      finishedAtMs: this.deps.clock.nowMs(),
    });
  }

  /** Removes the range's copies from the shards it left; returns how many. */
  private async cleanRange(range: RangeProgress): Promise<number> {
    let cleaned = 0;
    for (const shard of leftBehind(range)) {
      const table = this.deps.tableOf(shard);
      const entries = await withBackoff(this.deps, () => this.deps.shards.versionsInRange(table, range));
      for (let from = 0; from < entries.length; from += this.deps.limits.pageSize) {
        await withBackoff(this.deps, () => this.deps.ranges.removeCopies(table, entries.slice(from, from + this.deps.limits.pageSize)));
        this.deps.faults?.reach('rebalance.afterCleanupPage');
      }
      cleaned += entries.length;
    }
    return cleaned;
  }
}
