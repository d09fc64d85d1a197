// The rebalance job as one workflow step reads and saves it. The step's two lanes (rebalance-scheduler.ts,
// the backfill and the tail beside it) each save from their own view of the job; the journal applies what
// each changed to the job as last saved, one save after another, so neither undoes the other's ranges.
import type { Clock, RangeProgress, RebalanceJob, RebalanceJobStore } from '../ports';
import { RingstoreError } from './errors';

/** The stored rebalance `id`, or `rebalance.notFound` when the current one is another (or none). */
export async function storedJob(jobs: Pick<RebalanceJobStore, 'current'>, id: string): Promise<RebalanceJob> {
  const job = await jobs.current();
  if (!job || job.id !== id) throw new RingstoreError('rebalance.notFound', `no rebalance ${id}`);
  return job;
}

/** `job` as its next revision, stamped now: the store saves it only over the revision before. */
export function nextRevision(job: RebalanceJob, nowMs: number): RebalanceJob {
  return { ...job, updatedAtMs: nowMs, revision: job.revision + 1 };
}

/** The job's fields a save may change, apart from its ranges (merged one by one). */
const jobFields = [
  'id',
  'change',
  'status',
  'requested',
  'rateKeysPerSecond',
  'cursor',
  'startedAtMs',
  'updatedAtMs',
  'finishedAtMs',
  'ringFinishedAtMs',
  'cancelledFrom',
  'message',
  'revision',
] as const satisfies readonly Exclude<keyof RebalanceJob, 'ranges'>[];
type JobField = (typeof jobFields)[number];
// A field added to RebalanceJob and not listed above fails to compile here, rather than be dropped by a merge.
type Listed<Unlisted extends never> = Unlisted;
export type EveryJobFieldListed = Listed<Exclude<keyof RebalanceJob, JobField | 'ranges'>>;

function setField<K extends JobField>(job: RebalanceJob, key: K, value: RebalanceJob[K]): void {
  // An optional field `next` left out is left out of the merge too (exactOptionalPropertyTypes: not set to undefined).
  if (value === undefined) Reflect.deleteProperty(job, key);
  else job[key] = value;
}

/**
 * `onto` (the job as last saved) with what `next` changed from `base` (the view it was derived from): each
 * field `next` set differently, and each range `next` replaced (the same ranges, by position).
 */
export function withChanges(onto: RebalanceJob, base: RebalanceJob, next: RebalanceJob): RebalanceJob {
  if (onto === base) return next;
  const merged: RebalanceJob = { ...onto };
  for (const key of jobFields) if (next[key] !== base[key]) setField(merged, key, next[key]);
  const sameRanges = [onto.ranges, next.ranges].every(
    (ranges) => ranges.length === base.ranges.length && ranges.every((range, at) => range.end === base.ranges[at]!.end),
  );
  merged.ranges = sameRanges ? next.ranges.map((range, at) => (range === base.ranges[at] ? onto.ranges[at]! : range)) : next.ranges;
  return merged;
}

/**
 * One workflow step's job: the newest revision it read or saved, and its saves, one after another. A save
 * that lost to another writer (a pause asked meanwhile) re-reads the job: the request is kept, and the work
 * done stays in the ring and is redone idempotently.
 */
export class RebalanceJournal {
  /** The job as this step last saved or read it. */
  private current: RebalanceJob;
  /** The save in progress: a step's saves go one after another. */
  private saving: Promise<unknown> = Promise.resolve();
  /** Lanes waiting for the next save (or the end of the other lane). */
  private waiting: Array<() => void> = [];

  constructor(
    private readonly jobs: RebalanceJobStore,
    private readonly clock: Pick<Clock, 'nowMs'>,
    read: RebalanceJob,
  ) {
    this.current = read;
  }

  /** Saves `next`, derived from `base`, as the next revision (what it changed, applied to the job as last saved). */
  save(base: RebalanceJob, next: RebalanceJob): Promise<RebalanceJob> {
    const saving = this.saving.then(async () => {
      const { requested, ...rest } = withChanges(this.latest(base), base, next);
      const saved = nextRevision({ ...rest, ...(requested ? { requested } : {}) }, this.clock.nowMs());
      this.current = (await this.jobs.save(saved)) ? saved : await storedJob(this.jobs, base.id);
      this.wake();
      return this.current;
    });
    this.saving = saving.catch(() => undefined);
    return saving;
  }

  /** Saves `change` to the range at `index`, with `cursor` as the copy's checkpoint (none: the cursor is dropped). */
  saveRange(
    job: RebalanceJob,
    index: number,
    change: Partial<RangeProgress>,
    cursor: RebalanceJob['cursor'] = job.cursor,
  ): Promise<RebalanceJob> {
    const ranges = job.ranges.map((range, at) => (at === index ? { ...range, ...change } : range));
    const { cursor: _old, ...rest } = job;
    return this.save(job, { ...rest, ranges, ...(cursor ? { cursor } : {}) });
  }

  /** The job as this step last saved or read it, when that is `job` or newer. */
  latest(job: RebalanceJob): RebalanceJob {
    const current = this.current;
    return current.id === job.id && current.revision >= job.revision ? current : job;
  }

  /** Resolves at the next save (or wake). */
  nextSave(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Wakes the lanes waiting for a save. */
  wake(): void {
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}
