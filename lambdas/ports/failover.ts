// Failover (docs/failover.md): what starts one, its record in the control table, the workflow that runs it,
// and its observations.

/** What starts a failover of a shard: a request that could not reach it, the probe, or an admin. */
export interface FailoverRequest {
  /** Unique per shard and ring epoch: starting the same one twice runs it once. */
  id: string;
  shard: number;
  reason: string;
  requestedAtMs: number;
  /**
   * `failOver` (the default): the shard's ranges go to live replicas. `moveBack`: the ranges a failover
   * took from the shard, now rejoined, go back to it (the vnode walk's owner again).
   */
  action?: FailoverAction;
}

export type FailoverAction = 'failOver' | 'moveBack';

/** `notDown`: the shard answered, nothing changed; `notReady`: a move-back found nothing to move or the shard not rejoined. */
export type FailoverStatus = 'running' | 'notDown' | 'notReady' | 'completed' | 'lost' | 'aborted';

/** One failover as its record in the control table keeps it (GET /v1/admin/failovers). */
export interface FailoverRecord extends FailoverRequest {
  status: FailoverStatus;
  updatedAtMs: number;
  /** The report of the finished workflow: confirmation, fence, each range's choice, publication. */
  report?: unknown;
}

export interface FailoverLog {
  save(record: FailoverRecord): Promise<void>;
  /** The most recent failovers first, at most `limit`. */
  recent(limit: number): Promise<FailoverRecord[]>;
}

/** Starts the failover workflow (Step Functions in AWS, aws-local-stepfunctions locally). */
export interface FailoverStarter {
  /** False when a run with this id exists already (started earlier): nothing new runs. */
  start(request: FailoverRequest): Promise<boolean>;
}

/** Failover observations (docs/operations.md, "Failover metrics"). */
export interface FailoverMetrics {
  /**
   * A write or strong read not answered from the shard it was routed to: its range was fenced
   * (`fenced`, answered a retryable 503) or the ring moved while it ran (`stale`, sent again).
   */
  routeRefused(reason: 'fenced' | 'stale'): void;
  /** A failover or move-back ended: its status, its time from request to report, and the ranges it moved. */
  failoverFinished(outcome: { status: FailoverStatus; action: FailoverAction; durationMs: number; rangesMoved: number }): void;
  /** A rejoining shard held this many copies its ranges' new owners never saw. */
  divergentFound(count: number): void;
}
