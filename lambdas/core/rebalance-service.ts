// The rebalance's steps on the ports (docs/rebalancing.md). The workflow calls `advance` in a loop; each
// call does a bounded amount of work and checkpoints the job, so a crash anywhere resumes from the last
// checkpoint: every step reads the ring and the job it acts on and is safe to run again (ring writes
// are epoch-conditional, copies version-guarded once live writes reach them, the job revision-checked).
//
// 1. backfill, range by range in token order: the range's owner's items are read from its token index in
//    pages and written to its new replicas as they are, many to a request (BatchWriteItem), at the
//    configured rate. Unconditional writes are safe here only because no live write of the range reaches
//    the new replicas yet: the ring still routes it to its old replicas alone.
// 2. `copying` (one ring write and one lease wait for each group of backfilled ranges, while later ranges
//    are still backfilled): the new replicas take every write (stream and strong fan-out); then what was
//    written during the backfill is caught up with version-guarded copies (a copy never moves a key
//    backwards from here on).
// 3. cut-over: a range whose owner changes is fenced first (one ring write) and the lease waited out,
//    so no write is acknowledged on the old owner from then on; transactions with intents on the range
//    are settled (pending ones aborted, committed ones applied to the new owner from their records);
//    the new owner is caught up and verified against the old (every key at the old owner's version);
//    then one ring write makes the new replicas the range's and lifts the fence, and the other new
//    replicas are caught up to the old owner's last versions (the fence does not wait for them).
//    A range whose owner stays needs no fence: once its catch-up found nothing behind, its new replicas
//    take every write since by the stream and the fan-out, and the ranges caught up together are handed
//    over together in one ring write, with no second comparison; one with keys still behind is compared
//    again first. Stages 2 and 3 of the ranges the backfill has finished run beside it (besideTheBackfill).
//    Every comparison reads the owner's versions first: if they are exactly what the backfill wrote (its
//    digest), the new replicas hold them all and are not read.
// 4. Once every range has moved: the ring is finished (joining shards active, leaving ones gone), and
//    after every handler has seen it, the copies the moved ranges left behind are removed.
//
// Why a backfill before the live writes rather than version-guarded copies under them (the first design,
// docs/benchmarks.md "Rebalancing"): a conditional write is one request per item, a batch write carries 25,
// and the copy is most of a move's work. A batch write cannot carry a condition, so it may only go where
// no newer version can be; the catch-up after it is version-guarded and reads both sides' versions.
import type {
  Clock,
  RangeCursor,
  FaultInjector,
  RangePage,
  RangeProgress,
  RangeStore,
  RebalanceChange,
  RebalanceJob,
  RebalanceJobStore,
  RingState,
  RingStore,
  ShardStore,
  StoredItem,
  VersionEntry,
} from '../ports';
import { forAllBounded } from './bounded';
import { invariant, isRingstoreError, RingstoreError } from './errors';
import type { FailoverService } from './failover-service';
import { fencedRangesRing, unfencedRing } from './failover';
import { isCrashInjected } from './faults';
import { probeKey } from './maintenance';
import { isShardFailure } from './replication';
import {
  failoverInTheWay,
  finishedRing,
  leftBehind,
  ownerChanges,
  plannedRanges,
  reversedRing,
  startedRing,
  versionDigest,
  withMovePhase,
} from './rebalance';
import { Ring, readRingState } from './ring';

export interface RebalanceDeps {
  rings: Pick<RingStore, 'readRing' | 'publishRing'>;
  shards: Pick<ShardStore, 'get' | 'versionsInRange'>;
  ranges: RangeStore;
  jobs: RebalanceJobStore;
  /** Transactions with intents on a range whose owner changes are settled under its fence, as a failover's are. */
  transactions: Pick<FailoverService, 'findTransactions' | 'applyCommitted'>;
  clock: Clock;
  sleep: (ms: number) => Promise<void>;
  faults?: FaultInjector;
  /** The table of a shard id (the topology's naming). */
  tableOf: (shardId: number) => string;
  limits: RebalanceLimits;
}

export interface RebalanceLimits {
  /** The ring lease and its margin (ring-source): waited after a ring write that changes where writes go. */
  leaseWaitMs: number;
  /**
   * What a cut-over waits after fencing: the shorter lease of a ring with ranges copying to new owners
   * (ring-source's cutoverLeaseMs) and the margin. Every ring trusted when the fence is published shows
   * them copying: the copying mark waited out the full lease (leaseWaitMs) long before.
   */
  cutoverLeaseWaitMs: number;
  /** How long every handler may keep an older ring for eventual reads and the stream: waited before the cleanup. */
  ringRefreshWaitMs: number;
  /** Items per copy page. */
  pageSize: number;
  /** Catch-up copies at once. */
  catchUpConcurrency: number;
  /** Work per `advance` call before it checkpoints and returns (the workflow calls it again). */
  stepBudgetMs: number;
  /** Ranges cut over together under one fence and one lease wait, at most. */
  cutoverRangesMax: number;
  /** Keys (on the old owners, as the catch-up counted them) a wave of cut-overs holds, at most: what keeps a fence short. */
  cutoverKeysMax: number;
  /** Ranges of a wave caught up at once. */
  cutoverConcurrency: number;
  /** Catch-up passes a cut-over makes before it gives up for now (index lag under a constant stream of writes). */
  verifyPassesMax: number;
  /** The rate a rebalance starts with when none is given (keys per second, 0: no ceiling). */
  defaultRateKeysPerSecond: number;
  /** Waits between retries of a copy that met throttling: the first, doubled up to the last. */
  backoffMs: { first: number; max: number };
}

/** What the status shows beyond the job: counts by stage, the rate and an estimate of the time left. */
export interface RebalanceStatusView {
  job: RebalanceJob;
  ranges: { total: number; planned: number; moving: number; moved: number; cleaned: number };
  keysCopied: number;
  /** Keys copied per second since the start. */
  keysPerSecond: number;
  /** Share of the moving token space backfilled (counted half) and moved (counted whole), 0 to 1. */
  progress: number;
  /** From the progress so far; absent before any range has moved or once done. */
  etaSeconds?: number;
}

const terminal = new Set(['done', 'cancelled']);

export class RebalanceService {
  constructor(private readonly deps: RebalanceDeps) {}

  /** Starts rebalance `id`: the job is saved, then the ring marks the shards joining and leaving. */
  async start(change: RebalanceChange, options: { id: string; rateKeysPerSecond?: number }): Promise<RebalanceJob> {
    const previous = await this.deps.jobs.current();
    if (previous && !terminal.has(previous.status)) {
      throw new RingstoreError('rebalance.conflict', `rebalance ${previous.id} is ${previous.status}: one runs at a time`, {
        details: { id: previous.id, status: previous.status },
      });
    }
    const state = await this.ring();
    const started = startedRing(state, change, options.id, this.deps.tableOf);
    for (const shard of change.join) await this.assertTableAnswers(shard);
    const nowMs = this.deps.clock.nowMs();
    const job: RebalanceJob = {
      id: options.id,
      change: { join: [...change.join].sort((a, b) => a - b), leave: [...change.leave].sort((a, b) => a - b) },
      status: 'running',
      rateKeysPerSecond: options.rateKeysPerSecond ?? this.deps.limits.defaultRateKeysPerSecond,
      ranges: plannedRanges(started),
      startedAtMs: nowMs,
      updatedAtMs: nowMs,
      revision: (previous?.revision ?? 0) + 1,
    };
    if (!(await this.deps.jobs.save(job))) throw new RingstoreError('rebalance.conflict', 'another rebalance started at the same time');
    await this.ensureStarted(job);
    return job;
  }

  /** A shard is added only once its table exists and answers (deployed with the shard count that includes it). */
  private async assertTableAnswers(shard: number): Promise<void> {
    const table = this.deps.tableOf(shard);
    try {
      await this.deps.shards.get(table, probeKey.namespace, probeKey.key, { consistent: true });
    } catch (error) {
      if (!isShardFailure(error)) throw error;
      throw new RingstoreError(
        'rebalance.refused',
        `the table of shard ${shard} (${table}) does not answer: deploy it first (CDK context shardCount of at least ${shard + 1}; ` +
          `locally RINGSTORE_SHARD_COUNT or RINGSTORE_SPARE_SHARDS), then start the rebalance again`,
        { details: { shard, table } },
      );
    }
  }

  /** The current (or last) rebalance with its progress; undefined when none ever ran. */
  async status(): Promise<RebalanceStatusView | undefined> {
    const job = await this.deps.jobs.current();
    return job && describe(job, this.deps.clock.nowMs());
  }

  /**
   * A pause, resume or cancel asked for through the admin API. Returns the job and whether a workflow
   * must be started to act on it (a resume, or a cancel of a paused rebalance).
   */
  async request(id: string, action: 'pause' | 'resume' | 'cancel'): Promise<{ job: RebalanceJob; startWorkflow: boolean }> {
    for (;;) {
      const job = await this.job(id);
      const refuse = (why: string) =>
        new RingstoreError('rebalance.conflict', `rebalance ${id} is ${job.status}: ${why}`, { details: { id, status: job.status } });
      let next: RebalanceJob;
      let startWorkflow = false;
      if (action === 'pause') {
        if (job.status !== 'running' && job.status !== 'cancelling') throw refuse('only a running rebalance pauses');
        next = { ...job, requested: 'pause' };
      } else if (action === 'resume') {
        if (job.status !== 'paused') throw refuse('only a paused rebalance resumes');
        const inTheWay = await this.failoverInTheWayOf(job);
        if (inTheWay) throw refuse(inTheWay);
        // A pause asked for is done; a cancel asked for while a failover held the rebalance still stands.
        const { requested, ...rest } = job;
        const { message: _reason, ...resumed } = rest;
        next = { ...resumed, status: job.cancelledFrom ? 'cancelling' : 'running', ...(requested === 'cancel' ? { requested } : {}) };
        startWorkflow = true;
      } else {
        if (job.status === 'cancelling' || job.requested === 'cancel') return { job, startWorkflow: false };
        if (job.status !== 'running' && job.status !== 'paused') throw refuse('only a running or paused rebalance is cancelled');
        startWorkflow = job.status === 'paused';
        next = { ...job, status: 'running', requested: 'cancel' };
      }
      const saved = this.stamped(next);
      if (await this.deps.jobs.save(saved)) return { job: saved, startWorkflow };
    }
  }

  /**
   * The workflow stopped on an error its retries could not get past: the rebalance is paused with the
   * reason, where it stands (every stage is resumable; a fence it held is lifted by the cut-over itself).
   */
  async halt(id: string, message: string): Promise<RebalanceJob> {
    for (;;) {
      const job = await this.job(id);
      if (terminal.has(job.status) || job.status === 'paused') return job;
      const { requested: _none, ...rest } = job;
      const saved = this.stamped({ ...rest, status: 'paused', message: message.slice(0, 1_000) });
      if (await this.deps.jobs.save(saved)) return saved;
    }
  }

  /** Changes the copy's rate of a rebalance that has not ended; it applies from the next page on. */
  async setRate(id: string, rateKeysPerSecond: number): Promise<RebalanceJob> {
    for (;;) {
      const job = await this.job(id);
      if (terminal.has(job.status)) throw new RingstoreError('rebalance.conflict', `rebalance ${id} is ${job.status}`);
      const saved = this.stamped({ ...job, rateKeysPerSecond });
      if (await this.deps.jobs.save(saved)) return saved;
    }
  }

  /**
   * One workflow step: moves ranges on until the step's budget is spent, the rebalance ends, or a pause
   * or cancel asked for takes effect. Returns the job as saved.
   */
  async advance(id: string): Promise<RebalanceJob> {
    const startedMs = this.deps.clock.monotonicMs();
    let job = await this.job(id);
    this.current = job;
    try {
      while (!terminal.has(job.status) && job.status !== 'paused') {
        if (this.deps.clock.monotonicMs() - startedMs >= this.deps.limits.stepBudgetMs) return job;
        job = await this.stepOnce(job, startedMs);
      }
      return job;
    } finally {
      // A read ahead serves the step that asked for it only: the next may find another ring (a cancel).
      this.readAhead = undefined;
      this.current = undefined;
      this.stopping = false;
    }
  }

  /** The first page of the next range to backfill, read while the range before it is written (copyPages). */
  private readAhead: { source: string; start: number; end: number; page: Promise<RangePage> } | undefined;

  private async stepOnce(job: RebalanceJob, startedMs: number): Promise<RebalanceJob> {
    if (job.requested === 'pause') return this.save(job, { ...job, status: 'paused', requested: undefined });
    const inTheWay = await this.failoverInTheWayOf(job);
    // Paused, with the reason; a cancel asked for stays asked for (it reverses the ring, which waits too).
    if (inTheWay) return this.save(job, { ...job, status: 'paused', message: inTheWay });
    if (job.requested === 'cancel') return this.cancel(job);
    await this.ensureStarted(job);
    // While ranges are still planned, the backfill and the tail beside it; then stage by stage over the
    // ranges left: relists, catch-ups, and the fenced cut-overs in waves of several ranges under one fence.
    const next = stageOrder.map((stage) => job.ranges.findIndex((range) => range.stage === stage)).find((index) => index >= 0);
    if (next === undefined) return this.finishAndClean(job, startedMs);
    if (job.ranges[next]!.stage === 'planned') return this.besideTheBackfill(job, startedMs);
    if (job.ranges[next]!.stage === 'cutover') return this.cutOverFrom(job, next);
    return this.moveRange(job, next, startedMs);
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
  private async besideTheBackfill(job: RebalanceJob, startedMs: number): Promise<RebalanceJob> {
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
      stopOnFailure(this.backfillLane(job, startedMs)).finally(() => {
        backfilling = false;
        this.wake();
      }),
      stopOnFailure(this.tailLane(job, startedMs, () => backfilling)),
    ]);
    // Stopped for this call only: the step's sequence goes on (or pauses for a failover) from here.
    this.stopping = false;
    for (const lane of lanes) if (lane.status === 'rejected') throw lane.reason;
    return this.latest(job);
  }

  /** Backfills the planned ranges in token order until none is left, or the step must stop. */
  private async backfillLane(job: RebalanceJob, startedMs: number): Promise<void> {
    for (;;) {
      const latest = this.latest(job);
      const index = latest.ranges.findIndex((range) => range.stage === 'planned');
      if (index < 0 || !this.mayGoOn(latest, startedMs) || (await this.failoverInTheWayOf(latest))) return;
      job = await this.moveRange(latest, index, startedMs);
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
  private async tailLane(job: RebalanceJob, startedMs: number, backfilling: () => boolean): Promise<void> {
    for (;;) {
      const latest = this.latest(job);
      if (!this.mayGoOn(latest, startedMs)) return;
      const work = this.tailWork(latest, backfilling());
      if (!work) {
        if (!backfilling()) return;
        await this.nextSave();
        continue;
      }
      if (await this.failoverInTheWayOf(latest)) {
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
    if (ready >= 0) return () => this.cutOverFrom(job, ready);
    const copying = job.ranges.findIndex((range) => range.stage === 'copying' && relistTargets(range).length === 0);
    if (copying >= 0) return () => this.caughtUpTogether(job, copying);
    const backfilled = job.ranges.filter((range) => range.stage === 'backfilled').length;
    // A group at a time: each marking costs a ring write and a lease wait.
    if (backfilled >= this.deps.limits.cutoverRangesMax || (backfilled > 0 && !backfilling)) return () => this.markCopying(job);
    return undefined;
  }

  /** Neither a request (pause, cancel) nor the budget nor the other lane's failure stops the step here. */
  private mayGoOn(job: RebalanceJob, startedMs: number): boolean {
    return !this.stopping && !job.requested && this.deps.clock.monotonicMs() - startedMs < this.deps.limits.stepBudgetMs;
  }

  /**
   * The next wave from the range at `first` (ready for its cut-over): every range ready whose owner stays and
   * whose catch-up found nothing behind, together, when there is one; otherwise cutoverWave's.
   */
  private cutOverFrom(job: RebalanceJob, first: number): Promise<RebalanceJob> {
    const verified = job.ranges.flatMap((range, index) => (range.stage === 'cutover' && isVerifiedUnfenced(range) ? [index] : []));
    return this.cutOver(job, verified.length > 0 ? verified : cutoverWave(job.ranges, first, this.deps.limits));
  }

  /** Moves the range at `index` on by one stage (or, when backfilling, by pages until the budget is spent). */
  private async moveRange(job: RebalanceJob, index: number, startedMs: number): Promise<RebalanceJob> {
    const range = job.ranges[index]!;
    if (range.stage === 'planned') {
      if (this.deps.faults?.isBroken('rebalanceCutoverBeforeCopy')) {
        await this.publish(
          (state) => withMovePhase(state, range.end, 'moved'),
          (ring) => ring.rangeOf(range.end).move?.phase === 'moved',
        );
        return this.saveRange(job, index, { stage: 'moved' });
      }
      return this.copyPages(job, index, startedMs, 'backfill');
    }
    if (range.stage === 'backfilled') return this.markCopying(job);
    invariant(range.stage === 'copying', `the range ending at ${range.end} is ${range.stage}: not a stage moveRange takes`);
    if (relistTargets(range).length > 0) return this.copyPages(job, index, startedMs, 'relist');
    return this.caughtUpTogether(job, index);
  }

  /**
   * The backfilled ranges, all marked copying in one ring write and one lease wait (not one per range).
   * The cursor is left as it is: it may be the backfill's, on a range still planned.
   */
  private async markCopying(job: RebalanceJob): Promise<RebalanceJob> {
    const backfilled = job.ranges.filter((candidate) => candidate.stage === 'backfilled').map((candidate) => candidate.end);
    const marked = await this.publishUnlessFailover(
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
    return this.save(job, { ...job, ranges });
  }

  /**
   * The copying ranges from `first` on that need no relist, caught up together: one range at a time,
   * each catch-up's reads waited on their own round trips and each range cost a job save.
   */
  private async caughtUpTogether(job: RebalanceJob, first: number): Promise<RebalanceJob> {
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
  private async caughtUp(job: RebalanceJob, indexes: readonly number[]): Promise<RebalanceJob> {
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
    return this.save(job, { ...job, ranges });
  }

  /**
   * Copies the range from its owner a page at a time, checkpointing the cursor after each:
   * - `backfill` (stage `planned`): to the shards that are not among its replicas yet, unconditionally.
   *   stepOnce keeps every live write of the range off them until all ranges are backfilled, and a page
   *   written again after a crash writes the same items.
   * - `relist` (stage `copying`): to a new owner that was one of its replicas, version-guarded and listed.
   *   A replica takes the range's live writes unlisted until the range is `copying`; from then on the
   *   stream and the fan-out list them there, and this pass lists what it held before.
   */
  private async copyPages(job: RebalanceJob, index: number, startedMs: number, pass: 'backfill' | 'relist'): Promise<RebalanceJob> {
    const range = job.ranges[index]!;
    const source = this.deps.tableOf(range.from[0]!);
    const listedOn = ownerChangesIn(range) ? range.to[0] : undefined;
    const targets = pass === 'backfill' ? copyTargets(range).filter((target) => !range.from.includes(target)) : relistTargets(range);
    const write = (target: number, items: readonly StoredItem[]) =>
      this.withBackoff(() =>
        pass === 'backfill'
          ? this.deps.ranges.backfillItems(this.deps.tableOf(target), items, { listed: target === listedOn })
          : this.deps.ranges.copyItems(this.deps.tableOf(target), items, { nowSeconds: this.nowSeconds(), listed: true }),
      );
    const finished = (done: RebalanceJob) =>
      pass === 'backfill' ? this.saveRange(done, index, { stage: 'backfilled' }) : this.caughtUp(done, [index]);
    if (targets.length === 0) return finished(job);
    let after = job.cursor?.end === range.end ? job.cursor.after : undefined;
    // What the backfill wrote, saved with its cursor; one begun again from the range's start begins it again.
    let digest = after ? range.backfilled : undefined;
    const pacedFromMs = this.deps.clock.monotonicMs();
    const read = (from: RangeCursor | undefined) => this.readPage(source, range, from);
    let reading = (!after && pass === 'backfill' && this.readAheadFor(source, range)) || read(after);
    for (;;) {
      const page = await reading;
      // The next page is read while this one is written: reads and writes overlap (a page read again
      // after a crash or a pause is harmless). After a range's last page, the next range's first.
      if (page.next) {
        reading = read(page.next);
        reading.catch(() => undefined);
      } else if (pass === 'backfill') this.readAheadAfter(job, index);
      const written = await Promise.all(targets.map((target) => write(target, page.items)));
      this.deps.faults?.reach('rebalance.afterPage');
      after = page.next;
      const copied = written.reduce((sum, count) => sum + count, 0);
      // Only the backfill keeps a digest: the relist writes where live writes already go.
      if (pass === 'backfill') digest = versionDigest(page.items, digest);
      const progress = { keysCopied: job.ranges[index]!.keysCopied + copied, ...(digest ? { backfilled: digest } : {}) };
      job = await this.saveRange(job, index, progress, { end: range.end, after });
      if (!after) return finished(job);
      if (!this.mayGoOn(job, startedMs)) return job;
      // A failover that began meanwhile: the next step pauses (stepOnce), rather than copy on from its shards.
      if (await this.failoverInTheWayOf(job)) return job;
      await this.pace(job.rateKeysPerSecond, pacedFromMs, page.items.length);
    }
  }

  /**
   * Starts reading the first page of the range the backfill goes on with after the one at `index`, so
   * the engine is not left idle between the last writes of one range and the first of the next. A backfill
   * page is a snapshot of the owner's items, and a range still planned takes no live write on its new
   * replicas: read a moment early, it is as good as read on time (the catch-up brings what changed since).
   */
  private readAheadAfter(job: RebalanceJob, index: number): void {
    const nextIndex = job.ranges.findIndex((candidate, at) => at > index && candidate.stage === 'planned');
    const next = job.ranges[nextIndex];
    if (!next || copyTargets(next).every((target) => next.from.includes(target))) return;
    const source = this.deps.tableOf(next.from[0]!);
    const page = this.readPage(source, next, undefined);
    page.catch(() => undefined);
    this.readAhead = { source, start: next.start, end: next.end, page };
  }

  /** One copy page of `range` from `source`, after `from` (from its start without one). */
  private readPage(source: string, range: RangeProgress, from: RangeCursor | undefined): Promise<RangePage> {
    return this.withBackoff(() =>
      this.deps.ranges.itemsInRange(source, range, { ...(from ? { after: from } : {}), limit: this.deps.limits.pageSize }),
    );
  }

  /** The page read ahead for this range from this source, once; undefined when there is none. */
  private readAheadFor(source: string, range: RangeProgress): Promise<RangePage> | undefined {
    const ahead = this.readAhead;
    if (!ahead || ahead.source !== source || ahead.start !== range.start || ahead.end !== range.end) return undefined;
    this.readAhead = undefined;
    return ahead.page;
  }

  /**
   * The cut-over of a wave of ranges (cutoverWave): those whose owner changes are fenced (one ring write,
   * one lease wait), their transactions settled and their new owners caught up and verified; the other
   * ranges' new replicas are caught up; then one ring write gives them all to their new replicas (and
   * lifts the fences), and the fenced ranges' other new replicas are caught up (afterCutOver).
   */
  private async cutOver(job: RebalanceJob, indexes: readonly number[]): Promise<RebalanceJob> {
    const wave = indexes.map((index) => job.ranges[index]!);
    const ends = wave.map((range) => range.end);
    const fencedEnds = wave.filter((range) => ownerChangesIn(range)).map((range) => range.end);
    if (fencedEnds.length > 0) {
      const fenced = await this.publishUnlessFailover(
        job,
        (state) => fencedRangesRing(state, fencedEnds),
        (ring) => fencedEnds.every((end) => ring.isFenced(end) || ring.rangeOf(end).move?.phase === 'moved'),
      );
      // A failover began since the lane looked: no wave is begun under it, the next step pauses for it.
      if (!fenced) return job;
      this.deps.faults?.reach('rebalance.afterFence');
      await this.deps.sleep(this.deps.limits.cutoverLeaseWaitMs);
    }
    const caughtUp = new Map<number, { copied: number; verified: number; owned: readonly VersionEntry[] }>();
    try {
      // The transactions are found (pending ones aborted) while the ranges are caught up: neither needs the
      // other, and both are under the fence, which requests wait on (findTransactions reads the deadline
      // index a minute at a time, about a second in the bench). Under a fence only the new owner is
      // verified: it is what strong reads and writes reach once the fence lifts, and requests wait on the
      // fence, so it holds no work that can come after it.
      const [found] = await Promise.all([
        fencedEnds.length > 0 ? this.deps.transactions.findTransactions(fencedEnds) : undefined,
        forAllBounded(wave, this.deps.limits.cutoverConcurrency, async (range) => {
          const fenced = fencedEnds.includes(range.end);
          if (isVerifiedUnfenced(range)) caughtUp.set(range.end, { copied: 0, verified: range.keysVerified ?? 0, owned: [] });
          else
            caughtUp.set(
              range.end,
              await this.catchUp(range, fenced ? 'fenced' : 'unfenced', fenced ? [range.to[0]!] : copyTargets(range)),
            );
        }),
      ]);
      if (found) {
        const owners = wave.filter((range) => fencedEnds.includes(range.end)).map((range) => ({ end: range.end, owner: range.to[0]! }));
        await this.deps.transactions.applyCommitted(owners, found);
      }
      await this.publish(
        (state) => withMovePhase(state, ends, 'moved'),
        (ring) => ends.every((end) => ring.rangeOf(end).move?.phase === 'moved'),
      );
      this.deps.faults?.reach('rebalance.afterCutover');
    } catch (error) {
      if (isCrashInjected(error) || fencedEnds.length === 0) throw error;
      // The wave cannot be cut over now: the fences are lifted, its ranges stay with their owners, the next step retries.
      await this.publish(
        (state) => unfencedRing(state, fencedEnds),
        (ring) => fencedEnds.every((end) => !ring.isFenced(end)),
      );
      throw error;
    }
    // A failure from here on leaves the wave cut over, and the retried step finds it so (every step above
    // checks the ring first) and catches these replicas up again.
    const replicasCopied = new Map<number, number>();
    await forAllBounded(
      wave.filter((range) => fencedEnds.includes(range.end)),
      this.deps.limits.cutoverConcurrency,
      async (range) => void replicasCopied.set(range.end, await this.afterCutOver(range, caughtUp.get(range.end)!.owned)),
    );
    const moved = new Set(indexes);
    const ranges = job.ranges.map((range, index) => {
      if (!moved.has(index)) return range;
      const { copied, verified } = caughtUp.get(range.end)!;
      const keysCopied = range.keysCopied + copied + (replicasCopied.get(range.end) ?? 0);
      return { ...range, stage: 'moved' as const, keysCopied, keysVerified: verified };
    });
    return this.save(job, { ...job, ranges });
  }

  /**
   * The new replicas of a range cut over, other than its new owner: they are compared with what the old
   * owner held under the fence (`owned`, its last versions, read by the fenced catch-up) and given what
   * they lack from the new owner, version-guarded. What they still miss after this one pass was written
   * since, through the new owner, whose stream and fan-out bring it; until then they may answer an
   * eventual read with an older version, as any replica may.
   */
  private async afterCutOver(range: RangeProgress, owned: readonly VersionEntry[]): Promise<number> {
    const newOwner = range.to[0]!;
    const replicas = copyTargets(range).filter((target) => target !== newOwner);
    let copied = 0;
    for (const target of replicas) {
      const held = await this.withBackoff(() => this.deps.shards.versionsInRange(this.deps.tableOf(target), range));
      const versions = new Map(held.map((entry) => [idOf(entry), entry.version]));
      const behind = owned.filter((entry) => (versions.get(idOf(entry)) ?? 0) < entry.version);
      copied += await this.copyBehind(
        range,
        newOwner,
        behind.map((entry) => ({ target, entry })),
      );
    }
    return copied;
  }

  /**
   * Copies to the range's new replicas every version the owner holds newer than theirs, then compares
   * again; under the fence the owner no longer changes, so a pass that finds nothing behind is the proof.
   * Unfenced (the owner stays), writes keep coming: what the last pass still finds is on its way by the
   * stream and the fan-out, which every new replica has received since the range was marked copying.
   * An owner whose versions are still exactly what the backfill wrote proves as much on its own.
   * `onePass`: one comparison and its copies, no second look (the catch-up before the cut-over's).
   */
  private async catchUp(
    range: RangeProgress,
    mode: 'fenced' | 'unfenced' | 'onePass',
    targets: readonly number[] = copyTargets(range),
  ): Promise<{ copied: number; verified: number; behind: number; owned: readonly VersionEntry[] }> {
    const source = this.deps.tableOf(range.from[0]!);
    const fenced = mode === 'fenced';
    let copied = 0;
    const versionsIn = (table: string) => this.withBackoff(() => this.deps.shards.versionsInRange(table, range));
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
  private async copyBehind(
    range: RangeProgress,
    source: number,
    behind: ReadonlyArray<{ target: number; entry: VersionEntry }>,
  ): Promise<number> {
    let copied = 0;
    await forAllBounded(behind, this.deps.limits.catchUpConcurrency, async ({ target, entry }) => {
      // The index may lag its table: the item is read consistently and copied with the version guard.
      const item = await this.deps.shards.get(this.deps.tableOf(source), entry.namespace, entry.key, { consistent: true });
      if (!item) return;
      const listed = target === range.to[0] && range.from[0] !== range.to[0];
      copied += await this.deps.ranges.copyItems(this.deps.tableOf(target), [item], { nowSeconds: this.nowSeconds(), listed });
    });
    return copied;
  }

  /** Every range has moved: the ring is finished, then the copies left behind are removed, range by range. */
  private async finishAndClean(job: RebalanceJob, startedMs: number): Promise<RebalanceJob> {
    const state = await this.ring();
    if (state.rebalance === job.id) {
      await this.publish(finishedRing, (ring) => !ring.rebalancing && ring.state.rebalance === undefined);
      this.deps.faults?.reach('rebalance.afterFinish');
    }
    if (job.ranges.some((range) => range.stage === 'moved' && leftBehind(range).length > 0)) {
      // A handler or stream reader with an older ring may still copy to a shard the range left: wait it out.
      await this.deps.sleep(this.deps.limits.ringRefreshWaitMs);
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
      job = await this.save(job, { ...job, ranges });
      if (this.deps.clock.monotonicMs() - startedMs >= this.deps.limits.stepBudgetMs) return job;
    }
    return this.save(job, { ...job, status: job.cancelledFrom ? 'cancelled' : 'done', finishedAtMs: this.deps.clock.nowMs() });
  }

  /** Removes the range's copies from the shards it left; returns how many. */
  private async cleanRange(range: RangeProgress): Promise<number> {
    let cleaned = 0;
    for (const shard of leftBehind(range)) {
      const table = this.deps.tableOf(shard);
      const entries = await this.withBackoff(() => this.deps.shards.versionsInRange(table, range));
      for (let from = 0; from < entries.length; from += this.deps.limits.pageSize) {
        await this.withBackoff(() => this.deps.ranges.removeCopies(table, entries.slice(from, from + this.deps.limits.pageSize)));
        this.deps.faults?.reach('rebalance.afterCleanupPage');
      }
      cleaned += entries.length;
    }
    return cleaned;
  }

  /**
   * A cancel: the ring is reversed (rebalance.ts, reversedRing), so ranges that moved move back the same
   * way, and the job tracks the reversed ranges.
   */
  private async cancel(job: RebalanceJob): Promise<RebalanceJob> {
    await this.ensureStarted(job);
    const state = await this.ring();
    const reversed = state.rebalance === job.id && !job.cancelledFrom ? reversedRing(state) : state;
    if (reversed !== state && !(await this.deps.rings.publishRing(reversed))) return this.job(job.id);
    const moved = job.ranges.filter((range) => range.stage !== 'planned').length;
    return this.save(job, {
      ...job,
      status: 'cancelling',
      requested: undefined,
      cursor: undefined,
      cancelledFrom: { ranges: job.ranges.length, moved },
      ranges: plannedRanges(reversed),
    });
  }

  /** Publishes the started ring if the job's start was cut short between saving the job and the ring. */
  private async ensureStarted(job: RebalanceJob): Promise<void> {
    for (;;) {
      const state = await this.ring();
      if (state.rebalance === job.id || job.ranges.some((range) => range.stage !== 'planned') || job.cancelledFrom) return;
      if (state.rebalance !== undefined) {
        throw new RingstoreError('rebalance.conflict', `the ring is in rebalance ${state.rebalance}, not ${job.id}`);
      }
      if (await this.deps.rings.publishRing(startedRing(state, job.change, job.id, this.deps.tableOf))) return;
    }
  }

  /** Publishes `next(state)` unless `done(ring)` already holds; retried on a concurrent publication. */
  private async publish(next: (state: RingState) => RingState, done: (ring: Ring) => boolean): Promise<void> {
    for (;;) {
      const state = await this.ring();
      if (done(new Ring(state))) return;
      if (await this.deps.rings.publishRing(next(state))) return;
    }
  }

  /**
   * publish, unless a failover is in the way on the ring it would publish over (false then, nothing
   * written): a wave is not fenced, nor a group marked copying, over a failover that began since the lane
   * looked (its hand-over would find its ranges' replicas changed). The work already under way goes on.
   */
  private async publishUnlessFailover(
    job: RebalanceJob,
    next: (state: RingState) => RingState,
    done: (ring: Ring) => boolean,
  ): Promise<boolean> {
    const own = ownFences(this.latest(job));
    for (;;) {
      const state = await this.ring();
      if (done(new Ring(state))) return true;
      if (failoverInTheWay(state, own)) return false;
      if (await this.deps.rings.publishRing(next(state))) return true;
    }
  }

  /** Sleeps so that `keys` since `fromMs` stay under `rate` keys per second. */
  private async pace(rate: number, fromMs: number, keys: number): Promise<void> {
    if (rate <= 0) return;
    this.paced = fromMs === this.pacedFrom ? this.paced + keys : keys;
    this.pacedFrom = fromMs;
    const dueMs = fromMs + (this.paced * 1000) / rate;
    const waitMs = dueMs - this.deps.clock.monotonicMs();
    if (waitMs > 0) await this.deps.sleep(waitMs);
  }

  private paced = 0;
  private pacedFrom = -1;

  /** Retries a shard request that met throttling, waiting longer each time (the copy yields to clients). */
  private async withBackoff<T>(request: () => Promise<T>): Promise<T> {
    const { first, max } = this.deps.limits.backoffMs;
    for (let waitMs = first; ; waitMs = Math.min(max, waitMs * 2)) {
      try {
        return await request();
      } catch (error) {
        if (!isRingstoreError(error, 'throttled') || waitMs >= max) throw error;
        await this.deps.sleep(waitMs);
      }
    }
  }

  private async saveRange(
    job: RebalanceJob,
    index: number,
    change: Partial<RangeProgress>,
    cursor: RebalanceJob['cursor'] = job.cursor,
  ): Promise<RebalanceJob> {
    const ranges = job.ranges.map((range, at) => (at === index ? { ...range, ...change } : range));
    const { cursor: _old, ...rest } = job;
    return this.save(job, { ...rest, ranges, ...(cursor ? { cursor } : {}) });
  }

  /**
   * Saves `next`, derived from `base`, as the next revision. The backfill and the tail beside it
   * (besideTheBackfill) save in turn, each from its own view of the job: what `next` changed from `base`
   * (fields, and ranges one by one) is applied to the job as this step last saved it, so neither undoes
   * the other's ranges. A save that lost to another writer (a pause asked meanwhile) re-reads the job:
   * the request is kept, and the work done stays in the ring and is redone idempotently.
   */
  private save(base: RebalanceJob, next: RebalanceJob): Promise<RebalanceJob> {
    const saving = this.saving.then(async () => {
      const { requested, ...rest } = withChanges(this.latest(base), base, next);
      const saved = this.stamped({ ...rest, ...(requested ? { requested } : {}) });
      this.current = (await this.deps.jobs.save(saved)) ? saved : await this.job(base.id);
      this.wake();
      return this.current;
    });
    this.saving = saving.catch(() => undefined);
    return saving;
  }

  /** The job as this step last saved or read it, when that is `job` or newer. */
  private latest(job: RebalanceJob): RebalanceJob {
    const current = this.current;
    return current && current.id === job.id && current.revision >= job.revision ? current : job;
  }

  /** The job as this step last saved or read it (advance sets it; save keeps it). */
  private current: RebalanceJob | undefined;
  /** The save in progress: a step's saves go one after another. */
  private saving: Promise<unknown> = Promise.resolve();
  /** The tail beside the backfill, waiting for its next save (or its end). */
  private waiting: Array<() => void> = [];
  /** Set when a lane beside another failed or met a failover: the other stops at its next checkpoint. */
  private stopping = false;

  private nextSave(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private wake(): void {
    for (const resolve of this.waiting.splice(0)) resolve();
  }

  private stamped(job: RebalanceJob): RebalanceJob {
    return { ...job, updatedAtMs: this.deps.clock.nowMs(), revision: job.revision + 1 };
  }

  private async job(id: string): Promise<RebalanceJob> {
    const job = await this.deps.jobs.current();
    if (!job || job.id !== id) throw new RingstoreError('rebalance.notFound', `no rebalance ${id}`);
    return job;
  }

  private async ring(): Promise<RingState> {
    return readRingState(this.deps.rings);
  }

  /** Why a failover on the ring stops this rebalance now (failoverInTheWay), or undefined. */
  private async failoverInTheWayOf(job: RebalanceJob): Promise<string | undefined> {
    const state = await this.ring();
    // The fences the tail beside the backfill placed are in the job as last saved: read after the ring.
    return failoverInTheWay(state, ownFences(this.latest(job)));
  }

  private nowSeconds(): number {
    return Math.floor(this.deps.clock.nowMs() / 1000);
  }
}

/**
 * The ranges this rebalance may have fenced itself: a wave's ranges are fenced only while in the `cutover`
 * stage (a crash between the fence and the cut-over leaves them so until the retried step lifts them).
 */
function ownFences(job: RebalanceJob): ReadonlySet<number> {
  return new Set(job.ranges.filter((range) => range.stage === 'cutover').map((range) => range.end));
}

/** Copying ranges caught up by one caughtUpTogether call, in multiples of cutoverConcurrency. */
const catchUpBatchWaves = 4;

/** The order ranges go through the stages in: all of them through one before any through the next. */
const stageOrder: readonly RangeProgress['stage'][] = ['planned', 'backfilled', 'copying', 'cutover'];

/**
 * The ranges cut over together, from `first` on in token order: those ready for it (`cutover`), up to
 * `cutoverRangesMax` of them and `cutoverKeysMax` keys (as their catch-up counted them), at least one.
 * The bound keeps a fence short: requests on a fenced range wait for it (kv's fenceWaitMs).
 */
export function cutoverWave(
  ranges: readonly RangeProgress[],
  first: number,
  limits: Pick<RebalanceLimits, 'cutoverRangesMax' | 'cutoverKeysMax'>,
): number[] {
  const wave = [first];
  let keys = ranges[first]!.keysVerified ?? 0;
  for (let index = first + 1; index < ranges.length && wave.length < limits.cutoverRangesMax; index += 1) {
    const range = ranges[index]!;
    if (range.stage !== 'cutover') continue;
    keys += range.keysVerified ?? 0;
    if (keys > limits.cutoverKeysMax) break;
    wave.push(index);
  }
  return wave;
}

/**
 * The owner holds exactly the keys and versions the backfill wrote to the range's new replicas, and
 * every new replica was backfilled (none is a replica before being relisted): no live write of the range
 * reached the owner since, so each new replica holds every key at the owner's version (a write reaching
 * them since the copying mark only brings a newer one) and the catch-up need not read their versions.
 */
function unchangedSinceBackfill(range: RangeProgress, owned: readonly VersionEntry[]): boolean {
  if (!range.backfilled || relistTargets(range).length > 0) return false;
  const digest = versionDigest(owned);
  return digest.keys === range.backfilled.keys && digest.digest === range.backfilled.digest;
}

/**
 * A range cut over with no fence and no further comparison: its owner stays, and its catch-up found its
 * new replicas holding every key at the owner's version (keysBehind 0) after they began to take its live
 * writes; what was written since reaches them by the stream and the fan-out, as it would after a second
 * comparison (an unfenced comparison proves no more, since writes go on after it).
 */
function isVerifiedUnfenced(range: RangeProgress): boolean {
  return range.keysBehind === 0 && !ownerChangesIn(range);
}

/** The shards a range is copied to: its new replicas, and its new owner if that was a replica before (to list its copies). */
function copyTargets(range: Pick<RangeProgress, 'from' | 'to'>): number[] {
  const incoming = range.to.filter((shard) => !range.from.includes(shard));
  const newOwner = range.to[0]!;
  return newOwner !== range.from[0] && !incoming.includes(newOwner) ? [newOwner, ...incoming] : incoming;
}

/** The new owner of a range, when it was one of its replicas: its copies are relisted, version-guarded, once it is `copying`. */
function relistTargets(range: Pick<RangeProgress, 'from' | 'to'>): number[] {
  const newOwner = range.to[0]!;
  return newOwner !== range.from[0] && range.from.includes(newOwner) ? [newOwner] : [];
}

/** The range's owner changes: its cut-over is fenced. */
function ownerChangesIn(range: Pick<RangeProgress, 'from' | 'to'>): boolean {
  return ownerChanges({ move: { phase: 'copying', ...range } });
}

function idOf(entry: Pick<StoredItem, 'namespace' | 'key'>): string {
  return `${entry.namespace}#${entry.key}`;
}

/** The job with counts by stage, the copy rate and an estimate of the time left. */
export function describe(job: RebalanceJob, nowMs: number): RebalanceStatusView {
  const count = (...stages: RangeProgress['stage'][]) => job.ranges.filter((range) => stages.includes(range.stage)).length;
  const span = (range: RangeProgress) => (range.end - range.start + 2 ** 32) % 2 ** 32 || 2 ** 32;
  const total = job.ranges.reduce((sum, range) => sum + span(range), 0);
  // A range is half done once backfilled (most of its copy), done once moved.
  const weight = (range: RangeProgress) => (range.stage === 'planned' ? 0 : range.stage === 'moved' || range.stage === 'cleaned' ? 1 : 0.5);
  const done = job.ranges.reduce((sum, range) => sum + span(range) * weight(range), 0);
  const progress = total === 0 ? 1 : done / total;
  const keysCopied = job.ranges.reduce((sum, range) => sum + range.keysCopied, 0);
  const elapsedMs = Math.max(1, (job.finishedAtMs ?? nowMs) - job.startedAtMs);
  const ongoing = !terminal.has(job.status);
  invariant(progress >= 0 && progress <= 1, 'progress is a share');
  return {
    job,
    ranges: {
      total: job.ranges.length,
      planned: count('planned'),
      moving: count('backfilled', 'copying', 'cutover'),
      moved: count('moved'),
      cleaned: count('cleaned'),
    },
    keysCopied,
    keysPerSecond: Math.round((keysCopied * 1000) / elapsedMs),
    progress,
    ...(ongoing && progress > 0 && progress < 1 ? { etaSeconds: Math.ceil(((elapsedMs / progress) * (1 - progress)) / 1000) } : {}),
  };
}

/**
 * `onto` (the job as last saved) with what `next` changed from `base` (the view it was derived from):
 * each field `next` set differently, and each range `next` replaced (the same ranges, by position).
 */
function withChanges(onto: RebalanceJob, base: RebalanceJob, next: RebalanceJob): RebalanceJob {
  if (onto === base) return next;
  const before = base as unknown as Record<string, unknown>;
  const after = next as unknown as Record<string, unknown>;
  const changed = new Set([...Object.keys(before), ...Object.keys(after)].filter((key) => key !== 'ranges' && after[key] !== before[key]));
  const merged: Record<string, unknown> = Object.fromEntries([
    ...Object.entries(onto).filter(([key]) => !changed.has(key)),
    ...[...changed].filter((key) => after[key] !== undefined).map((key): [string, unknown] => [key, after[key]]),
  ]);
  const sameRanges = [onto.ranges, next.ranges].every(
    (ranges) => ranges.length === base.ranges.length && ranges.every((range, at) => range.end === base.ranges[at]!.end),
  );
  const ranges = sameRanges ? next.ranges.map((range, at) => (range === base.ranges[at] ? onto.ranges[at]! : range)) : next.ranges;
  return { ...(merged as unknown as RebalanceJob), ranges };
}
