// Rules every stored item follows: tombstone retention and when a value is live.
import type { StoredItem } from '../ports/item';

/** How long a tombstone is kept so that replicas and late writers still see the delete's version. */
export const tombstoneRetentionSeconds = 7 * 24 * 3600;

/** True when the item is a value a reader may see at `nowSeconds`. */
export function isLive(item: StoredItem | undefined, nowSeconds: number): item is StoredItem {
  if (!item || item.tombstone) return false;
  return item.expiresAtSeconds === undefined || item.expiresAtSeconds > nowSeconds;
}
