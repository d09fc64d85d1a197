// Stage 1 of a rebalance (docs/rebalancing.md), the backfill: a range's items read from its owner's token
// index in pages and written to its new replicas as they are, many to a request, at the job's rate, with
// the cursor checkpointed after each page. The same paged copy, version-guarded, relists a range on a new
// owner that was one of its replicas.
import type { RangeCursor, RangePage, RangeProgress, RebalanceJob, StoredItem } from '../ports';
import { versionDigest } from './rebalance';
import type { CatchUpStage } from './rebalance-catch-up';
import {
  copyTargets,
  nowSeconds,
  ownerChangesIn,
  relistTargets,
  withBackoff,
  failoverInTheWayOf,
  type RebalanceDeps,
  type StageContext,
} from './rebalance-context';

export class BackfillStage {
  /** The first page of the next range to backfill, read while the range before it is written (copyPages). */
  private readAhead: { source: string; start: number; end: number; page: Promise<RangePage> } | undefined;
  private paced = 0;
  private pacedFrom = -1;

  constructor(
    private readonly context: StageContext,
    private readonly catchUps: CatchUpStage,
  ) {}

  private get deps(): RebalanceDeps {
    return this.context.deps;
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
  async copyPages(job: RebalanceJob, index: number, pass: 'backfill' | 'relist'): Promise<RebalanceJob> {
    const range = job.ranges[index]!;
    const source = this.deps.tableOf(range.from[0]!);
    const listedOn = ownerChangesIn(range) ? range.to[0] : undefined;
    const targets = pass === 'backfill' ? copyTargets(range).filter((target) => !range.from.includes(target)) : relistTargets(range);
    const write = (target: number, items: readonly StoredItem[]) =>
      withBackoff(this.deps, () =>
        pass === 'backfill'
          ? this.deps.ranges.backfillItems(this.deps.tableOf(target), items, { listed: target === listedOn })
          : this.deps.ranges.copyItems(this.deps.tableOf(target), items, { nowSeconds: nowSeconds(this.deps), listed: true }),
      );
    const finished = (done: RebalanceJob) =>
      pass === 'backfill' ? this.context.journal.saveRange(done, index, { stage: 'backfilled' }) : this.catchUps.caughtUp(done, [index]);
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
      job = await this.context.journal.saveRange(job, index, progress, { end: range.end, after });
      if (!after) return finished(job);
      if (!this.context.stepMayContinue(job)) return job;
      // A failover that began meanwhile: the next step pauses (stepOnce), rather than copy on from its shards.
      if (await failoverInTheWayOf(this.deps, this.context.journal.latest(job))) return job;
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
    return withBackoff(this.deps, () =>
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

  /** Sleeps so that `keys` since `fromMs` stay under `rate` keys per second. */
  private async pace(rate: number, fromMs: number, keys: number): Promise<void> {
    if (rate <= 0) return;
    this.paced = fromMs === this.pacedFrom ? this.paced + keys : keys;
    this.pacedFrom = fromMs;
    const dueMs = fromMs + (this.paced * 1000) / rate;
    const waitMs = dueMs - this.deps.clock.monotonicMs();
    if (waitMs > 0) await this.deps.sleep(waitMs);
  }
}
