// A failover's steps (docs/failover.md), one call each, as the workflow runs them: confirm, fence and wait,
// elect and catch up per range, settle the stranded transactions, publish, re-replicate, or lift the fence
// when the failover cannot finish. Each step reads the ring it acts on and is safe to run again, so a
// workflow may retry any of them; the ring's epoch decides between racing runs. One file per part:
// failover-confirmation.ts, failover-fencing.ts, failover-hand-over.ts, txn-settlement.ts (shared with the
// rebalance's cut-over), failover-re-replication.ts.
import type { HandOverChoice } from './failover';
import { FailoverConfirmation, type Confirmation } from './failover-confirmation';
import { FailoverFencing, type FenceResult } from './failover-fencing';
import { FailoverHandOver, type PublishResult, type RangeHandOver } from './failover-hand-over';
import { ReReplicator, type ReReplication } from './failover-re-replication';
import { TxnSettler, type TxnSettlement, type TxnsFound } from './txn-settlement';
import type { FailoverRequest, FailoverStatus, RangeOwner } from '../ports';
import type { FailoverDeps } from './failover-context';

export { NoCandidateError, type PublishResult, type RangeHandOver } from './failover-hand-over';
export { runningRecordStaleMs, type Confirmation } from './failover-confirmation';
export type { FenceResult } from './failover-fencing';
export type { ReReplication } from './failover-re-replication';
export type { TxnSettlement, TxnsFound } from './txn-settlement';
export type { FailoverDeps } from './failover-context';

export class FailoverService {
  private readonly confirmation: FailoverConfirmation;
  private readonly fencing: FailoverFencing;
  private readonly handOver: FailoverHandOver;
  private readonly settler: TxnSettler;
  private readonly reReplicator: ReReplicator;

  constructor(deps: FailoverDeps) {
    this.confirmation = new FailoverConfirmation(deps);
    this.fencing = new FailoverFencing(deps);
    this.handOver = new FailoverHandOver(deps);
    this.settler = new TxnSettler(deps);
    this.reReplicator = new ReReplicator(deps);
  }

  /** Step 0: records the failover as running and probes the shard; one answer calls it off. */
  confirm(request: FailoverRequest): Promise<Confirmation> {
    return this.confirmation.confirm(request);
  }

  /** The failover's record, with its outcome and report. */
  record(request: FailoverRequest, status: FailoverStatus, report?: unknown): Promise<void> {
    return this.confirmation.record(request, status, report);
  }

  /** Steps 1 and 2: fences the shard's ranges, then waits out the ring lease. */
  fenceAndWait(failed: number): Promise<FenceResult> {
    return this.fencing.fenceAndWait(failed);
  }

  /** Steps 1 and 2 of either action (a failover or a move-back). */
  fenceAndWaitFor(request: FailoverRequest): Promise<FenceResult> {
    return this.fencing.fenceAndWaitFor(request);
  }

  /** Fences every range `failed` owns. */
  fence(failed: number): Promise<FenceResult> {
    return this.fencing.fence(failed);
  }

  /** The failover could not finish: the fence on the shard's ranges is lifted, their owner unchanged. */
  abandon(failed: number): Promise<{ epoch: number; lifted: number[] }> {
    return this.fencing.abandon(failed);
  }

  /** Abandons either action. */
  abandonFor(request: FailoverRequest): Promise<{ epoch: number; lifted: number[] }> {
    return this.fencing.abandonFor(request);
  }

  /** Lifts the fence of `ends`: the ranges stay with their owner. */
  abort(ends: readonly number[]): Promise<{ epoch: number }> {
    return this.fencing.abort(ends);
  }

  /** Step 3a: elects the new owner of a fenced range and catches it up. */
  handOverRange(failed: number, end: number): Promise<RangeHandOver> {
    return this.handOver.handOverRange(failed, end);
  }

  /** A move-back's step 3a. */
  moveBackRange(shard: number, end: number): Promise<RangeHandOver> {
    return this.handOver.moveBackRange(shard, end);
  }

  /** Step 4: publishes the hand-over. */
  publish(failed: number, choices: readonly HandOverChoice[], fencedEpoch: number, by: string): Promise<PublishResult> {
    return this.handOver.publish(failed, choices, fencedEpoch, by);
  }

  /** Whether the ring in force is the one failover `by` published. */
  isPublishedBy(by: string): Promise<boolean> {
    return this.handOver.isPublishedBy(by);
  }

  /** Step 3b: the stranded transactions found, the pending ones aborted. */
  findTransactions(ends: readonly number[]): Promise<TxnsFound> {
    return this.settler.findTransactions(ends);
  }

  /** Step 3c: the committed ones applied on the new owners. */
  applyCommitted(choices: readonly RangeOwner[], found: TxnsFound): Promise<TxnSettlement> {
    return this.settler.applyCommitted(choices, found);
  }

  /** Steps 3b and 3c in turn (in process; the workflow runs 3b beside the hand-over). */
  settleTransactions(choices: readonly RangeOwner[]): Promise<TxnSettlement> {
    return this.settler.settle(choices);
  }

  /** Step 5: replicas added to ranges left with fewer than RF. */
  reReplicate(failed: number, ends: readonly number[], by: string): Promise<ReReplication> {
    return this.reReplicator.reReplicate(failed, ends, by);
  }
}

/** A whole failover in process, step after step, as the workflow runs them (the unit tests drive the service this way). */
export async function failOverInProcess(
  service: FailoverService,
  failed: number,
  id = `failover-${failed}`,
): Promise<{
  fence: FenceResult;
  ranges: RangeHandOver[];
  transactions: TxnSettlement;
  publish: PublishResult;
  reReplication: ReReplication | undefined;
}> {
  const fence = await service.fenceAndWait(failed);
  const ranges: RangeHandOver[] = [];
  try {
    for (const end of fence.ranges) ranges.push(await service.handOverRange(failed, end));
  } catch (error) {
    await service.abandon(failed);
    throw error;
  }
  const choices = ranges.map(({ end, owner }) => ({ end, owner }));
  let transactions: TxnSettlement;
  try {
    transactions = await service.settleTransactions(choices);
  } catch (error) {
    await service.abandon(failed);
    throw error;
  }
  const publish = await service.publish(failed, choices, fence.epoch, id);
  const reReplication = publish.published ? await service.reReplicate(failed, fence.ranges, id) : undefined;
  return { fence, ranges, transactions, publish, reReplication };
}
