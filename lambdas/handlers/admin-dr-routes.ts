// /v1/admin routes of cross-region DR (docs/dr.md): the region's DR status, promotion and its report, the
// initial sync, and the reconciliation of keys lost in a disaster.
import { LostKeysQuery, OfferBody, PromoteBody, ReconcileBody } from '../../schemas/api';
import { drDefaults } from '../../schemas/topology';
import { startInitialSync } from '../core/dr-initial-sync';
import { describeBackup } from '../core/dr-promotion';
import { RingstoreError } from '../core/errors';
import type { LostKeyReconciler, LostValueOffer } from '../core/dr-reconcile';
import type { RingSource } from '../core/ring-source';
import type { Clock, DrStateStore, DrSyncStateStore, KeyQueueProbe, PendingStore, PromotionLog, PromotionStarter } from '../ports';
import { jsonBody, parseWith } from '../http/request';
import { json } from '../http/response';
import type { AdminOperations } from './admin-operations';

/**
 * What the DR routes use. Which stores exist depends on the region's role, and building one the role lacks throws:
 * each is built by the request that needs it, so only that request is refused.
 */
export interface DrRoutesDeps {
  /** This region's DR role. */
  role: 'none' | 'primary' | 'backup';
  ring: RingSource;
  clock: Clock;
  /** The backup's DR state: a backup's own, or, from a primary, its backup's across the link. */
  backupState: () => DrStateStore;
  /** A backup's pending table. */
  pending: () => PendingStore;
  /** A backup's key queue; undefined when the region names none. */
  keyQueue: (() => KeyQueueProbe) | undefined;
  /** A primary's initial-sync progress. */
  syncState: () => DrSyncStateStore;
  /** A backup's promotion workflow; undefined when the deployment has none. */
  promotionStarter: () => PromotionStarter | undefined;
  /** A backup's promotion reports. */
  promotionLog: () => PromotionLog;
  /** The old primary's offer of lost values. */
  lostValueOffer: () => LostValueOffer;
  /** The promoted backup's reconciliation of lost keys. */
  lostKeyReconciler: () => LostKeyReconciler;
}

/** This region's DR role and what it knows: a backup's state and pending set, a primary's view of its backup. */
async function drStatus(deps: DrRoutesDeps) {
  if (deps.role === 'none') return { role: 'none' };
  if (deps.role === 'backup') {
    return describeBackup({
      state: deps.backupState(),
      pending: deps.pending(),
      ...(deps.keyQueue ? { queue: deps.keyQueue() } : {}),
      clock: deps.clock,
      scanPageSize: drDefaults.scanPageSize,
    });
  }
  const sync = await deps.syncState().readSync();
  const syncView = sync ? { sync: { ...sync, startedAt: new Date(sync.startedAtMs).toISOString() } } : {};
  try {
    const backup = (await deps.backupState().read()) ?? { state: 'backup', epoch: 0 };
    return { role: 'primary', state: backup.state, epoch: backup.epoch, backupReachable: true, ...syncView };
  } catch {
    return { role: 'primary', backupReachable: false, ...syncView };
  }
}

export function drRoutes(
  deps: DrRoutesDeps,
): AdminOperations<'describeDr' | 'promote' | 'startDrSync' | 'promotionReport' | 'offerLostValues' | 'listLostKeys' | 'reconcileLostKey'> {
  const { role, ring, clock } = deps;
  return {
    describeDr: async () => json(200, await drStatus(deps)),
    promote: async (event) => {
      const { reason } = parseWith(PromoteBody, jsonBody(event), 'body');
      if (role !== 'backup') {
        throw new RingstoreError('request.invalid', `only a DR backup region can be promoted; this region is ${role}`);
      }
      const starter = deps.promotionStarter();
      if (!starter) throw new RingstoreError('internal', 'no promotion state machine in this deployment (docs/dr.md)');
      // One promotion per DR epoch: a second request while it runs starts nothing; after a failed one, a new attempt.
      const [state, latest] = await Promise.all([deps.backupState().read(), deps.promotionLog().latest()]);
      const epoch = state?.epoch ?? 0;
      const base = `promotion-epoch-${epoch}`;
      const id =
        latest?.status === 'failed' && latest.id.startsWith(base)
          ? `${base}-retry-${clock.nowMs()}`
          : latest?.status === 'running'
            ? latest.id
            : base;
      const started = await starter.start({ id, reason: reason ?? 'requested by an admin' });
      return json(202, { id, started });
    },
    startDrSync: async () => {
      if (role !== 'primary') {
        throw new RingstoreError('request.invalid', `only a DR primary syncs its data to a backup; this region is ${role}`);
      }
      return json(202, await startInitialSync(deps.syncState(), await ring.current(), clock));
    },
    promotionReport: async () => {
      const report = role === 'backup' ? await deps.promotionLog().latest() : undefined;
      if (!report) throw new RingstoreError('dr.noPromotion', 'this region has not been promoted: there is no promotion report');
      return json(200, report);
    },
    // Reconciliation (docs/dr.md): the old primary offers back, the promoted region restores or discards.
    offerLostValues: async (event) => json(200, await deps.lostValueOffer().offer(parseWith(OfferBody, jsonBody(event), 'body'))),
    listLostKeys: async (event) => {
      const query = parseWith(LostKeysQuery, event.queryStringParameters, 'query');
      return json(200, await deps.lostKeyReconciler().list(query));
    },
    reconcileLostKey: async (event) => {
      const { action, ...request } = parseWith(ReconcileBody, jsonBody(event), 'body');
      const reconciler = deps.lostKeyReconciler();
      return json(200, action === 'restore' ? await reconciler.restore(request) : await reconciler.discard(request));
    },
  };
}
