// Failover (docs/failover.md): the ring changes that take a failed shard's token ranges away from it,
// and the choice of each range's new owner among its live replicas. Pure: the workflow's steps read
// the replicas and publish the rings these functions compute.
//
// The sequence is fence, wait out the ring lease, elect and catch up, hand over:
// 1. fence: one conditional ring write (epoch + 1) marks every range the failed shard owns as fenced;
//    from then on no handler acknowledges a write or strong read of those ranges (ring-source).
// 2. wait: ringLeaseMs + ringLeaseMarginMs, so no handler still acts on a ring read before the fence.
// 3. elect and catch up, per range: the candidates are its other replicas that answer; the one that
//    already holds the newest version of the most keys is chosen (the least to copy), then every newer
//    version another candidate holds, and every hint addressed to it, is applied to it.
// 4. hand over: one conditional ring write (epoch + 1) names the new owners and lifts the fence.
//
// Why no acknowledged strong write is lost: a strong write is acknowledged once the owner and at least
// one replica hold it, so with the owner gone a live replica holds it or the failure log holds a hint of
// it; step 3 copies the newest version of every key held by any candidate (and the hints) to the new
// owner before step 4, and step 1 stops new acknowledgements on the old owner before step 3 reads.
// The choice among candidates is therefore about work, never about safety: any candidate, caught up,
// holds every acknowledged strong write. Eventual writes the failed owner acknowledged but had not yet
// replicated are the documented exposure of `eventual`; they are found when the shard returns.
import { isDeepStrictEqual } from 'node:util';
import type { AddedReplica, RangeOwner, RingState, VersionEntry } from '../ports';
import { invariant } from './errors';
import { Ring, type RangeMoveView, type TokenRange } from './ring';

/** The fenced ring: every range `failed` owns is fenced, at the next epoch. */
export function fencedRing(state: RingState, failed: number): RingState {
  const owned = new Ring(state).ranges().filter((range) => range.owner === failed);
  invariant(owned.length > 0, `shard ${failed} owns no token range`);
  return fencedRangesRing(
    state,
    owned.map((range) => range.end),
  );
}

/** The ring with the ranges ending at `ends` fenced, at the next epoch. */
export function fencedRangesRing(state: RingState, ends: readonly number[]): RingState {
  const epoch = state.epoch + 1;
  const already = new Set(state.fenced ?? []);
  const placed = ends.filter((end) => !already.has(end));
  // A range fenced already keeps its fence and the epoch it was placed at.
  const fencedAt = [...(state.fencedAt ?? []).filter((fence) => already.has(fence.end)), ...placed.map((end) => ({ end, epoch }))];
  return {
    ...state,
    epoch,
    fenced: [...new Set([...already, ...placed])].sort((a, b) => a - b),
    fencedAt: fencedAt.sort((a, b) => a.end - b.end),
  };
}

/** `state` with the fences of `ends` lifted (and the epochs they were placed at), at the same epoch. */
export function withFencesLifted(state: RingState, ends: Iterable<number>): RingState {
  const lifted = new Set(ends);
  const { fencedAt: placed, ...rest } = state;
  const fenced = (state.fenced ?? []).filter((end) => !lifted.has(end));
  const kept = new Set(fenced);
  const fencedAt = (placed ?? []).filter((fence) => kept.has(fence.end));
  return { ...rest, fenced, ...(fencedAt.length > 0 ? { fencedAt } : {}) };
}

/** The ranges a failover took from `shard`: the vnode walk makes it their owner, another shard owns them. */
export function rangesToMoveBack(state: RingState, shard: number): TokenRange[] {
  const walkOwner = new Map(new Ring({ ...state, owners: [], fenced: [] }).ranges().map((range) => [range.end, range.owner]));
  return new Ring(state).ranges().filter((range) => walkOwner.get(range.end) === shard && range.owner !== shard);
}

/** The ranges a failover of `failed` must hand over: those it owns, each with its other replicas as candidates. */
export function rangesToHandOver(state: RingState, failed: number): Array<{ range: TokenRange; candidates: number[] }> {
  return new Ring(state)
    .ranges()
    .filter((range) => range.owner === failed)
    .map((range) => ({ range, candidates: range.replicas.filter((shard) => shard !== failed) }));
}

/** What one candidate holds of a range: the version of each key, from its token index. */
export interface CandidateView {
  shard: number;
  entries: VersionEntry[];
}

/** A key a chosen owner lacks at its newest version, and a candidate that holds that version. */
export interface CatchUp {
  namespace: string;
  key: string;
  version: number;
  from: number;
}

export interface Election {
  owner: number;
  /** Keys whose newest version the owner lacked, per candidate. */
  missing: Record<number, number>;
  catchUp: CatchUp[];
}

/**
 * The new owner of a range among the candidates that answered (in replica order): the one missing the
 * fewest newest versions; ties go to the earlier replica, so every run of the election agrees.
 */
export function electOwner(views: readonly CandidateView[]): Election {
  invariant(views.length > 0, 'a range needs at least one live candidate to fail over');
  const { newest, held, missing } = compareViews(views);
  const chosenIndex = views.reduce((best, view, index) => (missing[view.shard]! < missing[views[best]!.shard]! ? index : best), 0);
  return { owner: views[chosenIndex]!.shard, missing, catchUp: catchUpOf(newest, held[chosenIndex]!) };
}

/** What `owner` (one of the views) lacks of the newest versions the views hold: a move-back's catch-up. */
export function catchUpFor(views: readonly CandidateView[], owner: number): Election {
  const index = views.findIndex((view) => view.shard === owner);
  invariant(index >= 0, `shard ${owner} is not among the candidates that answered`);
  const { newest, held, missing } = compareViews(views);
  return { owner, missing, catchUp: catchUpOf(newest, held[index]!) };
}

type Newest = Map<string, { entry: VersionEntry; holder: number }>;

function compareViews(views: readonly CandidateView[]) {
  const newest: Newest = new Map();
  for (const view of views) {
    for (const entry of view.entries) {
      const id = `${entry.namespace}#${entry.key}`;
      const seen = newest.get(id);
      if (!seen || seen.entry.version < entry.version) newest.set(id, { entry, holder: view.shard });
    }
  }
  const held = views.map((view) => new Map(view.entries.map((entry) => [`${entry.namespace}#${entry.key}`, entry.version])));
  const missing: Record<number, number> = {};
  views.forEach((view, index) => {
    let count = 0;
    for (const [id, { entry }] of newest) if ((held[index]!.get(id) ?? 0) < entry.version) count += 1;
    missing[view.shard] = count;
  });
  return { newest, held, missing };
}

function catchUpOf(newest: Newest, held: ReadonlyMap<string, number>): CatchUp[] {
  const catchUp: CatchUp[] = [];
  for (const [id, { entry, holder }] of newest) {
    if ((held.get(id) ?? 0) < entry.version)
      catchUp.push({ namespace: entry.namespace, key: entry.key, version: entry.version, from: holder });
  }
  return catchUp;
}

/**
 * What a hand-over relies on of its range, as its election saw it under the fence: the fence (the epoch
 * it was placed at), the owner and replicas, and a rebalance's move of the range. While the ring still
 * shows all of it, no request has been served on the range since and no copy of it has changed, so the
 * hand-over applies to that ring whatever else moved on it (a rebalance's cut-over, another shard's
 * failover). A fence lifted and placed again has a later epoch: the election may have missed writes
 * made in between.
 */
export interface RangeSeen {
  fencedAt?: number;
  owner: number;
  replicas: number[];
  backfilling?: number[];
  move?: RangeMoveView;
}

export function rangeSeen(state: RingState, range: TokenRange): RangeSeen {
  const fencedAt = fenceEpochOf(state, range.end);
  return {
    ...(fencedAt === undefined ? {} : { fencedAt }),
    owner: range.owner,
    replicas: [...range.replicas],
    ...(range.backfilling?.length ? { backfilling: [...range.backfilling] } : {}),
    ...(range.move ? { move: { phase: range.move.phase, from: [...range.move.from], to: [...range.move.to] } } : {}),
  };
}

/** The epoch the fence of the range ending at `end` was placed at; undefined when it is not fenced. */
export function fenceEpochOf(state: RingState, end: number): number | undefined {
  if (!(state.fenced ?? []).includes(end)) return undefined;
  return state.fencedAt?.find((fence) => fence.end === end)?.epoch;
}

/** A range's new owner, with what its election saw (absent from a hand-over recorded before it was kept). */
export interface HandOverChoice extends RangeOwner {
  before?: RangeSeen;
}

/**
 * Why the hand-over of `choices` no longer applies to the ring `state`, or undefined when it still does:
 * every range still under the fence its election saw, with the same owner and replicas.
 */
export function handOverStale(state: RingState, choices: readonly HandOverChoice[]): string | undefined {
  const ring = new Ring(state);
  for (const { end, before } of choices) {
    const range = ring.rangeOf(end);
    if (range.end !== end) return `no token range ends at ${end}`;
    if (!range.fenced) return `the range ending at ${end} is no longer fenced`;
    if (before?.fencedAt === undefined) return `the fence the election of the range ending at ${end} saw is not recorded`;
    if (!isDeepStrictEqual(rangeSeen(state, range), before)) {
      return `the fence, owner or replicas of the range ending at ${end} changed since its election`;
    }
  }
  return undefined;
}

/**
 * The ring after the hand-over (epoch + 1): each range's chosen owner in force and its fence lifted. An
 * owner equal to the vnode walk's own owner needs no override (a range moved back).
 */
export function handedOverRing(state: RingState, choices: readonly RangeOwner[], failover?: string): RingState {
  const previous = new Ring(state);
  const walkOwner = new Map(new Ring({ ...state, owners: [], fenced: [] }).ranges().map((range) => [range.end, range.owner]));
  const owners = new Map((state.owners ?? []).map(({ end, owner }) => [end, owner]));
  // Each shard that loses a range here reconciles its copies with the new owner before serving (rejoin.ts).
  const lostBy = new Map<number, number[]>();
  for (const { end, owner } of choices) {
    invariant(walkOwner.has(end), `no token range ends at ${end}`);
    if (walkOwner.get(end) === owner) owners.delete(end);
    else owners.set(end, owner);
    const before = previous.rangeOf(end).owner;
    if (before !== owner) lostBy.set(before, [...(lostBy.get(before) ?? []), end]);
  }
  const rejoining = [
    ...(state.rejoining ?? []).filter((entry) => entry.failover !== failover),
    ...(failover === undefined ? [] : [...lostBy].map(([shard, ends]) => ({ shard, failover, ends: [...ends].sort((a, b) => a - b) }))),
  ].sort((a, b) => a.shard - b.shard || (a.failover < b.failover ? -1 : 1));
  const { rejoining: _before, ...rest } = withFencesLifted(
    state,
    choices.map((choice) => choice.end),
  );
  const next: RingState = {
    ...rest,
    epoch: state.epoch + 1,
    owners: [...owners].map(([end, owner]) => ({ end, owner })).sort((a, b) => a.end - b.end),
    ...(rejoining.length > 0 ? { rejoining } : {}),
  };
  // The Ring checks every choice is one of its range's replicas.
  new Ring(next);
  return next;
}

/**
 * The ring once `shard` has rejoined after failover `failover` (epoch + 1): its entry is gone, and so are
 * the replicas that failover added in its absence (the range is back to its own RF replicas).
 */
export function rejoinedRing(state: RingState, shard: number, failover: string): RingState {
  const rejoining = (state.rejoining ?? []).filter((entry) => entry.shard !== shard || entry.failover !== failover);
  const stillOut = rejoining.some((entry) => entry.failover === failover);
  const added = (state.addedReplicas ?? []).filter((replica) => stillOut || replica.failover !== failover);
  const { rejoining: _before, addedReplicas: _added, ...rest } = state;
  return {
    ...rest,
    epoch: state.epoch + 1,
    ...(rejoining.length > 0 ? { rejoining } : {}),
    ...(added.length > 0 ? { addedReplicas: added } : {}),
  };
}

/**
 * Re-replication (docs/failover.md): for each range ending at `ends` that failover `failover` of `failed`
 * handed over, the replicas to add so that it has RF live replicas besides `failed` again: the next shards
 * in vnode-walk order that are not its replicas yet and are available. None for a range that has them.
 */
export function reReplicationPlan(
  state: RingState,
  failed: number,
  ends: readonly number[],
  failover: string,
  isAvailable: (shard: number) => boolean,
): AddedReplica[] {
  const ring = new Ring(state);
  const wanted = Math.min(state.replicationFactor, state.shards.length - 1);
  return ends.flatMap((end) => {
    const range = ring.rangeOf(end);
    const live = range.replicas.filter((shard) => shard !== failed);
    const missing = wanted - live.length;
    if (missing <= 0) return [];
    // Only an active shard: a leaving one would carry the copies off the ring with it, and a joining one
    // is being backfilled by a rebalance that plans its ranges without this failover's replicas.
    return ring
      .successorsOf(end)
      .filter((shard) => shard !== failed && !range.replicas.includes(shard) && ring.shard(shard).status === 'active' && isAvailable(shard))
      .slice(0, missing)
      .map((shard) => ({ end, shard, failover, ready: false }));
  });
}

/** The ring with `added` replicas joined, still being backfilled (epoch + 1). */
export function withAddedReplicas(state: RingState, added: readonly AddedReplica[]): RingState {
  const present = new Set((state.addedReplicas ?? []).map((replica) => `${replica.end}:${replica.shard}`));
  const joined = [...(state.addedReplicas ?? []), ...added.filter((replica) => !present.has(`${replica.end}:${replica.shard}`))];
  return { ...state, epoch: state.epoch + 1, addedReplicas: joined.sort((a, b) => a.end - b.end || a.shard - b.shard) };
}

/** The ring with failover `failover`'s added replicas backfilled: they count as copies (epoch + 1). */
export function withReadyReplicas(state: RingState, failover: string): RingState {
  const addedReplicas = (state.addedReplicas ?? []).map((replica) =>
    replica.failover === failover ? { ...replica, ready: true } : replica,
  );
  return { ...state, epoch: state.epoch + 1, addedReplicas };
}

/** The ring with the fence of `ends` lifted and nothing else changed (a failover that cannot finish). */
export function unfencedRing(state: RingState, ends: readonly number[]): RingState {
  return { ...withFencesLifted(state, ends), epoch: state.epoch + 1 };
}
