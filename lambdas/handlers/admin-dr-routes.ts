// /v1/admin routes of cross-region DR (docs/dr.md): the region's DR status, promotion and its report, the
// initial sync, and the reconciliation of keys lost in a disaster.
import { LostKeysQuery, OfferBody, PromoteBody, ReconcileBody } from '../../schemas/api';
import { drDefaults } from '../../schemas/topology';
import { startInitialSync } from '../core/dr-initial-sync';
import { describeBackup } from '../core/dr-promotion';
import { RingstoreError } from '../core/errors';
import { jsonBody, parseWith } from '../http/request';
import { json } from '../http/response';
import type { AdminOperations } from './admin-operations';
import { ringSource } from '../wiring/control';
import { drStateStore, drSyncState, keyQueueProbe, pendingStore, promotionLog, promotionStarter } from '../wiring/dr';
import { lostKeyReconciler, lostValueOffer } from '../wiring/dr-reconcile';
import type { Wiring } from '../wiring/wiring';

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

export function drRoutes(
  wiring: Wiring,
): AdminOperations<'describeDr' | 'promote' | 'startDrSync' | 'promotionReport' | 'offerLostValues' | 'listLostKeys' | 'reconcileLostKey'> {
  const ring = ringSource(wiring);
  return {
    describeDr: async () => json(200, await drStatus(wiring)),
    promote: async (event) => {
      const { reason } = parseWith(PromoteBody, jsonBody(event), 'body');
      if (wiring.config.dr.role !== 'backup') {
        throw new RingstoreError('request.invalid', `only a DR backup region can be promoted; this region is ${wiring.config.dr.role}`);
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
  };
}
