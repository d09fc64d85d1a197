// A failover's first step (docs/failover.md, step 0): the failover recorded as running, then the shard probed
// until one answer calls it off; a move-back goes ahead only for a shard that answers and has rejoined. One
// failover of a shard runs at a time: a later one stands down while an earlier one runs.
import { isRingstoreError } from './errors';
import { rangesToMoveBack } from './failover';
import type { FailoverDeps } from './failover-context';
import { isCrashInjected } from './faults';
import { probeKey } from './maintenance';
import { isShardFailure } from './replication';
import { Ring, readRingState } from './ring';
import type { FailoverRecord, FailoverRequest, FailoverStatus } from '../ports';

export interface Confirmation {
  down: boolean;
  /** Whether the workflow goes on: a failover when the shard is down, a move-back when it is ready. */
  proceed: boolean;
  /** Probes sent; a failover goes ahead only when none answered. */
  probes: number;
  reason: string;
}

/** Recent failover records a new failover looks through for one of its shard still running. */
const failoverRecordsSearched = 50;

/**
 * A running record not updated for this long is of a run that died (its fence was lifted by the abort path, or
 * is lifted by the next failover's own): far longer than any confirm, fence and hand-over take.
 */
export const runningRecordStaleMs = 30 * 60_000;

export class FailoverConfirmation {
  constructor(private readonly deps: Pick<FailoverDeps, 'rings' | 'shards' | 'health' | 'log' | 'clock' | 'sleep' | 'faults' | 'limits'>) {}

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
    const ring = new Ring(await readRingState(this.deps.rings));
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
    const state = await readRingState(this.deps.rings);
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

  /** The failover's record, with its outcome and report. */
  async record(request: FailoverRequest, status: FailoverStatus, report?: unknown): Promise<void> {
    await this.deps.log.save({ ...request, status, updatedAtMs: this.deps.clock.nowMs(), ...(report === undefined ? {} : { report }) });
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
}
