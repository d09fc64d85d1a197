// Rebalancing (docs/rebalancing.md): the ring changes of adding and removing shards while the ring serves.
// Pure: the workflow's steps (rebalance-service.ts) publish the rings these functions compute.
//
// A rebalance puts the shards it adds on the ring as `joining` and those it removes as `leaving`. The Ring
// then computes every range twice, on the ring before (without the joining shards) and after (without the
// leaving ones), over the vnodes of every shard, so each range has one replica set of each; the ranges
// whose sets differ move one at a time: `copying` (the new replicas take every write and are copied to),
// then `moved` (the cut-over: the new replicas serve it). Once all have moved, the finish makes the
// joining shards active and drops the leaving ones, which changes no range's replicas.
import { createHash } from 'node:crypto';
import type { RangeProgress, RebalanceChange, RingShard, RingState, VersionDigest } from '../ports';
import { invariant, RingstoreError } from './errors';
import { withFencesLifted } from './failover';
import { Ring, type TokenRange } from './ring';

/**
 * What of a failover's state the ring carries ('ranges a failover moved', 'fenced ranges', ...), or
 * undefined when it carries none. `ownFences`: the ends of ranges the rebalance itself fenced for a
 * cut-over (a wave a crash cut short); those are not a failover's.
 */
function failoverStateOf(state: RingState, ownFences: ReadonlySet<number> = new Set()): string | undefined {
  const parts = [
    state.owners?.length ? 'ranges a failover moved' : '',
    state.fenced?.some((end) => !ownFences.has(end)) ? 'fenced ranges' : '',
    state.rejoining?.length ? 'shards rejoining' : '',
    state.addedReplicas?.length ? 'replicas a failover added' : '',
  ].filter(Boolean);
  return parts.length > 0 ? `the ring has ${parts.join(', ')}` : undefined;
}

/**
 * Why a running rebalance stops for a failover, or undefined when none is in the way. A failover changes
 * owners, fences ranges and adds replicas on the ring the rebalance planned its moves on; the rebalance
 * pauses rather than copy from, fence or cut over ranges a failover is handing over, and goes on once the
 * failover has finished and its ranges are back (the ring is the planned one again).
 */
export function failoverInTheWay(state: RingState, ownFences: ReadonlySet<number>): string | undefined {
  const found = failoverStateOf(state, ownFences);
  return found && `${found}: a failover is in progress; resume the rebalance once it has finished and its ranges are moved back`;
}

/** Why a rebalance cannot start on this ring, or undefined when it can. */
export function startRefusal(state: RingState, change: RebalanceChange): string | undefined {
  if (state.rebalance !== undefined) return `rebalance ${state.rebalance} is in progress: one runs at a time`;
  const failoverState = failoverStateOf(state);
  if (failoverState) return `${failoverState}: finish the failover (and move the ranges back) first`;
  if (change.join.length === 0 && change.leave.length === 0) return 'nothing to do: add or remove at least one shard';
  const ids = new Set(state.shards.map((shard) => shard.id));
  const joining = new Set(change.join);
  if (joining.size !== change.join.length || new Set(change.leave).size !== change.leave.length) return 'a shard is named twice';
  for (const id of change.join) {
    if (!Number.isInteger(id) || id < 0) return `shard id ${id} is not a non-negative integer`;
    if (ids.has(id)) return `shard ${id} is already on the ring`;
  }
  for (const id of change.leave) {
    if (!ids.has(id)) return `shard ${id} is not on the ring`;
    if (joining.has(id)) return `shard ${id} cannot both join and leave`;
  }
  const after = state.shards.length + change.join.length - change.leave.length;
  if (after < 1) return 'the ring needs at least one shard';
  if (change.leave.length > 0 && after < state.replicationFactor) {
    return `${after} shards would be left for replication factor ${state.replicationFactor}: replicas live on distinct shards`;
  }
  return undefined;
}

/** The ring at the start of rebalance `id` (epoch + 1): the new shards joining, the removed ones leaving. */
export function startedRing(state: RingState, change: RebalanceChange, id: string, tableOf: (shardId: number) => string): RingState {
  const refusal = startRefusal(state, change);
  if (refusal) throw new RingstoreError('rebalance.refused', refusal);
  const leaving = new Set(change.leave);
  const shards: RingShard[] = [
    ...state.shards.map((shard) => (leaving.has(shard.id) ? { ...shard, status: 'leaving' as const } : shard)),
    ...change.join.map((shardId) => ({ id: shardId, table: tableOf(shardId), status: 'joining' as const })),
  ].sort((a, b) => a.id - b.id);
  return { ...state, epoch: state.epoch + 1, shards, rebalance: id, moves: [] };
}

/** The ranges the rebalance moves, as the job tracks them (every stage `planned` on a fresh start). */
export function plannedRanges(state: RingState): RangeProgress[] {
  return new Ring(state).movingRanges().map((range) => ({
    start: range.start,
    end: range.end,
    from: range.move!.from,
    to: range.move!.to,
    stage: range.move!.phase === 'moved' ? 'moved' : 'planned',
    keysCopied: 0,
  }));
}

/**
 * The ring with the ranges ending at `ends` (one or several) at `phase` (epoch + 1); `copying` keeps any
 * fence, `moved` lifts it.
 */
export function withMovePhase(state: RingState, ends: number | readonly number[], phase: 'copying' | 'moved'): RingState {
  const changed = new Set(typeof ends === 'number' ? [ends] : ends);
  const ring = new Ring(state);
  for (const end of changed) {
    const range = ring.rangeOf(end);
    invariant(range.end === end && range.move, `the range ending at ${end} does not move in this rebalance`);
  }
  const moves = [...(state.moves ?? []).filter((move) => !changed.has(move.end)), ...[...changed].map((end) => ({ end, phase }))].sort(
    (a, b) => a.end - b.end,
  );
  if (phase !== 'moved') return { ...state, epoch: state.epoch + 1, moves };
  return { ...withFencesLifted(state, changed), epoch: state.epoch + 1, moves };
}

/** True when the range's owner changes: its cut-over is fenced, as a failover's hand-over is. */
export function ownerChanges(range: Pick<TokenRange, 'move'>): boolean {
  return range.move !== undefined && range.move.from[0] !== range.move.to[0];
}

/**
 * The ring once every range has moved (epoch + 1): the joining shards are active, the leaving ones gone,
 * and the rebalance's marks removed. Every range keeps the replicas it has.
 */
export function finishedRing(state: RingState): RingState {
  const ring = new Ring(state);
  const unmoved = ring.movingRanges().filter((range) => range.move!.phase !== 'moved');
  invariant(unmoved.length === 0, `${unmoved.length} ranges have not moved yet`);
  const { rebalance: _id, moves: _moves, ...rest } = state;
  const next: RingState = {
    ...rest,
    epoch: state.epoch + 1,
    shards: state.shards.filter((shard) => shard.status !== 'leaving').map((shard) => ({ ...shard, status: 'active' as const })),
  };
  const after = new Ring(next);
  for (const range of ring.ranges()) {
    const now = after.replicasOf(range.end).map((shard) => shard.id);
    invariant(now.join() === range.replicas.join(), `the range ending at ${range.end} would change replicas at the finish`);
  }
  return next;
}

/**
 * A cancelled rebalance, reversed (epoch + 1): the shards that were joining leave and those that were
 * leaving join back, so the ring it started from becomes the target. A range that had moved moves back
 * (planned again); one still copying or planned is where it belongs already (moved). Any fence the
 * cancelled rebalance placed is lifted. The reversed rebalance then runs as any other.
 */
export function reversedRing(state: RingState): RingState {
  invariant(state.rebalance !== undefined, 'no rebalance is in progress');
  const ring = new Ring(state);
  const moving = ring.movingRanges();
  const ends = new Set(moving.map((range) => range.end));
  const shards = state.shards.map((shard) => {
    if (shard.status === 'joining') return { ...shard, status: 'leaving' as const };
    if (shard.status === 'leaving') return { ...shard, status: 'joining' as const };
    return shard;
  });
  return {
    ...withFencesLifted(state, ends),
    epoch: state.epoch + 1,
    shards,
    moves: moving.filter((range) => range.move!.phase !== 'moved').map((range) => ({ end: range.end, phase: 'moved' as const })),
  };
}

/** The shards a moved range left: its copies there are removed at the cleanup. */
export function leftBehind(range: Pick<RangeProgress, 'from' | 'to'>): number[] {
  return range.from.filter((shard) => !range.to.includes(shard));
}

const digestModulus = 1n << 64n;

/**
 * The digest of these keys at their versions, added to `previous` (a digest of other keys): a count and
 * the sum modulo 2^64 of a 64-bit hash of each (namespace, key, version). A sum does not depend on the
 * order, so the backfill adds each page as it is saved and the catch-up digests the owner's versions as
 * its index lists them; two sets of keys and versions that differ give equal digests with a chance of
 * about 2^-64.
 */
export function versionDigest(
  entries: Iterable<{ namespace: string; key: string; version: number }>,
  previous: VersionDigest = { keys: 0, digest: '0' },
): VersionDigest {
  let sum = BigInt(`0x${previous.digest}`);
  let keys = previous.keys;
  for (const { namespace, key, version } of entries) {
    const hash = createHash('sha256')
      .update(JSON.stringify([namespace, key, version]))
      .digest();
    sum = (sum + hash.readBigUInt64BE(0)) % digestModulus;
    keys += 1;
  }
  return { keys, digest: sum.toString(16) };
}
