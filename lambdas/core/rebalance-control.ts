// A rebalance's control: start, status, pause, resume, cancel, halt and rate (the admin routes and the
// workflow's error path). Each is one revision-checked save of the job, retried over a concurrent one; the
// work itself is the workflow's (rebalance-scheduler.ts).
import type { RangeProgress, RebalanceChange, RebalanceJob } from '../ports';
import { invariant, RingstoreError } from './errors';
import { probeKey } from './maintenance';
import { isShardFailure } from './replication';
import { plannedRanges, startedRing } from './rebalance';
import { ensureStarted, failoverInTheWayOf, readRing, terminalStatuses, type RebalanceDeps } from './rebalance-context';
import { nextRevision, storedJob } from './rebalance-journal';

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

export class RebalanceControl {
  constructor(private readonly deps: RebalanceDeps) {}

  /** Starts rebalance `id`: the job is saved, then the ring marks the shards joining and leaving. */
  async start(change: RebalanceChange, options: { id: string; rateKeysPerSecond?: number }): Promise<RebalanceJob> {
    const previous = await this.deps.jobs.current();
    if (previous && !terminalStatuses.has(previous.status)) {
      throw new RingstoreError('rebalance.conflict', `rebalance ${previous.id} is ${previous.status}: one runs at a time`, {
        details: { id: previous.id, status: previous.status },
      });
    }
    const state = await readRing(this.deps);
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
    await ensureStarted(this.deps, job);
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
      const job = await storedJob(this.deps.jobs, id);
      const refuse = (why: string) =>
        new RingstoreError('rebalance.conflict', `rebalance ${id} is ${job.status}: ${why}`, { details: { id, status: job.status } });
      let next: RebalanceJob;
      let startWorkflow = false;
      if (action === 'pause') {
        if (job.status !== 'running' && job.status !== 'cancelling') throw refuse('only a running rebalance pauses');
        next = { ...job, requested: 'pause' };
      } else if (action === 'resume') {
        if (job.status !== 'paused') throw refuse('only a paused rebalance resumes');
        const inTheWay = await failoverInTheWayOf(this.deps, job);
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
      const saved = this.revised(next);
      if (await this.deps.jobs.save(saved)) return { job: saved, startWorkflow };
    }
  }

  /**
   * The workflow stopped on an error its retries could not get past: the rebalance is paused with the
   * reason, where it stands (every stage is resumable; a fence it held is lifted by the cut-over itself).
   */
  async halt(id: string, message: string): Promise<RebalanceJob> {
    for (;;) {
      const job = await storedJob(this.deps.jobs, id);
      if (terminalStatuses.has(job.status) || job.status === 'paused') return job;
      const { requested: _none, ...rest } = job;
      const saved = this.revised({ ...rest, status: 'paused', message: message.slice(0, 1_000) });
      if (await this.deps.jobs.save(saved)) return saved;
    }
  }

  /** Changes the copy's rate of a rebalance that has not ended; it applies from the next page on. */
  async setRate(id: string, rateKeysPerSecond: number): Promise<RebalanceJob> {
    for (;;) {
      const job = await storedJob(this.deps.jobs, id);
      if (terminalStatuses.has(job.status)) throw new RingstoreError('rebalance.conflict', `rebalance ${id} is ${job.status}`);
      const saved = this.revised({ ...job, rateKeysPerSecond });
      if (await this.deps.jobs.save(saved)) return saved;
    }
  }

  private revised(job: RebalanceJob): RebalanceJob {
    return nextRevision(job, this.deps.clock.nowMs());
  }
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
  const ongoing = !terminalStatuses.has(job.status);
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
