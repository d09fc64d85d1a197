// A failover or move-back asked for by an admin (POST /v1/admin/failovers): whether it may go ahead on the ring
// in force, and the id its workflow runs under.
import type { FailoverAction, FailoverRecord } from '../ports';
import { RingstoreError } from './errors';
import { rangesToMoveBack } from './failover';
import { failoverIdBase } from './failover-trigger';
import type { Ring } from './ring';

/** Statuses of a failover that ended without moving anything: it may be asked for again. */
const endedWithoutMoving: ReadonlySet<FailoverRecord['status']> = new Set(['aborted', 'notDown', 'notReady']);

/** Refuses (`request.invalid`) a failover of a shard not on the ring, or a move-back of a shard with nothing to take back yet. */
export function assertFailoverRequestable(ring: Ring, shard: number, action: FailoverAction | undefined): void {
  const refuse = (message: string) => new RingstoreError('request.invalid', message, { details: { field: 'shard' } });
  if (!ring.shards.some((candidate) => candidate.id === shard)) throw refuse(`shard ${shard} is not on the ring (epoch ${ring.epoch})`);
  if (action !== 'moveBack') return;
  if (rangesToMoveBack(ring.state, shard).length === 0) {
    throw refuse(`shard ${shard} has no range a failover took from it: nothing to move back`);
  }
  if ((ring.state.rejoining ?? []).some((entry) => entry.shard === shard)) {
    throw refuse(`shard ${shard} has not rejoined yet: maintenance reconciles it once it answers (GET /v1/admin/shards); move back after`);
  }
}

/**
 * The id of a failover (or move-back) of `shard` asked for on the ring at `epoch`, given the recent records:
 * one per shard and epoch, so a second request while it runs (or once it is done) names the same run and
 * starts nothing; one that ended without moving anything may be run again, under an id of its own (an
 * execution name is never reused).
 */
export function failoverRequestId(
  shard: number,
  epoch: number,
  action: FailoverAction | undefined,
  recent: readonly FailoverRecord[],
): string {
  const base = `${failoverIdBase(shard, epoch)}${action === 'moveBack' ? '-moveback' : ''}`;
  const earlier = recent.filter((record) => record.id === base || record.id.startsWith(`${base}-retry-`));
  const ended = earlier.filter((record) => endedWithoutMoving.has(record.status));
  const runningOrDone = earlier.some((record) => !endedWithoutMoving.has(record.status));
  if (runningOrDone || ended.length === 0) return earlier.find((record) => !ended.includes(record))?.id ?? base;
  return `${base}-retry-${ended.length}`;
}
