// What a rebalance's control and its stages share: the ports and limits, the ring writes every stage makes
// (each checks the ring first, so a retried step finds its own work done), the throttling backoff, and the
// facts about a range that decide where it is copied and whether its cut-over is fenced.
import type {
  Clock,
  FaultInjector,
  RangeProgress,
  RangeStore,
  RebalanceJob,
  RebalanceJobStore,
  RingState,
  RingStore,
  StoredItem,
  VersionEntry,
  ShardIndexes,
  ShardItemReads,
} from '../ports';
import { isRingstoreError, RingstoreError } from './errors';
import type { TxnSettler } from './txn-settlement';
import { failoverInTheWay, ownerChanges, startedRing, versionDigest } from './rebalance';
import type { RebalanceJournal } from './rebalance-journal';
import { Ring, readRingState } from './ring';

export interface RebalanceDeps {
  rings: Pick<RingStore, 'readRing' | 'publishRing'>;
  shards: Pick<ShardItemReads, 'get'> & Pick<ShardIndexes, 'versionsInRange'>;
  ranges: RangeStore;
  jobs: RebalanceJobStore;
  /** Transactions with intents on a range whose owner changes are settled under its fence, as a failover's are. */
  transactions: Pick<TxnSettler, 'findTransactions' | 'applyCommitted'>;
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

/** Statuses a rebalance ends in. */
export const terminalStatuses: ReadonlySet<RebalanceJob['status']> = new Set(['done', 'cancelled']);

/** What every stage of one workflow step works with: the ports, the step's job journal, and whether it may go on. */
export interface StageContext {
  deps: RebalanceDeps;
  journal: RebalanceJournal;
  /** Neither a request (pause, cancel) nor the budget nor the other lane's failure stops the step here. */
  stepMayContinue(job: RebalanceJob): boolean;
  /** The step's work budget (stepBudgetMs) is spent: it checkpoints and returns. */
  budgetSpent(): boolean;
}

export function readRing(deps: Pick<RebalanceDeps, 'rings'>): Promise<RingState> {
  return readRingState(deps.rings);
}

/** Publishes `next(state)` unless `done(ring)` already holds; retried on a concurrent publication. */
export async function publishRing(
  deps: Pick<RebalanceDeps, 'rings'>,
  next: (state: RingState) => RingState,
  done: (ring: Ring) => boolean,
): Promise<void> {
  for (;;) {
    const state = await readRing(deps);
    if (done(new Ring(state))) return;
    if (await deps.rings.publishRing(next(state))) return;
  }
}

/**
 * The ranges this rebalance may have fenced itself: a wave's ranges are fenced only while in the `cutover`
 * stage (a crash between the fence and the cut-over leaves them so until the retried step lifts them).
 */
export function ownFences(job: RebalanceJob): ReadonlySet<number> {
  return new Set(job.ranges.filter((range) => range.stage === 'cutover').map((range) => range.end));
}

/**
 * publishRing, unless a failover is in the way on the ring it would publish over (false then, nothing
 * written): a wave is not fenced, nor a group marked copying, over a failover that began since the lane
 * looked (its hand-over would find its ranges' replicas changed). The work already under way goes on.
 */
export async function publishUnlessFailover(
  context: StageContext,
  job: RebalanceJob,
  next: (state: RingState) => RingState,
  done: (ring: Ring) => boolean,
): Promise<boolean> {
  const own = ownFences(context.journal.latest(job));
  for (;;) {
    const state = await readRing(context.deps);
    if (done(new Ring(state))) return true;
    if (failoverInTheWay(state, own)) return false;
    if (await context.deps.rings.publishRing(next(state))) return true;
  }
}

/** Why a failover on the ring stops this rebalance now (failoverInTheWay), or undefined. */
export async function failoverInTheWayOf(deps: Pick<RebalanceDeps, 'rings'>, job: RebalanceJob): Promise<string | undefined> {
  const state = await readRing(deps);
  return failoverInTheWay(state, ownFences(job));
}

/** Publishes the started ring if the job's start was cut short between saving the job and the ring. */
export async function ensureStarted(deps: Pick<RebalanceDeps, 'rings' | 'tableOf'>, job: RebalanceJob): Promise<void> {
  for (;;) {
    const state = await readRing(deps);
    if (state.rebalance === job.id || job.ranges.some((range) => range.stage !== 'planned') || job.cancelledFrom) return;
    if (state.rebalance !== undefined) {
      throw new RingstoreError('rebalance.conflict', `the ring is in rebalance ${state.rebalance}, not ${job.id}`);
    }
    if (await deps.rings.publishRing(startedRing(state, job.change, job.id, deps.tableOf))) return;
  }
}

/** Retries a shard request that met throttling, waiting longer each time (the copy yields to clients). */
export async function withBackoff<T>(deps: Pick<RebalanceDeps, 'limits' | 'sleep'>, request: () => Promise<T>): Promise<T> {
  const { first, max } = deps.limits.backoffMs;
  for (let waitMs = first; ; waitMs = Math.min(max, waitMs * 2)) {
    try {
      return await request();
    } catch (error) {
      if (!isRingstoreError(error, 'throttled') || waitMs >= max) throw error;
      await deps.sleep(waitMs);
    }
  }
}

export function nowSeconds(deps: Pick<RebalanceDeps, 'clock'>): number {
  return Math.floor(deps.clock.nowMs() / 1000);
}

/** The shards a range is copied to: its new replicas, and its new owner if that was a replica before (to list its copies). */
export function copyTargets(range: Pick<RangeProgress, 'from' | 'to'>): number[] {
  const incoming = range.to.filter((shard) => !range.from.includes(shard));
  const newOwner = range.to[0]!;
  return newOwner !== range.from[0] && !incoming.includes(newOwner) ? [newOwner, ...incoming] : incoming;
}

/** The new owner of a range, when it was one of its replicas: its copies are relisted, version-guarded, once it is `copying`. */
export function relistTargets(range: Pick<RangeProgress, 'from' | 'to'>): number[] {
  const newOwner = range.to[0]!;
  return newOwner !== range.from[0] && range.from.includes(newOwner) ? [newOwner] : [];
}

/** The range's owner changes: its cut-over is fenced. */
export function ownerChangesIn(range: Pick<RangeProgress, 'from' | 'to'>): boolean {
  return ownerChanges({ move: { phase: 'copying', ...range } });
}

/**
 * A range cut over with no fence and no further comparison: its owner stays, and its catch-up found its
 * new replicas holding every key at the owner's version (keysBehind 0) after they began to take its live
 * writes; what was written since reaches them by the stream and the fan-out, as it would after a second
 * comparison (an unfenced comparison proves no more, since writes go on after it).
 */
export function isVerifiedUnfenced(range: RangeProgress): boolean {
  return range.keysBehind === 0 && !ownerChangesIn(range);
}

/**
 * The owner holds exactly the keys and versions the backfill wrote to the range's new replicas, and
 * every new replica was backfilled (none is a replica before being relisted): no live write of the range
 * reached the owner since, so each new replica holds every key at the owner's version (a write reaching
 * them since the copying mark only brings a newer one) and the catch-up need not read their versions.
 */
export function unchangedSinceBackfill(range: RangeProgress, owned: readonly VersionEntry[]): boolean {
  if (!range.backfilled || relistTargets(range).length > 0) return false;
  const digest = versionDigest(owned);
  return digest.keys === range.backfilled.keys && digest.digest === range.backfilled.digest;
}

export function idOf(entry: Pick<StoredItem, 'namespace' | 'key'>): string {
  return `${entry.namespace}#${entry.key}`;
}
