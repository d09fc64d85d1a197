// Builders of DR reconciliation (docs/dr.md, "Reconciliation"): the old primary's offer of the values it
// holds of lost keys, and the promoted region's listing, restore and discard. Apart from wiring/dr.ts
// because a restore writes through the KV service (services.ts), which itself holds the DR builders.
import { drDefaults, limits } from '../../schemas/topology';
import { LostKeyReconciler, LostValueOffer, type OwnCopyReader } from '../core/dr-reconcile';
import { RingstoreError } from '../core/errors';
import { tokenOf } from '../core/ring';
import { ringSource } from './control';
import { blobStore, shardStore } from './data';
import { backupPromotionLog, backupValueStore, drStateStore, pendingStore } from './dr';
import { kvService } from './services';
import type { Wiring } from './wiring';

/** A key's copy on its owner in this region, read strongly (no cache, no read gate). */
function ownCopyReader(wiring: Wiring): OwnCopyReader {
  const ring = ringSource(wiring);
  const shards = shardStore(wiring);
  return async (namespace, key) => {
    const owner = (await ring.current()).ownerOf(tokenOf(namespace, key));
    return shards.get(owner.table, namespace, key, { consistent: true });
  };
}

/** The old primary's offer of lost values to its promoted backup; only in a DR primary. */
export function lostValueOffer(wiring: Wiring): LostValueOffer {
  const { dr } = wiring.config;
  if (dr.role !== 'primary') {
    throw new RingstoreError('request.invalid', `only the old DR primary offers values back; this region is ${dr.role}`);
  }
  return wiring.perHandler(
    'lostValueOffer',
    () =>
      new LostValueOffer({
        promotions: backupPromotionLog(wiring),
        readOwn: ownCopyReader(wiring),
        blobs: blobStore(wiring),
        backupValues: backupValueStore(wiring),
        clock: wiring.clock,
        limits: drDefaults.offer,
      }),
  );
}

/** The promoted region's reconciliation of lost keys; only in a DR backup. */
export function lostKeyReconciler(wiring: Wiring): LostKeyReconciler {
  const { dr } = wiring.config;
  if (dr.role !== 'backup') {
    throw new RingstoreError('request.invalid', `lost keys are reconciled in the promoted backup region; this region is ${dr.role}`);
  }
  const state = drStateStore(wiring);
  return wiring.perHandler(
    'lostKeyReconciler',
    () =>
      new LostKeyReconciler({
        pending: pendingStore(wiring),
        values: blobStore(wiring),
        kv: kvService(wiring),
        readCurrent: ownCopyReader(wiring),
        // Read fresh: an admin's request, rare, and the promotion may have just opened the region.
        promoted: async () => (await state.read())?.state === 'promoted',
        clock: wiring.clock,
        ids: wiring.ids,
        limits: {
          directBodyBytesMax: limits.directBodyBytesMax,
          listLimitMax: drDefaults.lostListLimitMax,
          readConcurrency: drDefaults.shipConcurrency,
        },
      }),
  );
}
