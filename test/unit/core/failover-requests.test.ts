// A failover or move-back an admin asks for: refused when it cannot go ahead, and named so that asking twice
// starts one run while one that ended without moving anything may run again.
import { assertFailoverRequestable, failoverRequestId } from '../../../lambdas/core/failover-requests';
import { isRingstoreError } from '../../../lambdas/core/errors';
import { Ring, initialRingState } from '../../../lambdas/core/ring';
import type { FailoverRecord, FailoverStatus } from '../../../lambdas/ports';

const ring = new Ring(initialRingState({ shardCount: 4, replicationFactor: 3, vnodesPerShard: 4, tableName: (id) => `shard-${id}` }));

const record = (id: string, status: FailoverStatus): FailoverRecord => ({
  id,
  shard: 2,
  reason: 'test',
  requestedAtMs: 0,
  updatedAtMs: 0,
  status,
});

describe('failoverRequestId', () => {
  const base = `shard-2-epoch-${ring.epoch}`;

  test('a first request takes the base id; a move-back its own', () => {
    expect(failoverRequestId(2, ring.epoch, undefined, [])).toBe(base);
    expect(failoverRequestId(2, ring.epoch, 'moveBack', [])).toBe(`${base}-moveback`);
  });

  test('a request while one runs, or after one completed, names that run (which starts nothing)', () => {
    expect(failoverRequestId(2, ring.epoch, undefined, [record(base, 'running')])).toBe(base);
    expect(failoverRequestId(2, ring.epoch, undefined, [record(`${base}-retry-1`, 'completed'), record(base, 'aborted')])).toBe(
      `${base}-retry-1`,
    );
  });

  test('after runs that ended without moving anything, a new id for each attempt', () => {
    expect(failoverRequestId(2, ring.epoch, undefined, [record(base, 'aborted')])).toBe(`${base}-retry-1`);
    expect(failoverRequestId(2, ring.epoch, undefined, [record(`${base}-retry-1`, 'notDown'), record(base, 'aborted')])).toBe(
      `${base}-retry-2`,
    );
  });

  test("another shard's or another epoch's records do not count", () => {
    expect(failoverRequestId(2, ring.epoch, undefined, [record(`shard-2-epoch-${ring.epoch + 1}`, 'aborted')])).toBe(base);
    expect(failoverRequestId(2, ring.epoch, undefined, [record(`shard-3-epoch-${ring.epoch}`, 'running')])).toBe(base);
  });
});

describe('assertFailoverRequestable', () => {
  const refusal = (run: () => void) => {
    try {
      run();
    } catch (error) {
      return isRingstoreError(error, 'request.invalid') ? error.message : `unexpected ${String(error)}`;
    }
    return undefined;
  };

  test('a failover of a shard on the ring goes ahead; one not on it is refused', () => {
    expect(refusal(() => assertFailoverRequestable(ring, 2, undefined))).toBeUndefined();
    expect(refusal(() => assertFailoverRequestable(ring, 9, undefined))).toMatch(/shard 9 is not on the ring/);
  });

  test('a move-back of a shard no failover took ranges from is refused', () => {
    expect(refusal(() => assertFailoverRequestable(ring, 2, 'moveBack'))).toMatch(/no range a failover took from it/);
  });
});
