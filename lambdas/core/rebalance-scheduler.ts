// A rebalance's workflow step (docs/rebalancing.md): which stage runs next, and the two lanes that run
// beside each other while ranges are still being backfilled. The workflow calls `advance` in a loop; each
// call does a bounded amount of work and checkpoints the job, so a crash anywhere resumes from the last
// checkpoint: every stage reads the ring and the job it acts on and is safe to run again (ring writes are
// epoch-conditional, copies version-guarded once live writes reach them, the job revision-checked).
//
// Why the two lanes are safe together (backfillWithTail): the backfill writes a range's new replicas
// unconditionally, which is safe only while no live write of that range reaches them; the tail takes only
// ranges the backfill has finished (marked `backfilled`), and marks them `copying` (live writes reach them
// from then on) only after that. Each lane saves its own ranges through the one journal, which applies what
// each changed to the job as last saved (rebalance-journal.ts), so neither undoes the other's progress. A
// lane that fails, or that meets a failover, stops the other at its next checkpoint, and the step fails or
// pauses only once both have stopped: no work of this step goes on beside the retried one.
import type { RebalanceJob } from '../ports';
import { invariant } from './errors';
import { plannedRanges, reversedRing, withMovePhase } from './rebalance';
import { BackfillStage } from './rebalance-backfill';
import { CatchUpStage } from './rebalance-catch-up';
import { CleanupStage } from './rebalance-cleanup';
import {
  ensureStarted,
  failoverInTheWayOf,
  publishRing,
  readRing,
  relistTargets,
  terminalStatuses,
  type RebalanceDeps,
  type StageContext,
} from './rebalance-context';
import { CutOverStage } from './rebalance-cutover';
import { RebalanceJournal, storedJob } from './rebalance-journal';

/** The order ranges go through the stages in: all of them through one before any through the next. */
const stageOrder: readonly RebalanceJob['ranges'][number]['stage'][] = ['planned', 'backfilled', 'copying', 'cutover'];

/**
 * One workflow step of rebalance `id`: moves ranges on until the step's budget is spent, the rebalance
 * ends, or a pause or cancel asked for takes effect. Returns the job as saved.
 */
export async function advanceRebalance(deps: RebalanceDeps, id: string): Promise<RebalanceJob> {
  const job = await storedJob(deps.jobs, id);
  return new RebalanceStep(deps, job).run(job);
}

/** One call of the workflow's step: its budget, its journal and its stages (a read ahead serves this step only). */
export class RebalanceStep implements StageContext {
  readonly journal: RebalanceJournal;
  private readonly startedMs: number;
  /** Set when a lane beside another failed or met a failover: the other stops at its next checkpoint. */
  private stopping = false;
  private readonly catchUps: CatchUpStage;
  private readonly backfill: BackfillStage;
  private readonly cutOvers: CutOverStage;
  private readonly cleanup: CleanupStage;

  constructor(
    readonly deps: RebalanceDeps,
    read: RebalanceJob,
  ) {
    this.startedMs = deps.clock.monotonicMs();
    this.journal = new RebalanceJournal(deps.jobs, deps.clock, read);
    this.catchUps = new CatchUpStage(this);
    this.backfill = new BackfillStage(this, this.catchUps);
    this.cutOvers = new CutOverStage(this, this.catchUps);
    this.cleanup = new CleanupStage(this);
  }

  async run(job: RebalanceJob): Promise<RebalanceJob> {
    while (!terminalStatuses.has(job.status) && job.status !== 'paused') {
      if (this.budgetSpent()) return job;
      job = await this.stepOnce(job);
    }
    return job;
  }

  private async stepOnce(job: RebalanceJob): Promise<RebalanceJob> {
    if (job.requested === 'pause') return this.journal.save(job, { ...job, status: 'paused', requested: undefined });
    const inTheWay = await failoverInTheWayOf(this.deps, this.journal.latest(job));
    // Paused, with the reason; a cancel asked for stays asked for (it reverses the ring, which waits too).
    if (inTheWay) return this.journal.save(job, { ...job, status: 'paused', message: inTheWay });
    if (job.requested === 'cancel') return this.cancel(job);
    await ensureStarted(this.deps, job);
    // While ranges are still planned, the backfill and the tail beside it; then stage by stage over the
    // ranges left: relists, catch-ups, and the fenced cut-overs in waves of several ranges under one fence.
    const next = stageOrder.map((stage) => job.ranges.findIndex((range) => range.stage === stage)).find((index) => index >= 0);
    if (next === undefined) return this.cleanup.finishAndClean(job);
    if (job.ranges[next]!.stage === 'planned') return this.backfillWithTail(job);
    if (job.ranges[next]!.stage === 'cutover') return this.cutOvers.cutOverFrom(job, next);
    return this.moveRange(job, next);
  }

  /**
   * The backfill, and beside it the ranges it has finished going on through their stages (copying,
   * catch-up, cut-over), so that the move ends soon after its last page: what is left then is the last
   * group's catch-up and cut-overs, not a catch-up and cut-over of every range. Each
   * range is still backfilled before its new replicas take its live writes (the backfill is
   * unconditional); another range's live writes never reach its keys. The two save in turn, each its own
   * ranges (save). A range whose new owner was one of its replicas is relisted once the backfill is done:
   * its paged copy checkpoints in the one cursor the backfill uses.
   */
  private async backfillWithTail(job: RebalanceJob): Promise<RebalanceJob> {
    this.stopping = false;
    let backfilling = true;
    // A lane that fails stops the other at its next checkpoint; the step fails once both have stopped,
    // so no work of this step goes on beside the retried one.
    const stopOnFailure = (lane: Promise<void>) =>
      lane.catch((error: unknown) => {
        this.stopping = true;
        throw error;
      });
    const lanes = await Promise.allSettled([
      stopOnFailure(this.backfillLane(job)).finally(() => {
        backfilling = false;
        this.journal.wake();
      }),
      stopOnFailure(this.tailLane(job, () => backfilling)),
    ]);
    // Stopped for this call only: the step's sequence goes on (or pauses for a failover) from here.
    this.stopping = false;
    for (const lane of lanes) if (lane.status === 'rejected') throw lane.reason;
    return this.journal.latest(job);
  }

  /** Backfills the planned ranges in token order until none is left, or the step must stop. */
  private async backfillLane(job: RebalanceJob): Promise<void> {
    for (;;) {
      const latest = this.journal.latest(job);
      const index = latest.ranges.findIndex((range) => range.stage === 'planned');
      if (index < 0 || !this.stepMayContinue(latest) || (await failoverInTheWayOf(this.deps, this.journal.latest(latest)))) return;
      job = await this.moveRange(latest, index);
      // Cut short (a request, the budget, a failover, the other lane's failure): the step ends here.
      if (job.ranges[index]?.stage === 'planned') return;
    }
  }

  /**
   * Moves the backfilled ranges on while the backfill goes on: marks them copying (a few at a time, one
   * ring write and lease wait for each group), catches them up, cuts them over.
   * Returns once the backfill is over and nothing it can take is left (the step's sequence does the rest),
   * or the step must stop.
   */
  private async tailLane(job: RebalanceJob, backfilling: () => boolean): Promise<void> {
    for (;;) {
      const latest = this.journal.latest(job);
      if (!this.stepMayContinue(latest)) return;
      const work = this.tailWork(latest, backfilling());
      if (!work) {
        if (!backfilling()) return;
        await this.journal.nextSave();
        continue;
      }
      if (await failoverInTheWayOf(this.deps, this.journal.latest(latest))) {
        // The next step pauses for it (stepOnce); the backfill stops after its page.
        this.stopping = true;
        return;
      }
      job = await work();
    }
  }

  /**
   * The tail's next piece of work beside the backfill, or undefined while it waits for more backfilled ranges:
   * a wave of cut-overs (fenced ones too: a write in flight across a fence is acknowledged once, wherever it
   * took effect, and a strong read under a fence answers only a version the new owner holds; docs/
   * rebalancing.md, "Limits"), else a catch-up of copying ranges, else the copying mark of a group.
   */
  private tailWork(job: RebalanceJob, backfilling: boolean): (() => Promise<RebalanceJob>) | undefined {
    const ready = job.ranges.findIndex((range) => range.stage === 'cutover');
    if (ready >= 0) return () => this.cutOvers.cutOverFrom(job, ready);
    const copying = job.ranges.findIndex((range) => range.stage === 'copying' && relistTargets(range).length === 0);
    if (copying >= 0) return () => this.catchUps.caughtUpTogether(job, copying);
    const backfilled = job.ranges.filter((range) => range.stage === 'backfilled').length;
    // A group at a time: each marking costs a ring write and a lease wait.
    if (backfilled >= this.deps.limits.cutoverRangesMax || (backfilled > 0 && !backfilling)) return () => this.catchUps.markCopying(job);
    return undefined;
  }

  stepMayContinue(job: RebalanceJob): boolean {
    return !this.stopping && !job.requested && !this.budgetSpent();
  }

  budgetSpent(): boolean {
    return this.deps.clock.monotonicMs() - this.startedMs >= this.deps.limits.stepBudgetMs;
  }

  /** Moves the range at `index` on by one stage (or, when backfilling, by pages until the budget is spent). */
  private async moveRange(job: RebalanceJob, index: number): Promise<RebalanceJob> {
    const range = job.ranges[index]!;
    if (range.stage === 'planned') {
      if (this.deps.faults?.isBroken('rebalanceCutoverBeforeCopy')) {
        await publishRing(
          this.deps,
          (state) => withMovePhase(state, range.end, 'moved'),
          (ring) => ring.rangeOf(range.end).move?.phase === 'moved',
        );
        return this.journal.saveRange(job, index, { stage: 'moved' });
      }
      return this.backfill.copyPages(job, index, 'backfill');
    }
    if (range.stage === 'backfilled') return this.catchUps.markCopying(job);
    invariant(range.stage === 'copying', `the range ending at ${range.end} is ${range.stage}: not a stage moveRange takes`);
    if (relistTargets(range).length > 0) return this.backfill.copyPages(job, index, 'relist');
    return this.catchUps.caughtUpTogether(job, index);
  }

  /**
   * A cancel: the ring is reversed (rebalance.ts, reversedRing), so ranges that moved move back the same
   * way, and the job tracks the reversed ranges.
   */
  private async cancel(job: RebalanceJob): Promise<RebalanceJob> {
    await ensureStarted(this.deps, job);
    const state = await readRing(this.deps);
    const reversed = state.rebalance === job.id && !job.cancelledFrom ? reversedRing(state) : state;
    if (reversed !== state && !(await this.deps.rings.publishRing(reversed))) return storedJob(this.deps.jobs, job.id);
    const moved = job.ranges.filter((range) => range.stage !== 'planned').length;
    return this.journal.save(job, {
      ...job,
      status: 'cancelling',
      requested: undefined,
      cursor: undefined,
      cancelledFrom: { ranges: job.ranges.length, moved },
      ranges: plannedRanges(reversed),
    });
  }
}
