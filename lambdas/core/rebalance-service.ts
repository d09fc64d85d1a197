// The rebalance's steps on the ports (docs/rebalancing.md). The workflow calls `advance` in a loop; each
// call does a bounded amount of work and checkpoints the job, so a crash anywhere resumes from the last
// checkpoint: every step reads the ring and the job it acts on and is safe to run again (ring writes
// are epoch-conditional, copies version-guarded, the job revision-checked).
//
// One range at a time, in token order:
// 1. `copying` (one ring write): the range's new replicas take every write (stream and strong fan-out),
//    then, after a lease wait (no handler still routes by the ring before it), the range is copied from
//    its owner's token index in pages, version-guarded, at the configured rate.
// 2. cut-over: a range whose owner changes is fenced first (one ring write) and the lease waited out,
//    so no write is acknowledged on the old owner from then on; transactions with intents on the range
//    are settled (pending ones aborted, committed ones applied to the new owner from their records);
//    the new replicas are caught up and verified against the owner (every key at the owner's version);
//    then one ring write makes them the range's replicas and lifts the fence.
// 3. Once every range has moved: the ring is finished (joining shards active, leaving ones gone), and
//    after every handler has seen it, the copies the moved ranges left behind are removed.
import type {
  Clock,
  RangeCursor,
  FaultInjector,
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
import { finishedRing, leftBehind, ownerChanges, plannedRanges, reversedRing, startedRing, withMovePhase } from './rebalance';
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
  /** How long every handler may keep an older ring for eventual reads and the stream: waited before the cleanup. */
  ringRefreshWaitMs: number;
  /** Items per copy page. */
  pageSize: number;
  /** Catch-up copies at once. */
  catchUpConcurrency: number;
  /** Work per `advance` call before it checkpoints and returns (the workflow calls it again). */
  stepBudgetMs: number;
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
  /** Share of the moving token space that has moved (0 to 1). */
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
        const { requested: _none, ...rest } = job;
        const { message: _reason, ...resumed } = rest;
        next = { ...resumed, status: job.cancelledFrom ? 'cancelling' : 'running' };
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
    while (!terminal.has(job.status) && job.status !== 'paused') {
      if (this.deps.clock.monotonicMs() - startedMs >= this.deps.limits.stepBudgetMs) return job;
      job = await this.stepOnce(job, startedMs);
    }
    return job;
  }

  private async stepOnce(job: RebalanceJob, startedMs: number): Promise<RebalanceJob> {
    if (job.requested === 'pause') return this.save({ ...job, status: 'paused', requested: undefined });
    if (job.requested === 'cancel') return this.cancel(job);
    await this.ensureStarted(job);
    const next = job.ranges.findIndex((range) => range.stage !== 'moved' && range.stage !== 'cleaned');
    if (next >= 0) return this.moveRange(job, next, startedMs);
    return this.finishAndClean(job, startedMs);
  }

  /** Moves the range at `index` on by one stage (or, when copying, by pages until the budget is spent). */
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
      // Every planned range is marked copying in one ring write and one lease wait (not one per range).
      const planned = job.ranges.filter((candidate) => candidate.stage === 'planned').map((candidate) => candidate.end);
      await this.publish(
        (state) => withMovePhase(state, planned, 'copying'),
        (ring) => planned.every((end) => ring.rangeOf(end).move?.phase !== 'planned'),
      );
      this.deps.faults?.reach('rebalance.afterCopying');
      // From here every write of these ranges reaches their new replicas; once no handler routes by an
      // older ring, whatever the copy does not find there, the stream or the fan-out brings.
      await this.deps.sleep(this.deps.limits.leaseWaitMs);
      const copying = new Set(planned);
      const ranges = job.ranges.map((candidate) => (copying.has(candidate.end) ? { ...candidate, stage: 'copying' as const } : candidate));
      return this.save({ ...job, ranges, cursor: { end: range.end } });
    }
    if (range.stage === 'copying') return this.copyPages(job, index, startedMs);
    return this.cutOver(job, index);
  }

  /** Copies pages of the range from its owner to its new replicas, checkpointing the cursor after each. */
  private async copyPages(job: RebalanceJob, index: number, startedMs: number): Promise<RebalanceJob> {
    const range = job.ranges[index]!;
    const source = this.deps.tableOf(range.from[0]!);
    const targets = copyTargets(range);
    let after = job.cursor?.end === range.end ? job.cursor.after : undefined;
    let copied = 0;
    const pacedFromMs = this.deps.clock.monotonicMs();
    const read = (from: RangeCursor | undefined) =>
      this.withBackoff(() =>
        this.deps.ranges.itemsInRange(source, range, { ...(from ? { after: from } : {}), limit: this.deps.limits.pageSize }),
      );
    let reading = read(after);
    for (;;) {
      const page = await reading;
      // The next page is read while this one is written: reads and writes overlap (a page read again
      // after a crash or a pause is harmless, the copies are version-guarded).
      if (page.next) {
        reading = read(page.next);
        reading.catch(() => undefined);
      }
      for (const target of targets) {
        const listed = target === range.to[0] && ownerChanges({ move: { phase: 'copying', ...range } });
        copied += await this.withBackoff(() =>
          this.deps.ranges.copyItems(this.deps.tableOf(target), page.items, { nowSeconds: this.nowSeconds(), listed }),
        );
      }
      this.deps.faults?.reach('rebalance.afterPage');
      after = page.next;
      job = await this.saveRange(job, index, { keysCopied: job.ranges[index]!.keysCopied + copied }, { end: range.end, after });
      copied = 0;
      if (!after) return this.saveRange(job, index, { stage: 'cutover' });
      if (job.requested || this.deps.clock.monotonicMs() - startedMs >= this.deps.limits.stepBudgetMs) return job;
      await this.pace(job.rateKeysPerSecond, pacedFromMs, page.items.length);
    }
  }

  /**
   * The cut-over of one range: fenced when its owner changes, its transactions settled, its new replicas
   * caught up and verified, then one ring write gives it to them (and lifts the fence).
   */
  private async cutOver(job: RebalanceJob, index: number): Promise<RebalanceJob> {
    const range = job.ranges[index]!;
    const fenced = ownerChanges({ move: { phase: 'copying', ...range } });
    if (fenced) {
      await this.publish(
        (state) => fencedRangesRing(state, [range.end]),
        (ring) => ring.isFenced(range.end) || ring.rangeOf(range.end).move?.phase === 'moved',
      );
      this.deps.faults?.reach('rebalance.afterFence');
      await this.deps.sleep(this.deps.limits.leaseWaitMs);
    }
    try {
      const found = fenced ? await this.deps.transactions.findTransactions([range.end]) : undefined;
      const { copied, verified } = await this.catchUp(range, fenced);
      if (found) await this.deps.transactions.applyCommitted([{ end: range.end, owner: range.to[0]! }], found);
      await this.publish(
        (state) => withMovePhase(state, range.end, 'moved'),
        (ring) => ring.rangeOf(range.end).move?.phase === 'moved',
      );
      this.deps.faults?.reach('rebalance.afterCutover');
      return await this.saveRange(job, index, { stage: 'moved', keysCopied: range.keysCopied + copied, keysVerified: verified });
    } catch (error) {
      if (isCrashInjected(error) || !fenced) throw error;
      // The range cannot be cut over now: the fence is lifted, it stays with its owner, the next step retries.
      await this.publish(
        (state) => unfencedRing(state, [range.end]),
        (ring) => !ring.isFenced(range.end),
      );
      throw error;
    }
  }

  /**
   * Copies to the range's new replicas every version the owner holds newer than theirs, then compares
   * again; under the fence the owner no longer changes, so a pass that finds nothing behind is the proof.
   * Unfenced (the owner stays), writes keep coming: what the last pass still finds is on its way by the
   * stream and the fan-out, which every new replica has received since the range was marked copying.
   */
  private async catchUp(range: RangeProgress, fenced: boolean): Promise<{ copied: number; verified: number }> {
    const source = this.deps.tableOf(range.from[0]!);
    let copied = 0;
    for (let pass = 1; ; pass += 1) {
      const owned = await this.deps.shards.versionsInRange(source, range);
      const behind: Array<{ target: number; entry: VersionEntry }> = [];
      for (const target of copyTargets(range)) {
        const held = new Map(
          (await this.deps.shards.versionsInRange(this.deps.tableOf(target), range)).map((entry) => [idOf(entry), entry.version]),
        );
        for (const entry of owned) if ((held.get(idOf(entry)) ?? 0) < entry.version) behind.push({ target, entry });
      }
      if (behind.length === 0) return { copied, verified: owned.length };
      if (pass > this.deps.limits.verifyPassesMax) {
        if (!fenced) return { copied, verified: owned.length - behind.length };
        throw new RingstoreError(
          'shard.unavailable',
          `the range ending at ${range.end}: ${behind.length} keys still behind on its new replicas after ${pass - 1} catch-up passes`,
          { retryable: true },
        );
      }
      await forAllBounded(behind, this.deps.limits.catchUpConcurrency, async ({ target, entry }) => {
        // The index may lag its table: the item is read consistently and copied with the version guard.
        const item = await this.deps.shards.get(source, entry.namespace, entry.key, { consistent: true });
        if (!item) return;
        const listed = target === range.to[0] && range.from[0] !== range.to[0];
        copied += await this.deps.ranges.copyItems(this.deps.tableOf(target), [item], { nowSeconds: this.nowSeconds(), listed });
      });
    }
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
    for (let index = 0; index < job.ranges.length; index += 1) {
      const range = job.ranges[index]!;
      if (range.stage !== 'moved') continue;
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
      job = await this.saveRange(job, index, { stage: 'cleaned', keysCleaned: cleaned });
      if (this.deps.clock.monotonicMs() - startedMs >= this.deps.limits.stepBudgetMs) return job;
    }
    return this.save({ ...job, status: job.cancelledFrom ? 'cancelled' : 'done', finishedAtMs: this.deps.clock.nowMs() });
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
    return this.save({
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
    return this.save({ ...rest, ranges, ...(cursor ? { cursor } : {}) });
  }

  /** Saves the next revision; a save that lost to another (a pause asked meanwhile) re-reads the job. */
  private async save(job: RebalanceJob): Promise<RebalanceJob> {
    const { requested, ...rest } = job;
    const saved = this.stamped({ ...rest, ...(requested ? { requested } : {}) });
    if (await this.deps.jobs.save(saved)) return saved;
    const current = await this.job(job.id);
    // A request saved meanwhile (pause, cancel, rate) is kept; the work done stays in the ring and is redone idempotently.
    return current;
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

  private nowSeconds(): number {
    return Math.floor(this.deps.clock.nowMs() / 1000);
  }
}

/** The shards a range is copied to: its new replicas, and its new owner if that was a replica before (to list its copies). */
function copyTargets(range: Pick<RangeProgress, 'from' | 'to'>): number[] {
  const incoming = range.to.filter((shard) => !range.from.includes(shard));
  const newOwner = range.to[0]!;
  return newOwner !== range.from[0] && !incoming.includes(newOwner) ? [newOwner, ...incoming] : incoming;
}

function idOf(entry: Pick<StoredItem, 'namespace' | 'key'>): string {
  return `${entry.namespace}#${entry.key}`;
}

/** The job with counts by stage, the copy rate and an estimate of the time left. */
export function describe(job: RebalanceJob, nowMs: number): RebalanceStatusView {
  const count = (...stages: RangeProgress['stage'][]) => job.ranges.filter((range) => stages.includes(range.stage)).length;
  const span = (range: RangeProgress) => (range.end - range.start + 2 ** 32) % 2 ** 32 || 2 ** 32;
  const total = job.ranges.reduce((sum, range) => sum + span(range), 0);
  const done = job.ranges
    .filter((range) => range.stage === 'moved' || range.stage === 'cleaned')
    .reduce((sum, range) => sum + span(range), 0);
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
      moving: count('copying', 'cutover'),
      moved: count('moved'),
      cleaned: count('cleaned'),
    },
    keysCopied,
    keysPerSecond: Math.round((keysCopied * 1000) / elapsedMs),
    progress,
    ...(ongoing && progress > 0 && progress < 1 ? { etaSeconds: Math.ceil(((elapsedMs / progress) * (1 - progress)) / 1000) } : {}),
  };
}
