// Online rebalancing (docs/rebalancing.md): the service the admin routes and the workflow's step call.
// What each part does, one file each:
// - rebalance-control.ts: start, status, pause, resume, cancel, halt, rate (one revision-checked save each);
// - rebalance-scheduler.ts: one workflow step, which stage runs next, and the backfill's two lanes;
// - the stages: rebalance-backfill.ts (1, the paged copy), rebalance-catch-up.ts (2, copying and catch-up),
//   rebalance-cutover.ts (3, the fenced waves), rebalance-cleanup.ts (4, the finished ring and the cleanup);
// - rebalance-journal.ts: the job as a step saves it; rebalance-context.ts: the ports, limits and ring writes.
//
// Why a backfill before the live writes rather than version-guarded copies under them (the first design,
// bench/results/history.md, "rebalancing: run of record"): a conditional write is one request per item, a batch write carries 25,
// and the copy is most of a move's work. A batch write cannot carry a condition, so it may only go where
// no newer version can be; the catch-up after it is version-guarded and reads both sides' versions.
import type { RebalanceChange, RebalanceJob } from '../ports';
import type { RebalanceDeps } from './rebalance-context';
import { RebalanceControl, type RebalanceStatusView } from './rebalance-control';
import { advanceRebalance } from './rebalance-scheduler';

export type { RebalanceDeps, RebalanceLimits } from './rebalance-context';
export { describe, type RebalanceStatusView } from './rebalance-control';
export { cutoverWave } from './rebalance-cutover';

export class RebalanceService {
  private readonly control: RebalanceControl;

  constructor(private readonly deps: RebalanceDeps) {
    this.control = new RebalanceControl(deps);
  }

  /** Starts rebalance `id`: the job is saved, then the ring marks the shards joining and leaving. */
  start(change: RebalanceChange, options: { id: string; rateKeysPerSecond?: number }): Promise<RebalanceJob> {
    return this.control.start(change, options);
  }

  /** The current (or last) rebalance with its progress; undefined when none ever ran. */
  status(): Promise<RebalanceStatusView | undefined> {
    return this.control.status();
  }

  /** A pause, resume or cancel asked for; whether a workflow must be started to act on it. */
  request(id: string, action: 'pause' | 'resume' | 'cancel'): Promise<{ job: RebalanceJob; startWorkflow: boolean }> {
    return this.control.request(id, action);
  }

  /** The workflow stopped on an error its retries could not get past: paused with the reason. */
  halt(id: string, message: string): Promise<RebalanceJob> {
    return this.control.halt(id, message);
  }

  /** Changes the copy's rate of a rebalance that has not ended. */
  setRate(id: string, rateKeysPerSecond: number): Promise<RebalanceJob> {
    return this.control.setRate(id, rateKeysPerSecond);
  }

  /** One workflow step (rebalance-scheduler.ts). */
  advance(id: string): Promise<RebalanceJob> {
    return advanceRebalance(this.deps, id);
  }
}
