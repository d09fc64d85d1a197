// /v1/admin routes of online rebalancing (docs/rebalancing.md): start, status, pause, resume, cancel, rate.
import type { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { RebalanceIdParam, RebalanceQuery, RebalanceRateBody, RebalanceStartBody } from '../../schemas/api';
import { RingstoreError } from '../core/errors';
import { describe as describeRebalance, type RebalanceService, type RebalanceStatusView } from '../core/rebalance-service';
import { readRingState } from '../core/ring';
import type { Clock, IdSource, RebalanceStarter, RingStore } from '../ports';
import { jsonBody, parseWith } from '../http/request';
import { json } from '../http/response';
import type { AdminOperations } from './admin-operations';

export interface RebalanceRoutesDeps {
  rebalances: RebalanceService;
  /** Asked for by each request that starts a run: undefined when the deployment has no rebalance workflow. */
  rebalanceStarter: () => RebalanceStarter | undefined;
  /** The ring's record, read when a rebalance starts, to number the shards it adds. */
  rings: () => RingStore;
  clock: Clock;
  ids: IdSource;
  logger: Logger;
}

/** A rebalance's status with readable times; its ranges one by one only when asked (there can be hundreds). */
function rebalanceView({ job, ...progress }: RebalanceStatusView, withRanges: boolean) {
  const { startedAtMs, updatedAtMs, finishedAtMs, ranges, cursor: _cursor, ringFinishedAtMs: _ringFinished, ...rest } = job;
  return {
    ...rest,
    ...progress,
    startedAt: new Date(startedAtMs).toISOString(),
    updatedAt: new Date(updatedAtMs).toISOString(),
    ...(finishedAtMs === undefined ? {} : { finishedAt: new Date(finishedAtMs).toISOString() }),
    ...(withRanges ? { rangeDetail: ranges } : {}),
  };
}

export function rebalanceRoutes({
  rebalances,
  rebalanceStarter,
  rings,
  clock,
  ids,
  logger,
}: RebalanceRoutesDeps): AdminOperations<
  'describeRebalance' | 'startRebalance' | 'pauseRebalance' | 'resumeRebalance' | 'cancelRebalance' | 'setRebalanceRate'
> {
  /** The workflow's starter; without one nothing is started (a rebalance no workflow runs would sit `running`). */
  const requireRebalanceStarter = () => {
    const starter = rebalanceStarter();
    if (!starter) {
      throw new RingstoreError(
        'rebalance.unavailable',
        'this deployment has no rebalance workflow (RINGSTORE_REBALANCE_STATE_MACHINE_ARN is not set): nothing was started',
        { retryable: true },
      );
    }
    return starter;
  };
  /** Starts a run of rebalance `id`'s workflow; if it cannot, the rebalance is paused with why, so a resume can start one. */
  const runRebalance = async (id: string, run: string) => {
    try {
      await requireRebalanceStarter().start({ id, run });
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      await rebalances.halt(id, `its workflow could not be started: ${why}`).catch((haltError: unknown) => {
        logger.error('could not pause a rebalance whose workflow did not start', { id, error: haltError });
      });
      throw error;
    }
  };
  const rebalanceAction = (action: 'pause' | 'resume' | 'cancel') => async (event: APIGatewayProxyEvent) => {
    const { id } = parseWith(RebalanceIdParam, event.pathParameters, 'path');
    // A resume, or the cancel of a paused rebalance, needs a workflow run: refused up front when none can start.
    if (action !== 'pause') requireRebalanceStarter();
    const { job, startWorkflow } = await rebalances.request(id, action);
    // Every request that starts a run saves the job first: its revision names a run never used before.
    if (startWorkflow) await runRebalance(id, `${id}-r${job.revision}`);
    return json(202, rebalanceView(describeRebalance(job, clock.nowMs()), false));
  };

  return {
    describeRebalance: async (event) => {
      const { ranges } = parseWith(RebalanceQuery, event.queryStringParameters, 'query');
      const status = await rebalances.status();
      if (!status) throw new RingstoreError('rebalance.notFound', 'no rebalance has run here: start one with POST /v1/admin/rebalance');
      return json(200, rebalanceView(status, ranges === 'true'));
    },
    startRebalance: async (event) => {
      const { add, remove, rateKeysPerSecond } = parseWith(RebalanceStartBody, jsonBody(event), 'body');
      requireRebalanceStarter();
      // New shards take the ids after the highest on the ring.
      const highest = Math.max(-1, ...(await readRingState(rings())).shards.map((shard) => shard.id));
      const join = Array.from({ length: add ?? 0 }, (_, index) => highest + 1 + index);
      const id = `rebalance-${clock.nowMs()}-${ids.newId().replace(/-/g, '').slice(0, 8)}`;
      const job = await rebalances.start(
        { join, leave: remove ?? [] },
        { id, ...(rateKeysPerSecond === undefined ? {} : { rateKeysPerSecond }) },
      );
      await runRebalance(id, `${id}-1`);
      return json(202, rebalanceView(describeRebalance(job, clock.nowMs()), false));
    },
    pauseRebalance: rebalanceAction('pause'),
    resumeRebalance: rebalanceAction('resume'),
    cancelRebalance: rebalanceAction('cancel'),
    setRebalanceRate: async (event) => {
      const { id } = parseWith(RebalanceIdParam, event.pathParameters, 'path');
      const { rateKeysPerSecond } = parseWith(RebalanceRateBody, jsonBody(event), 'body');
      const job = await rebalances.setRate(id, rateKeysPerSecond);
      return json(200, rebalanceView(describeRebalance(job, clock.nowMs()), false));
    },
  };
}
