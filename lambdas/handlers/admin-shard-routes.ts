// /v1/admin routes of the shards: their health and replication, a repair pass, failovers and move-backs.
import { FailoverStartBody } from '../../schemas/api';
import { failoverDefaults, handlers } from '../../schemas/topology';
import { RingstoreError } from '../core/errors';
import { assertFailoverRequestable, failoverRequestId } from '../core/failover-requests';
import type { MaintenanceService } from '../core/maintenance';
import type { RingSource } from '../core/ring-source';
import type { Clock, FailoverLog, FailoverRecord, FailoverStarter } from '../ports';
import { jsonBody, parseWith } from '../http/request';
import { json } from '../http/response';
import type { AdminOperations } from './admin-operations';

export interface ShardRoutesDeps {
  maintenance: MaintenanceService;
  ring: RingSource;
  /** This instance's cached shard health, dropped before a status is read. */
  health: { invalidate(): void };
  /** Replication as this instance observed it, shown with the shards. */
  replication: { summary(): object };
  failovers: FailoverLog;
  /** Asked for by each failover request: undefined when the deployment has no failover workflow. */
  failoverStarter: () => FailoverStarter | undefined;
  clock: Clock;
}

/** How long POST /v1/admin/repair compares ranges: half the function's timeout, so it always answers. */
const repairTimeBudgetMs = (handlers.admin.timeoutSeconds * 1000) / 2;

/** A failover record with readable times. */
const failoverView = ({ requestedAtMs, updatedAtMs, ...record }: FailoverRecord) => ({
  ...record,
  requestedAt: new Date(requestedAtMs).toISOString(),
  updatedAt: new Date(updatedAtMs).toISOString(),
});

export function shardRoutes({
  maintenance,
  ring,
  health,
  replication,
  failovers,
  failoverStarter,
  clock,
}: ShardRoutesDeps): AdminOperations<'describeShards' | 'repair' | 'listFailovers' | 'startFailover'> {
  return {
    describeShards: async () => {
      // Shard health as the control table holds it now, not this instance's cached view.
      health.invalidate();
      return json(200, { ...(await maintenance.status(await ring.current())), replication: replication.summary() });
    },
    // A full pass now: every shard's hints, every token range that fits in half the function's time (a busy
    // engine made a whole pass outlast the timeout, a 500); the answer says what is left, the next call goes on.
    repair: async () =>
      json(
        200,
        await maintenance.run(await ring.current(), {
          rangesMax: Number.MAX_SAFE_INTEGER,
          untilMs: clock.nowMs() + repairTimeBudgetMs,
        }),
      ),
    listFailovers: async () => json(200, { failovers: (await failovers.recent(failoverDefaults.recentRecords)).map(failoverView) }),
    startFailover: async (event) => {
      const { shard, reason, action } = parseWith(FailoverStartBody, jsonBody(event), 'body');
      const current = await ring.current();
      assertFailoverRequestable(current, shard, action);
      const starter = failoverStarter();
      if (!starter) throw new RingstoreError('internal', 'no failover state machine: set RINGSTORE_FAILOVER_STATE_MACHINE_ARN');
      const id = failoverRequestId(shard, current.epoch, action, await failovers.recent(failoverDefaults.recentRecords));
      const request = { id, shard, reason: reason ?? 'requested by an admin', requestedAtMs: clock.nowMs(), action };
      const started = await starter.start(request);
      return json(202, { id, shard, started });
    },
  };
}
