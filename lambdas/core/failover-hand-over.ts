// A failover's hand-over (docs/failover.md, step 3): per fenced range, the new owner elected among the
// replicas that answer and caught up from the others and from its hints; then one ring write publishes the
// new owners (and marks the failed shard rejoining), checked against what each election saw.
import { forAllBounded } from './bounded';
import { invariant } from './errors';
import {
  catchUpFor,
  electOwner,
  handedOverRing,
  handOverStale,
  rangeSeen,
  type CandidateView,
  type Election,
  type HandOverChoice,
  type RangeSeen,
} from './failover';
import type { FailoverDeps } from './failover-context';
import { isCrashInjected } from './faults';
import { isShardFailure } from './replication';
import { Ring, readRingState, type TokenRange } from './ring';
import type { Clock, RingState, VersionEntry } from '../ports';

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
export class NoCandidateError extends Error {
  constructor(
    readonly end: number,
    message = `no replica of the range ending at ${end} answers: it cannot get a new owner`,
  ) {
    super(message);
  }
}

export class FailoverHandOver {
  constructor(private readonly deps: Pick<FailoverDeps, 'rings' | 'shards' | 'hints' | 'health' | 'clock' | 'faults' | 'limits'>) {}

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
    const state = await readRingState(this.deps.rings);
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
      if (item && (await this.deps.shards.applyReplica(owner, item, { nowSeconds: nowSecondsOf(this.deps.clock), listed: true })))
        copied += 1;
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
      const state = await readRingState(this.deps.rings);
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

  /** Whether the ring in force is the one failover `by` published (a step failed after its publication). */
  async isPublishedBy(by: string): Promise<boolean> {
    return (await readRingState(this.deps.rings)).changedBy === by;
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
        if (await this.deps.shards.applyReplica(table, hint.item, { nowSeconds: nowSecondsOf(this.deps.clock), listed: false })) {
          const { namespace, key, token, version, tombstone } = hint.item;
          applied.push({ namespace, key, token, version, tombstone });
        }
        await this.deps.hints.remove(hint);
      }
    }
  }
}

function nowSecondsOf(clock: Pick<Clock, 'nowMs'>): number {
  return Math.floor(clock.nowMs() / 1000);
}
