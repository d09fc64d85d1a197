// The failover's steps on the ports (docs/failover.md): fence, elect and catch up per range, hand over,
// or lift the fence when the failover cannot finish. Each step reads the ring it acts on and is safe to
// run again, so a workflow may retry any of them; the ring's epoch decides between racing runs.
import { forAllBounded } from './bounded';
import { invariant, isRingstoreError } from './errors';
import {
  catchUpFor,
  electOwner,
  fencedRangesRing,
  handedOverRing,
  handOverStale,
  rangeSeen,
  rangesToMoveBack,
  reReplicationPlan,
  unfencedRing,
  withAddedReplicas,
  withReadyReplicas,
  type CandidateView,
  type Election,
  type HandOverChoice,
  type RangeSeen,
} from './failover';
import { isCrashInjected } from './faults';
import { isShardFailure } from './replication';
import type {
  Clock,
  FailoverLog,
  FailoverRecord,
  FailoverRequest,
  FailoverStatus,
  FaultInjector,
  HintStore,
  RangeOwner,
  RingState,
  RingStore,
  ShardHealthStore,
  ShardStore,
  StoredItem,
  TxnCommittedWrite,
  TxnKeyRef,
  TxnRecordStore,
  VersionEntry,
} from '../ports';
import { tombstoneRetentionSeconds } from './item';
import { Ring, tokenOf, type TokenRange, readRingState } from './ring';
import { probeKey } from './maintenance';

export interface FailoverDeps {
  rings: Pick<RingStore, 'readRing' | 'publishRing'>;
  shards: ShardStore;
  hints: HintStore;
  /** Transactions with intents on the failed owner are settled from their records before the hand-over. */
  records: Pick<TxnRecordStore, 'dueBetween' | 'decide' | 'find'>;
  /** The failed shard is marked unavailable at the hand-over: it serves again only once it has rejoined. */
  health: ShardHealthStore;
  clock: Clock;
  log: FailoverLog;
  /** Waits on this process's clock (the lease wait, the pause between probes). */
  sleep: (ms: number) => Promise<void>;
  faults?: FaultInjector;
  limits: {
    catchUpConcurrency: number;
    hintPageSize: number;
    /** Probes in a row, none answered, that confirm a shard is down; one answer calls the failover off. */
    confirmProbes: number;
    confirmIntervalMs: number;
    /** What the fence step waits after publishing: the ring lease and its margin (ring-source). */
    leaseWaitMs: number;
    /**
     * The transactions settled are those whose deadline lies from this long before the shard was
     * marked down (or now) to `txnLookaheadMs` after now: an intent still unapplied on it was placed
     * before it failed, by a transaction the sweeper (which runs every minute) had not finished.
     */
    txnLookbackMs: number;
    txnLookaheadMs: number;
    txnPageSize: number;
  };
}

/** What re-replication did (the failover's report). */
export interface ReReplication {
  /** Replicas added, per range (end token and shard). */
  added: Array<{ end: number; shard: number }>;
  /** Versions the added replicas were backfilled with from their range's owner. */
  copied: number;
  /** Whether they count as copies now. */
  ready: boolean;
}

/** The transactions of the fenced ranges, found (and the pending ones aborted) beside the hand-over. */
export interface TxnsFound {
  examined: number;
  aborted: number;
  /** Committed ones whose recorded writes the new owners get. */
  committed: string[];
  withoutWrites: string[];
  intentsLeft: Array<{ namespace: string; key: string; txid: string }>;
}

/** What settling the failed owner's transactions did (the failover's report). */
export interface TxnSettlement {
  /** Transaction records read in the window. */
  examined: number;
  /** Pending ones with a key in a handed-over range, aborted (their intents are on the failed owner). */
  aborted: number;
  /** Committed ones with a key in a handed-over range, whose writes were applied from the record. */
  rolledForward: number;
  /** Versions those writes added on the new owners and the other replicas (0: they held them already). */
  versionsApplied: number;
  /** Committed ones decided before records carried their writes: left to the old owner's return. */
  withoutWrites: string[];
  /** Their intents left on the failed owner: cleared when it rejoins (rejoin.ts). */
  intentsLeft: Array<{ namespace: string; key: string; txid: string }>;
}

export interface Confirmation {
  down: boolean;
  /** Whether the workflow goes on: a failover when the shard is down, a move-back when it is ready. */
  proceed: boolean;
  /** Probes sent; a failover goes ahead only when none answered. */
  probes: number;
  reason: string;
}

export interface FenceResult {
  /** The epoch of the fenced ring: the hand-over publishes the one after it. */
  epoch: number;
  /** The ranges to hand over, by end token (empty: the shard owns nothing, nothing to do). */
  ranges: number[];
}

export interface RangeHandOver extends HandOverChoice {
  /** What the election saw of the range: the publication checks the ring still shows it. */
  before: RangeSeen;
  /** Candidates that answered, with the newest versions each lacked before the catch-up. */
  missing: Record<number, number>;
  /** Candidates that did not answer. */
  unreachable: number[];
  /** Versions copied to the new owner from the other candidates; hints applied to the candidates. */
  copied: number;
  hintsApplied: number;
  /** The new owner's own copies that joined the listing index. */
  relisted: number;
}

export type PublishResult = { published: true; epoch: number } | { published: false; epoch: number; reason: string };

/** Thrown when no candidate of a range answers: the failover cannot finish (its Catch lifts the fence). */
/** The transaction records' window is read in slices of the deadline index's partitions (a minute), this many at once. */
/** Recent failover records a new failover looks through for one of its shard still running. */
const failoverRecordsSearched = 50;

/**
 * A running record not updated for this long is of a run that died (its fence was lifted by the abort path, or
 * is lifted by the next failover's own): far longer than any confirm, fence and hand-over take.
 */
export const runningRecordStaleMs = 30 * 60_000;

const settleWindowMs = 60_000;
const settleWindowsAtOnce = 8;

export class NoCandidateError extends Error {
  constructor(
    readonly end: number,
    message = `no replica of the range ending at ${end} answers: it cannot get a new owner`,
  ) {
    super(message);
  }
}

export class FailoverService {
  constructor(private readonly deps: FailoverDeps) {}

  /**
   * Step 0: records the failover as running and probes the shard `confirmProbes` times,
   * `confirmIntervalMs` apart. One answer, however slow, calls it off: a slow shard keeps its ranges.
   */
  async confirm(request: FailoverRequest): Promise<Confirmation> {
    await this.record(request, 'running');
    const ahead = await this.runningAhead(request);
    if (ahead) {
      return {
        down: false,
        proceed: false,
        probes: 0,
        reason: `failover ${ahead.id} of shard ${request.shard} is in progress: this one stands down`,
      };
    }
    if (request.action === 'moveBack') return this.confirmMoveBack(request.shard);
    const ring = new Ring(await this.ring());
    if (!ring.ownsAnyRange(request.shard)) {
      return { down: false, proceed: false, probes: 0, reason: `shard ${request.shard} owns no token range` };
    }
    const table = ring.shard(request.shard).table;
    const { confirmProbes, confirmIntervalMs } = this.deps.limits;
    for (let probe = 1; probe <= confirmProbes; probe += 1) {
      if (await this.answers(table)) return { down: false, proceed: false, probes: probe, reason: `${table} answered probe ${probe}` };
      if (probe < confirmProbes) await this.deps.sleep(confirmIntervalMs);
    }
    this.deps.faults?.reach('failover.afterConfirm');
    return {
      down: true,
      proceed: true,
      probes: confirmProbes,
      reason: `${table} answered none of ${confirmProbes} probes ${confirmIntervalMs} ms apart`,
    };
  }

  /**
   * Another failover or move-back of the same shard, still running and asked for first (the earlier request,
   * then the smaller id): two of one shard at once would elect owners for ranges the other already handed
   * over. A record not updated for `runningRecordStaleMs` is of a run that died, and holds nothing back.
   */
  private async runningAhead(request: FailoverRequest): Promise<FailoverRecord | undefined> {
    const nowMs = this.deps.clock.nowMs();
    const first = (record: FailoverRecord) =>
      record.requestedAtMs < request.requestedAtMs || (record.requestedAtMs === request.requestedAtMs && record.id < request.id);
    return (await this.deps.log.recent(failoverRecordsSearched)).find(
      (record) =>
        record.shard === request.shard &&
        record.id !== request.id &&
        record.status === 'running' &&
        nowMs - record.updatedAtMs < runningRecordStaleMs &&
        first(record),
    );
  }

  /**
   * A move-back goes ahead only for a shard that answers, has rejoined (its copies reconciled, serving
   * reads) and has ranges a failover took from it.
   */
  private async confirmMoveBack(shard: number): Promise<Confirmation> {
    const state = await this.ring();
    const notReady = (reason: string, probes = 0): Confirmation => ({ down: false, proceed: false, probes, reason });
    if (rangesToMoveBack(state, shard).length === 0) return notReady(`shard ${shard} has no range a failover took from it`);
    if ((state.rejoining ?? []).some((entry) => entry.shard === shard)) {
      return notReady(`shard ${shard} has not rejoined yet: maintenance reconciles it once it answers`);
    }
    const table = new Ring(state).shard(shard).table;
    const status = (await this.deps.health.all()).get(table)?.status ?? 'available';
    if (status !== 'available') return notReady(`${table} is ${status}: it serves reads again before ranges move back to it`);
    if (!(await this.answers(table))) return notReady(`${table} did not answer its probe`, 1);
    return { down: false, proceed: true, probes: 1, reason: `${table} answers and has rejoined` };
  }

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

  /** The failover's record, with its outcome and report. */
  async record(request: FailoverRequest, status: FailoverStatus, report?: unknown): Promise<void> {
    await this.deps.log.save({ ...request, status, updatedAtMs: this.deps.clock.nowMs(), ...(report === undefined ? {} : { report }) });
  }

  /** The failover could not finish: the fence on the shard's ranges is lifted, their owner unchanged. */
  async abandon(failed: number): Promise<{ epoch: number; lifted: number[] }> {
    const ring = new Ring(await this.ring());
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
    const lifted = rangesToMoveBack(await this.ring(), request.shard)
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
      const state = await this.ring();
      const ends = select(state);
      if (ends.length === 0) return { epoch: state.epoch, ranges: [] };
      const ring = new Ring(state);
      if (ends.every((end) => ring.isFenced(end))) return { epoch: state.epoch, ranges: ends };
      const next = fencedRangesRing(state, ends);
      if (await this.deps.rings.publishRing(next)) return { epoch: next.epoch, ranges: ends };
    }
  }

  /**
   * Elects the new owner of the fenced range ending at `end` among its replicas other than `failed`
   * that answer, and copies to it every newer version the others hold and every hint addressed to it.
   */
  async handOverRange(failed: number, end: number): Promise<RangeHandOver> {
    // A replica still being backfilled is no candidate: it may lack older keys.
    return this.handTo(
      end,
      (range) => range.replicas.filter((shard) => shard !== failed && !range.backfilling?.includes(shard)),
      electOwner,
    );
  }

  /**
   * A move-back's hand-over of the fenced range ending at `end` to `shard`: every replica that answers is
   * compared, and `shard` gets every newer version another holds and the hints addressed to it.
   */
  async moveBackRange(shard: number, end: number): Promise<RangeHandOver> {
    return this.handTo(
      end,
      (range) => range.replicas,
      (views) => {
        if (!views.some((view) => view.shard === shard)) {
          throw new NoCandidateError(end, `shard ${shard} does not answer: the range ending at ${end} cannot move back to it`);
        }
        return catchUpFor(views, shard);
      },
    );
  }

  /** Compares the candidates that answer, lets `choose` pick the owner, and catches it up and lists it. */
  private async handTo(
    end: number,
    candidatesOf: (range: TokenRange) => number[],
    choose: (views: readonly CandidateView[]) => Election,
  ): Promise<RangeHandOver> {
    const state = await this.ring();
    const ring = new Ring(state);
    const range = ring.rangeOf(end);
    invariant(range.end === end, `no token range ends at ${end}`);
    invariant(range.fenced, `the range ending at ${end} is not fenced: fence it before electing its owner`);
    // Read before the election: if the fence or the replicas change after this, the publication finds out.
    const before = rangeSeen(state, range);
    const views: CandidateView[] = [];
    const unreachable: number[] = [];
    const hinted = new Map<number, VersionEntry[]>();
    for (const shard of candidatesOf(range)) {
      const table = ring.shard(shard).table;
      try {
        // Hints first: a hint may be the only copy of a strong write besides the failed owner's (its
        // other replica down when it was acknowledged), so every candidate takes its own before the
        // candidates are compared. Hinted handoff is version-guarded: applying them early is safe.
        hinted.set(shard, await this.applyHints(table));
        views.push({ shard, entries: await this.deps.shards.versionsInRange(table, range) });
      } catch (error) {
        if (isCrashInjected(error) || !isShardFailure(error)) throw error;
        unreachable.push(shard);
      }
    }
    if (views.length === 0) throw new NoCandidateError(end);
    const election = choose(views);
    const owner = ring.shard(election.owner).table;
    this.deps.faults?.reach('failover.afterElection');
    let copied = 0;
    await forAllBounded(election.catchUp, this.deps.limits.catchUpConcurrency, async (step) => {
      // The index may lag its table: the item is read consistently and copied with the version guard.
      const item = await this.deps.shards.get(ring.shard(step.from).table, step.namespace, step.key, { consistent: true });
      if (item && (await this.deps.shards.applyReplica(owner, item, { nowSeconds: this.nowSeconds(), listed: true }))) copied += 1;
    });
    // The new owner's own copies join the listing index (only owners' copies are listed): those it held,
    // and those its hints just gave it (which the token index may not show yet). Copies caught up above
    // were written listed.
    const chosen = views.find((view) => view.shard === election.owner)!;
    const hintedInRange = (hinted.get(election.owner) ?? []).filter((entry) => ring.rangeOf(entry.token).end === end);
    const relisted = await this.deps.shards.listAsOwner(owner, [...chosen.entries, ...hintedInRange]);
    const hintsApplied = [...hinted.values()].reduce((sum, entries) => sum + entries.length, 0);
    this.deps.faults?.reach('failover.afterHandOver');
    return { end, owner: election.owner, before, missing: election.missing, unreachable, copied, hintsApplied, relisted };
  }

  /**
   * Publishes the hand-over of the choices, fenced at `fencedEpoch`. The ring may have moved on since for
   * other ranges (a rebalance's cut-over beside it, another shard's failover): the hand-over still applies
   * while each of its ranges is fenced with the roles its election saw (handOverStale), and is published
   * on the ring in force. False when it no longer applies (another run of this failover won, a range
   * changed): nothing is written.
   */
  async publish(failed: number, choices: readonly HandOverChoice[], fencedEpoch: number, by: string): Promise<PublishResult> {
    for (;;) {
      const state = await this.ring();
      // Run again after it published (a retried task): a ring written since its fence by this failover.
      if (state.epoch > fencedEpoch && state.changedBy === by) {
        await this.markRejoining(state, failed, by);
        return { published: true, epoch: state.epoch };
      }
      if (state.epoch !== fencedEpoch) {
        const stale = handOverStale(state, choices);
        if (stale)
          return { published: false, epoch: state.epoch, reason: `the ring moved from epoch ${fencedEpoch} to ${state.epoch}: ${stale}` };
      }
      const next = { ...handedOverRing(state, choices, by), changedBy: by };
      if (await this.deps.rings.publishRing(next)) {
        await this.markRejoining(next, failed, by);
        this.deps.faults?.reach('failover.afterPublish');
        return { published: true, epoch: next.epoch };
      }
      // Another change won the race for this epoch: the ring is read again.
    }
  }

  /**
   * Step 3b, once the fence's lease wait is over (it runs beside the hand-over): the transactions with a
   * write in a fenced range on the shard that owns it now (its intents are there). A pending one is
   * aborted: its intent sits on a shard that is losing the range, so it must not commit (the conditional
   * decision races its coordinator fairly; if the coordinator commits first, it is committed). Returns
   * the committed ones, which `applyCommitted` applies once the new owners are chosen.
   */
  async findTransactions(ends: readonly number[]): Promise<TxnsFound> {
    const ring = new Ring(await this.ring());
    const fenced = new Set(ends);
    // Before the publication the ring still names each range's previous owner: the shard its intents are on.
    const previousTables = new Set(ends.map((end) => ring.shard(ring.rangeOf(end).owner).table));
    const stranded = (ref: TxnKeyRef) => {
      const range = ring.rangeOf(tokenOf(ref.namespace, ref.key));
      return fenced.has(range.end) && ring.shard(range.owner).table === ref.table;
    };
    const found: TxnsFound = { examined: 0, aborted: 0, committed: [], withoutWrites: [], intentsLeft: [] };
    const { txnLookbackMs, txnLookaheadMs, txnPageSize } = this.deps.limits;
    const nowMs = this.deps.clock.nowMs();
    const health = await this.deps.health.all();
    const downSinceMs = Math.min(
      nowMs,
      ...[...previousTables].map((table) => {
        const mark = health.get(table);
        return mark && mark.status !== 'available' ? mark.sinceMs : nowMs;
      }),
    );
    const untilMs = nowMs + txnLookaheadMs;
    const seen = new Set<string>();
    // The window is read a minute at a time, the minutes concurrently: the deadline index is partitioned
    // by minute, so one walk over the whole window would take one round trip per minute in turn.
    const windows: Array<[number, number]> = [];
    for (let fromMs = downSinceMs - txnLookbackMs; fromMs < untilMs; fromMs += settleWindowMs) {
      windows.push([fromMs, Math.min(untilMs, fromMs + settleWindowMs)]);
    }
    await forAllBounded(windows, settleWindowsAtOnce, async ([fromMs, toMs]) => {
      for (let cursor = fromMs; ;) {
        const page = await this.deps.records.dueBetween(cursor, toMs, txnPageSize);
        for (const record of page) {
          if (seen.has(record.txid)) continue;
          seen.add(record.txid);
          found.examined += 1;
          const left = record.keys.filter(stranded);
          if (left.length === 0) continue;
          found.intentsLeft.push(...left.map(({ namespace, key }) => ({ namespace, key, txid: record.txid })));
          let current = record;
          if (current.status === 'pending') {
            current = (await this.deps.records.decide(record.txid, 'aborted', { reason: 'failover' })) ?? record;
            if (current.status === 'aborted') found.aborted += 1;
          }
          if (current.status !== 'committed') continue;
          if (current.writes) found.committed.push(current.txid);
          else found.withoutWrites.push(current.txid);
        }
        if (page.length < txnPageSize) return;
        const last = page[page.length - 1]!.deadlineMs;
        // A full page of one millisecond's deadlines moves on by one (the seen set skips repeats).
        cursor = last === cursor ? last + 1 : last;
      }
    });
    return found;
  }

  /**
   * Step 3c, after the hand-over's catch-up and before the publication: each committed transaction
   * `findTransactions` returned has its writes in a handed-over range applied from its record on the new
   * owner and the range's other live candidates, version-guarded: a write the old owner had applied and
   * replicated is already there, and nothing changes.
   */
  async applyCommitted(choices: readonly RangeOwner[], found: TxnsFound): Promise<TxnSettlement> {
    const ring = new Ring(await this.ring());
    const newOwners = new Map(choices.map(({ end, owner }) => [end, owner]));
    const settlement: TxnSettlement = {
      examined: found.examined,
      aborted: found.aborted,
      rolledForward: 0,
      versionsApplied: 0,
      withoutWrites: found.withoutWrites,
      intentsLeft: found.intentsLeft,
    };
    await forAllBounded(found.committed, this.deps.limits.catchUpConcurrency, async (txid) => {
      const record = await this.deps.records.find(txid);
      if (record?.status !== 'committed' || !record.writes) return;
      settlement.versionsApplied += await this.applyWrites(record.writes, ring, newOwners);
      settlement.rolledForward += 1;
    });
    return settlement;
  }

  /** Steps 3b and 3c in turn (in process; the workflow runs 3b beside the hand-over). */
  async settleTransactions(choices: readonly RangeOwner[]): Promise<TxnSettlement> {
    return this.applyCommitted(choices, await this.findTransactions(choices.map((choice) => choice.end)));
  }

  private async applyWrites(writes: readonly TxnCommittedWrite[], ring: Ring, newOwners: ReadonlyMap<number, number>): Promise<number> {
    let applied = 0;
    const nowSeconds = this.nowSeconds();
    for (const write of writes) {
      const range = ring.rangeOf(write.token);
      const owner = newOwners.get(range.end);
      if (owner === undefined) continue;
      const item = committedItemOf(write, this.deps.clock.nowMs());
      const copies = [owner, ...range.replicas.filter((shard) => shard !== owner && shard !== range.owner)];
      for (const shard of copies) {
        try {
          const listed = shard === owner;
          if (await this.deps.shards.applyReplica(ring.shard(shard).table, item, { nowSeconds, listed })) applied += 1;
        } catch (error) {
          // Another replica that cannot take it now gets it from anti-entropy; the new owner must take it.
          if (shard === owner || isCrashInjected(error) || !isShardFailure(error)) throw error;
        }
      }
    }
    return applied;
  }

  /**
   * The shard that lost its ranges serves no reads until it has rejoined: marked unavailable, it is
   * probed, has its hints replayed and is reconciled by maintenance before it serves again (rejoin.ts).
   */
  private async markRejoining(state: RingState, failed: number, by: string): Promise<void> {
    if (!(state.rejoining ?? []).some((entry) => entry.shard === failed && entry.failover === by)) return;
    const table = new Ring(state).shard(failed).table;
    await this.deps.health.markUnavailable(
      table,
      `lost its ranges to failover ${by}: serves again once it has rejoined`,
      this.deps.clock.nowMs(),
    );
  }

  /**
   * After the hand-over: each handed-over range that has fewer than RF live replicas gets the next
   * available shard in walk order as a replica (one ring write), which takes every write from then on
   * (after a lease wait, every handler routes with it), is backfilled from the range's owner, and then
   * counts as a copy (one ring write). Run again, it adds nothing twice and copies only what is missing.
   */
  async reReplicate(failed: number, ends: readonly number[], by: string): Promise<ReReplication> {
    for (;;) {
      const state = await this.ring();
      const ring = new Ring(state);
      const health = await this.deps.health.all();
      const rejoining = new Set((state.rejoining ?? []).map((entry) => entry.shard));
      const available = (shard: number) =>
        !rejoining.has(shard) && (health.get(ring.shard(shard).table)?.status ?? 'available') === 'available';
      const plan = reReplicationPlan(state, failed, ends, by, available);
      if (plan.length === 0) break;
      if (await this.deps.rings.publishRing(withAddedReplicas(state, plan))) {
        await this.deps.sleep(this.deps.limits.leaseWaitMs);
        break;
      }
    }
    const state = await this.ring();
    const ring = new Ring(state);
    const mine = (state.addedReplicas ?? []).filter((replica) => replica.failover === by);
    let copied = 0;
    for (const replica of mine.filter((candidate) => !candidate.ready)) {
      const range = ring.rangeOf(replica.end);
      const ownerTable = ring.shard(range.owner).table;
      const table = ring.shard(replica.shard).table;
      const [theirs, held] = await Promise.all([
        this.deps.shards.versionsInRange(ownerTable, range),
        this.deps.shards.versionsInRange(table, range),
      ]);
      const versions = new Map(held.map((entry) => [`${entry.namespace}#${entry.key}`, entry.version]));
      const behind = theirs.filter((entry) => (versions.get(`${entry.namespace}#${entry.key}`) ?? 0) < entry.version);
      await forAllBounded(behind, this.deps.limits.catchUpConcurrency, async (entry) => {
        // Read consistently from the owner, copied with the version guard: the backfill never moves a copy back.
        const item = await this.deps.shards.get(ownerTable, entry.namespace, entry.key, { consistent: true });
        if (item && (await this.deps.shards.applyReplica(table, item, { nowSeconds: this.nowSeconds(), listed: false }))) copied += 1;
      });
    }
    for (;;) {
      const now = await this.ring();
      if (!(now.addedReplicas ?? []).some((replica) => replica.failover === by && !replica.ready)) break;
      if (await this.deps.rings.publishRing(withReadyReplicas(now, by))) break;
    }
    return { added: mine.map(({ end, shard }) => ({ end, shard })), copied, ready: true };
  }

  /** Whether the ring in force is the one failover `by` published (a step failed after its publication). */
  async isPublishedBy(by: string): Promise<boolean> {
    return (await this.ring()).changedBy === by;
  }

  /** Lifts the fence of `ends` (a failover that cannot finish): the ranges stay with their owner. */
  async abort(ends: readonly number[]): Promise<{ epoch: number }> {
    for (;;) {
      const state = await this.ring();
      const fenced = new Set(state.fenced ?? []);
      if (!ends.some((end) => fenced.has(end))) return { epoch: state.epoch };
      const next = unfencedRing(state, ends);
      if (await this.deps.rings.publishRing(next)) return { epoch: next.epoch };
    }
  }

  /**
   * Applies every hint addressed to `table` (hinted handoff, as maintenance does): copies it missed while
   * it was away. Replica copies: they join the listing when their range is handed to this shard.
   */
  private async applyHints(table: string): Promise<VersionEntry[]> {
    const applied: VersionEntry[] = [];
    for (;;) {
      const page = await this.deps.hints.list(table, this.deps.limits.hintPageSize);
      if (page.length === 0) return applied;
      for (const hint of page.sort((a, b) => a.item.version - b.item.version)) {
        if (await this.deps.shards.applyReplica(table, hint.item, { nowSeconds: this.nowSeconds(), listed: false })) {
          const { namespace, key, token, version, tombstone } = hint.item;
          applied.push({ namespace, key, token, version, tombstone });
        }
        await this.deps.hints.remove(hint);
      }
    }
  }

  private async answers(table: string): Promise<boolean> {
    try {
      await this.deps.shards.get(table, probeKey.namespace, probeKey.key, { consistent: true });
      return true;
    } catch (error) {
      if (isCrashInjected(error) || !isShardFailure(error)) throw error;
      // Throttled is an answer: a busy table is alive, and its ranges stay with it.
      return isRingstoreError(error, 'throttled');
    }
  }

  private async ring(): Promise<RingState> {
    return readRingState(this.deps.rings);
  }

  private nowSeconds(): number {
    return Math.floor(this.deps.clock.nowMs() / 1000);
  }
}

/** The item a committed transaction's write leaves on its key, as applying its intent would. */
function committedItemOf(write: TxnCommittedWrite, nowMs: number): StoredItem {
  const { namespace, key, token, version, contentType, size, sha256 } = write;
  if (write.kind === 'delete') {
    const expiresAtSeconds = Math.floor(nowMs / 1000) + tombstoneRetentionSeconds;
    return { namespace, key, token, version, modifiedAtMs: nowMs, contentType: '', size: 0, sha256: '', tombstone: true, expiresAtSeconds };
  }
  return {
    namespace,
    key,
    token,
    version,
    modifiedAtMs: nowMs,
    contentType,
    size,
    sha256,
    tombstone: false,
    value: write.value ?? new Uint8Array(0),
  };
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
