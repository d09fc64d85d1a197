// A failover's fence (docs/failover.md, steps 1 and 2): the ranges that change owner are fenced in one ring
// write and the ring lease waited out, so no write is acknowledged on the old owner from then on; and the way
// back when the failover cannot finish (the fence lifted, the owners unchanged).
import { fencedRangesRing, rangesToMoveBack, unfencedRing } from './failover';
import type { FailoverDeps } from './failover-context';
import { Ring, readRingState } from './ring';
import type { FailoverRequest, RingState } from '../ports';

export interface FenceResult {
  /** The epoch of the fenced ring: the hand-over publishes the one after it. */
  epoch: number;
  /** The ranges to hand over, by end token (empty: the shard owns nothing, nothing to do). */
  ranges: number[];
}

export class FailoverFencing {
  constructor(private readonly deps: Pick<FailoverDeps, 'rings' | 'sleep' | 'faults' | 'limits'>) {}

  /** Step 1 and 2: fences the shard's ranges, then waits out the ring lease on this process's clock. */
  async fenceAndWait(failed: number): Promise<FenceResult> {
    return this.waitOut(await this.fence(failed));
  }

  /** Steps 1 and 2 of either action: the ranges that change owner are fenced, then the lease waited out. */
  async fenceAndWaitFor(request: FailoverRequest): Promise<FenceResult> {
    if (request.action !== 'moveBack') return this.fenceAndWait(request.shard);
    return this.waitOut(await this.fenceRanges((state) => rangesToMoveBack(state, request.shard).map((range) => range.end)));
  }

  private async waitOut(fence: FenceResult): Promise<FenceResult> {
    this.deps.faults?.reach('failover.afterFence');
    if (fence.ranges.length > 0) await this.deps.sleep(this.deps.limits.leaseWaitMs);
    return fence;
  }

  /** The failover could not finish: the fence on the shard's ranges is lifted, their owner unchanged. */
  async abandon(failed: number): Promise<{ epoch: number; lifted: number[] }> {
    const ring = new Ring(await readRingState(this.deps.rings));
    const lifted = ring
      .ranges()
      .filter((range) => range.owner === failed && range.fenced)
      .map((range) => range.end);
    const { epoch } = await this.abort(lifted);
    return { epoch, lifted };
  }

  /** Abandons either action: the fence it placed is lifted, the owners unchanged. */
  async abandonFor(request: FailoverRequest): Promise<{ epoch: number; lifted: number[] }> {
    if (request.action !== 'moveBack') return this.abandon(request.shard);
    const lifted = rangesToMoveBack(await readRingState(this.deps.rings), request.shard)
      .filter((range) => range.fenced)
      .map((range) => range.end);
    const { epoch } = await this.abort(lifted);
    return { epoch, lifted };
  }

  /**
   * Fences every range `failed` owns. Run again after a partial failure, it finds them fenced and
   * changes nothing; a ring that moved meanwhile is read again and fenced at its own epoch.
   */
  async fence(failed: number): Promise<FenceResult> {
    return this.fenceRanges((state) =>
      new Ring(state)
        .ranges()
        .filter((range) => range.owner === failed)
        .map((range) => range.end),
    );
  }

  private async fenceRanges(select: (state: RingState) => number[]): Promise<FenceResult> {
    for (;;) {
      const state = await readRingState(this.deps.rings);
      const ends = select(state);
      if (ends.length === 0) return { epoch: state.epoch, ranges: [] };
      const ring = new Ring(state);
      if (ends.every((end) => ring.isFenced(end))) return { epoch: state.epoch, ranges: ends };
      const next = fencedRangesRing(state, ends);
      if (await this.deps.rings.publishRing(next)) return { epoch: next.epoch, ranges: ends };
    }
  }

  /** Lifts the fence of `ends` (a failover that cannot finish): the ranges stay with their owner. */
  async abort(ends: readonly number[]): Promise<{ epoch: number }> {
    for (;;) {
      const state = await readRingState(this.deps.rings);
      const fenced = new Set(state.fenced ?? []);
      if (!ends.some((end) => fenced.has(end))) return { epoch: state.epoch };
      const next = unfencedRing(state, ends);
      if (await this.deps.rings.publishRing(next)) return { epoch: next.epoch };
    }
  }
}
