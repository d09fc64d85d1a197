// /v1/admin/*: API keys, namespace defaults, shard health and repair, failover, DR and rebalancing; admin keys only.
import middy, { type Request } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import {
  AuditQuery,
  CreateApiKeyBody,
  CreatePrincipalMappingBody,
  FailoverStartBody,
  KeyIdParam,
  LostKeysQuery,
  NamespaceParam,
  NamespaceSettingsBody,
  OfferBody,
  PrincipalArnParam,
  PromoteBody,
  RebalanceIdParam,
  RebalanceQuery,
  RebalanceRateBody,
  RebalanceStartBody,
  ReconcileBody,
  RotateApiKeyBody,
} from '../../schemas/api';
import { drDefaults, failoverDefaults, handlers } from '../../schemas/topology';
import { describeBackup } from '../core/dr-promotion';
import { startInitialSync } from '../core/dr-initial-sync';
import { rangesToMoveBack } from '../core/failover';
import { describe as describeRebalance, type RebalanceStatusView } from '../core/rebalance-service';
import { readRingState } from '../core/ring';
import { RingstoreError } from '../core/errors';
import { requireAdmin } from '../core/auth';
import type { ApiKeyRecord, FailoverRecord } from '../ports';
import { httpErrors } from '../http/errors';
import { jsonBody, parseWith, principalOf } from '../http/request';
import { json } from '../http/response';
import { router } from '../http/router';
import {
  apiKeyService,
  auditLog,
  failoverLog,
  iamCallerAuth,
  iamPrincipalService,
  ringSource,
  ringStore,
  shardHealth,
} from '../wiring/control';
import { auditTrail } from '../http/audit';
import { namespaceAdmin } from '../wiring/namespace-admin';
import { replicationStats } from '../wiring/data';
import { failoverStarter } from '../wiring/orchestrator';
import { drStateStore, drSyncState, keyQueueProbe, pendingStore, promotionLog, promotionStarter } from '../wiring/dr';
import { lostKeyReconciler, lostValueOffer } from '../wiring/dr-reconcile';
import { rebalanceService, rebalanceStarter } from '../wiring/rebalance';
import { maintenanceService } from '../wiring/services';
import type { Wiring } from '../wiring/wiring';
/** How long POST /v1/admin/repair compares ranges: half the function's timeout, so it always answers. */
const repairTimeBudgetMs = (handlers.admin.timeoutSeconds * 1000) / 2;

/** A failover record with readable times. */
const failoverView = ({ requestedAtMs, updatedAtMs, ...record }: FailoverRecord) => ({
  ...record,
  requestedAt: new Date(requestedAtMs).toISOString(),
  updatedAt: new Date(updatedAtMs).toISOString(),
});

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

/** Never return a secret's hash. */
const publicView = ({ secretHash: _hash, previousSecretHash: _previous, ...info }: ApiKeyRecord) => info;

/** This region's DR role and what it knows: a backup's state and pending set, a primary's view of its backup. */
async function drStatus(wiring: Wiring) {
  const { dr } = wiring.config;
  if (dr.role === 'none') return { role: 'none' };
  if (dr.role === 'backup') {
    return describeBackup({
      state: drStateStore(wiring),
      pending: pendingStore(wiring),
      ...(dr.keyQueueUrl ? { queue: keyQueueProbe(wiring) } : {}),
      clock: wiring.clock,
      scanPageSize: drDefaults.scanPageSize,
    });
  }
  const sync = await drSyncState(wiring).readSync();
  const syncView = sync ? { sync: { ...sync, startedAt: new Date(sync.startedAtMs).toISOString() } } : {};
  try {
    const backup = (await drStateStore(wiring).read()) ?? { state: 'backup', epoch: 0 };
    return { role: 'primary', state: backup.state, epoch: backup.epoch, backupReachable: true, ...syncView };
  } catch {
    return { role: 'primary', backupReachable: false, ...syncView };
  }
}

export function adminHandler(wiring: Wiring) {
  const apiKeys = apiKeyService(wiring);
  const principals = iamPrincipalService(wiring);
  const namespaces = namespaceAdmin(wiring);
  const maintenance = maintenanceService(wiring);
  const ring = ringSource(wiring);
  const health = shardHealth(wiring);
  const stats = replicationStats(wiring);
  const failovers = failoverLog(wiring);
  const rebalances = rebalanceService(wiring);
  const audit = auditLog(wiring);
  const { logger } = wiring;

  /** The workflow's starter; without one nothing is started (a rebalance no workflow runs would sit `running`). */
  const requireRebalanceStarter = () => {
    const starter = rebalanceStarter(wiring);
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
    return json(202, rebalanceView(describeRebalance(job, wiring.clock.nowMs()), false));
  };

  return (
    middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
      .use(httpErrors(logger))
      // A SigV4-signed caller (API Gateway AWS_IAM) becomes the principal its mapping names.
      .use(iamCallerAuth(wiring))
      .use({ before: (request: Request<APIGatewayProxyEvent>) => requireAdmin(principalOf(request.event)) })
      // Every change an admin makes, and every attempt a non-admin key makes, with its outcome.
      .use(auditTrail({ log: audit, clock: wiring.clock, logger }))
      .handler(
        router('admin', {
          createApiKey: async (event) => {
            const input = parseWith(CreateApiKeyBody, jsonBody(event), 'body');
            const { apiKey, record } = await apiKeys.create(input);
            return json(201, { ...publicView(record), apiKey });
          },
          listAuditEntries: async (event) => json(200, await audit.list(parseWith(AuditQuery, event.queryStringParameters, 'query'))),
          listApiKeys: async () => json(200, { keys: (await apiKeys.list()).map(publicView) }),
          rotateApiKey: async (event) => {
            const { keyId } = parseWith(KeyIdParam, event.pathParameters, 'path');
            const { apiKey, record } = await apiKeys.rotate(keyId, parseWith(RotateApiKeyBody, jsonBody(event), 'body'));
            return json(200, { ...publicView(record), apiKey });
          },
          revokeApiKey: async (event) => {
            const { keyId: revoked } = parseWith(KeyIdParam, event.pathParameters, 'path');
            const { keyId, revokedAt } = await apiKeys.revoke(revoked);
            return json(200, { keyId, revokedAt });
          },
          listPrincipalMappings: async () => json(200, { principals: await principals.list() }),
          createPrincipalMapping: async (event) =>
            json(201, await principals.create(parseWith(CreatePrincipalMappingBody, jsonBody(event), 'body'))),
          deletePrincipalMapping: async (event) => {
            const { principalArn } = parseWith(PrincipalArnParam, event.pathParameters, 'path');
            return json(200, await principals.delete(principalArn));
          },
          getNamespaceSettings: async (event) => {
            const { namespace } = parseWith(NamespaceParam, event.pathParameters, 'path');
            return json(200, await namespaces.describe(namespace));
          },
          putNamespaceSettings: async (event) => {
            const { namespace } = parseWith(NamespaceParam, event.pathParameters, 'path');
            const patch = parseWith(NamespaceSettingsBody, jsonBody(event), 'body');
            // Requests carry the settings their key was authorized with, for as long as the authorizer cache keeps it.
            const takesEffectWithinSeconds = wiring.config.iamCacheTtlSeconds;
            return json(200, { ...(await namespaces.update(namespace, patch)), takesEffectWithinSeconds });
          },
          describeShards: async () => {
            // Shard health as the control table holds it now, not this instance's cached view.
            health.invalidate();
            return json(200, { ...(await maintenance.status(await ring.current())), replication: stats.summary() });
          },
          // A full pass now: every shard's hints, every token range that fits in half the function's time (a busy
          // engine made a whole pass outlast the timeout, a 500); the answer says what is left, the next call goes on.
          repair: async () =>
            json(
              200,
              await maintenance.run(await ring.current(), {
                rangesMax: Number.MAX_SAFE_INTEGER,
                untilMs: wiring.clock.nowMs() + repairTimeBudgetMs,
              }),
            ),
          listFailovers: async () => json(200, { failovers: (await failovers.recent(failoverDefaults.recentRecords)).map(failoverView) }),
          startFailover: async (event) => {
            const { shard, reason, action } = parseWith(FailoverStartBody, jsonBody(event), 'body');
            const current = await ring.current();
            if (!current.shards.some((candidate) => candidate.id === shard)) {
              throw new RingstoreError('request.invalid', `shard ${shard} is not on the ring (epoch ${current.epoch})`, {
                details: { field: 'shard' },
              });
            }
            const starter = failoverStarter(wiring);
            if (!starter) throw new RingstoreError('internal', 'no failover state machine: set RINGSTORE_FAILOVER_STATE_MACHINE_ARN');
            if (action === 'moveBack') {
              if (rangesToMoveBack(current.state, shard).length === 0) {
                throw new RingstoreError('request.invalid', `shard ${shard} has no range a failover took from it: nothing to move back`, {
                  details: { field: 'shard' },
                });
              }
              if ((current.state.rejoining ?? []).some((entry) => entry.shard === shard)) {
                throw new RingstoreError(
                  'request.invalid',
                  `shard ${shard} has not rejoined yet: maintenance reconciles it once it answers (GET /v1/admin/shards); move back after`,
                  { details: { field: 'shard' } },
                );
              }
            }
            // One failover (or move-back) per shard and ring epoch: a second request while it runs starts
            // nothing. One that ended without moving anything (aborted, or the shard answered) may be run
            // again: the next attempt gets its own id (an execution name is never reused).
            const base = `shard-${shard}-epoch-${current.epoch}${action === 'moveBack' ? '-moveback' : ''}`;
            const earlier = (await failovers.recent(failoverDefaults.recentRecords)).filter(
              (record) => record.id === base || record.id.startsWith(`${base}-retry-`),
            );
            const ended = earlier.filter((record) => ['aborted', 'notDown', 'notReady'].includes(record.status));
            const runningOrDone = earlier.some((record) => !['aborted', 'notDown', 'notReady'].includes(record.status));
            const request = {
              id:
                runningOrDone || ended.length === 0
                  ? (earlier.find((record) => !ended.includes(record))?.id ?? base)
                  : `${base}-retry-${ended.length}`,
              shard,
              reason: reason ?? 'requested by an admin',
              requestedAtMs: wiring.clock.nowMs(),
              action,
            };
            const started = await starter.start(request);
            return json(202, { id: request.id, shard, started });
          },
          describeDr: async () => json(200, await drStatus(wiring)),
          promote: async (event) => {
            const { reason } = parseWith(PromoteBody, jsonBody(event), 'body');
            if (wiring.config.dr.role !== 'backup') {
              throw new RingstoreError(
                'request.invalid',
                `only a DR backup region can be promoted; this region is ${wiring.config.dr.role}`,
              );
            }
            const starter = promotionStarter(wiring);
            if (!starter) throw new RingstoreError('internal', 'no promotion state machine in this deployment (docs/dr.md)');
            // One promotion per DR epoch: a second request while it runs starts nothing; after a failed one, a new attempt.
            const [state, latest] = await Promise.all([drStateStore(wiring).read(), promotionLog(wiring).latest()]);
            const epoch = state?.epoch ?? 0;
            const base = `promotion-epoch-${epoch}`;
            const id =
              latest?.status === 'failed' && latest.id.startsWith(base)
                ? `${base}-retry-${wiring.clock.nowMs()}`
                : latest?.status === 'running'
                  ? latest.id
                  : base;
            const started = await starter.start({ id, reason: reason ?? 'requested by an admin' });
            return json(202, { id, started });
          },
          startDrSync: async () => {
            if (wiring.config.dr.role !== 'primary') {
              throw new RingstoreError(
                'request.invalid',
                `only a DR primary syncs its data to a backup; this region is ${wiring.config.dr.role}`,
              );
            }
            return json(202, await startInitialSync(drSyncState(wiring), await ring.current(), wiring.clock));
          },
          promotionReport: async () => {
            const report = wiring.config.dr.role === 'backup' ? await promotionLog(wiring).latest() : undefined;
            if (!report) throw new RingstoreError('dr.noPromotion', 'this region has not been promoted: there is no promotion report');
            return json(200, report);
          },
          // Reconciliation (docs/dr.md): the old primary offers back, the promoted region restores or discards.
          offerLostValues: async (event) => json(200, await lostValueOffer(wiring).offer(parseWith(OfferBody, jsonBody(event), 'body'))),
          listLostKeys: async (event) => {
            const query = parseWith(LostKeysQuery, event.queryStringParameters, 'query');
            return json(200, await lostKeyReconciler(wiring).list(query));
          },
          reconcileLostKey: async (event) => {
            const { action, ...request } = parseWith(ReconcileBody, jsonBody(event), 'body');
            const reconciler = lostKeyReconciler(wiring);
            return json(200, action === 'restore' ? await reconciler.restore(request) : await reconciler.discard(request));
          },
          describeRebalance: async (event) => {
            const { ranges } = parseWith(RebalanceQuery, event.queryStringParameters, 'query');
            const status = await rebalances.status();
            if (!status)
              throw new RingstoreError('rebalance.notFound', 'no rebalance has run here: start one with POST /v1/admin/rebalance');
            return json(200, rebalanceView(status, ranges === 'true'));
          },
          startRebalance: async (event) => {
            const { add, remove, rateKeysPerSecond } = parseWith(RebalanceStartBody, jsonBody(event), 'body');
            requireRebalanceStarter();
            // New shards take the ids after the highest on the ring.
            const highest = Math.max(-1, ...(await readRingState(ringStore(wiring))).shards.map((shard) => shard.id));
            const join = Array.from({ length: add ?? 0 }, (_, index) => highest + 1 + index);
            const id = `rebalance-${wiring.clock.nowMs()}-${wiring.ids.newId().replace(/-/g, '').slice(0, 8)}`;
            const job = await rebalances.start(
              { join, leave: remove ?? [] },
              { id, ...(rateKeysPerSecond === undefined ? {} : { rateKeysPerSecond }) },
            );
            await runRebalance(id, `${id}-1`);
            return json(202, rebalanceView(describeRebalance(job, wiring.clock.nowMs()), false));
          },
          pauseRebalance: rebalanceAction('pause'),
          resumeRebalance: rebalanceAction('resume'),
          cancelRebalance: rebalanceAction('cancel'),
          setRebalanceRate: async (event) => {
            const { id } = parseWith(RebalanceIdParam, event.pathParameters, 'path');
            const { rateKeysPerSecond } = parseWith(RebalanceRateBody, jsonBody(event), 'body');
            const job = await rebalances.setRate(id, rateKeysPerSecond);
            return json(200, rebalanceView(describeRebalance(job, wiring.clock.nowMs()), false));
          },
        }),
      )
  );
}
