// Stage 3 of a rebalance, the cut-over (docs/rebalancing.md): a wave of ranges caught up and handed to their
// new replicas in one ring write; those whose owner changes are fenced first and their transactions settled
// under the fence.
import type { RangeProgress, RebalanceJob, VersionEntry } from '../ports';
import { forAllBounded } from './bounded';
import { fencedRangesRing, unfencedRing } from './failover';
import { isCrashInjected } from './faults';
import { withMovePhase } from './rebalance';
import type { CatchUpStage } from './rebalance-catch-up';
import {
  copyTargets,
  idOf,
  isVerifiedUnfenced,
  ownerChangesIn,
  publishRing,
  publishUnlessFailover,
  withBackoff,
  type RebalanceDeps,
  type RebalanceLimits,
  type StageContext,
} from './rebalance-context';

export class CutOverStage {
  constructor(
    private readonly context: StageContext,
    private readonly catchUps: CatchUpStage,
  ) {}

  private get deps(): RebalanceDeps {
    return this.context.deps;
  }

  /**
   * The next wave from the range at `first` (ready for its cut-over): every range ready whose owner stays and
   * whose catch-up found nothing behind, together, when there is one; otherwise cutoverWave's.
   */
  cutOverFrom(job: RebalanceJob, first: number): Promise<RebalanceJob> {
    const verified = job.ranges.flatMap((range, index) => (range.stage === 'cutover' && isVerifiedUnfenced(range) ? [index] : []));
    return this.cutOver(job, verified.length > 0 ? verified : cutoverWave(job.ranges, first, this.deps.limits));
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
      const fenced = await publishUnlessFailover(
        this.context,
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
              await this.catchUps.catchUp(range, fenced ? 'fenced' : 'unfenced', fenced ? [range.to[0]!] : copyTargets(range)),
            );
        }),
      ]);
      if (found) {
        const owners = wave.filter((range) => fencedEnds.includes(range.end)).map((range) => ({ end: range.end, owner: range.to[0]! }));
        await this.deps.transactions.applyCommitted(owners, found);
      }
      await publishRing(
        this.deps,
        (state) => withMovePhase(state, ends, 'moved'),
        (ring) => ends.every((end) => ring.rangeOf(end).move?.phase === 'moved'),
      );
      this.deps.faults?.reach('rebalance.afterCutover');
    } catch (error) {
      if (isCrashInjected(error) || fencedEnds.length === 0) throw error;
      // The wave cannot be cut over now: the fences are lifted, its ranges stay with their owners, the next step retries.
      await publishRing(
        this.deps,
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
    return this.context.journal.save(job, { ...job, ranges });
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
      const held = await withBackoff(this.deps, () => this.deps.shards.versionsInRange(this.deps.tableOf(target), range));
      const versions = new Map(held.map((entry) => [idOf(entry), entry.version]));
      const behind = owned.filter((entry) => (versions.get(idOf(entry)) ?? 0) < entry.version);
      copied += await this.catchUps.copyBehind(
        range,
        newOwner,
        behind.map((entry) => ({ target, entry })),
      );
    }
    return copied;
  }
}

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
