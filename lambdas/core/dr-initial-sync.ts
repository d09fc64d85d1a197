// The primary's initial sync (docs/dr.md): every key the primary holds when DR is turned on
// (or again on request) shipped as the stream ships writes, a slice of token ranges per maintenance run.
import { forAllBounded } from './bounded';
import type { DrShipper } from './dr-shipper';
import { RingstoreError } from './errors';
import type { Ring } from './ring';
import { standingsByRing } from './stream-ownership';
import type { Clock, DrSyncState, DrSyncStateStore, ShardIndexes, ShardItemReads, StoredItem } from '../ports';

/**
 * Starts (or restarts) the initial sync from the first range (POST /v1/admin/dr/sync); one already
 * running goes on as it is. Maintenance ships it (InitialSync.step).
 */
export async function startInitialSync(state: DrSyncStateStore, ring: Ring, clock: Clock): Promise<DrSyncState> {
  const current = await state.readSync();
  if (current?.status === 'running') return current;
  const now = clock.nowMs();
  const started: DrSyncState = {
    status: 'running',
    nextRange: 0,
    ranges: ring.ranges().length,
    keys: 0,
    startedAtMs: now,
    updatedAtMs: now,
  };
  await state.saveSync(started);
  return started;
}

export interface InitialSyncDeps {
  shipper: Pick<DrShipper, 'shipOwnerChanges'>;
  shards: ShardItemReads & ShardIndexes;
  state: DrSyncStateStore;
  clock: Clock;
  limits: { rangesPerRun: number; readConcurrency: number };
}

/**
 * The primary's initial sync: each owner's keys of each token range (from the token index, then the
 * items), shipped as the stream would ship them, a slice of ranges per maintenance run. Writes made
 * meanwhile are shipped by the stream too; the backup applies whichever version is newer.
 */
export class InitialSync {
  constructor(private readonly deps: InitialSyncDeps) {}

  /**
   * Ships the next slice of ranges of a running sync and saves where it stopped; a failure leaves the
   * saved range as it was, so the next run ships it again (the backup's version guards make that harmless).
   */
  async step(ring: Ring): Promise<DrSyncState | undefined> {
    const state = await this.deps.state.readSync();
    if (state?.status !== 'running') return state;
    const ranges = ring.ranges();
    let { nextRange, keys } = state;
    for (const range of ranges.slice(nextRange, nextRange + this.deps.limits.rangesPerRun)) {
      const owner = ring.shard(range.owner).table;
      const entries = await this.deps.shards.versionsInRange(owner, range);
      const items: StoredItem[] = [];
      await forAllBounded(entries, this.deps.limits.readConcurrency, async (entry) => {
        const item = await this.deps.shards.get(owner, entry.namespace, entry.key, { consistent: true });
        if (item && item.version > 0) items.push(item);
      });
      const writes = items.map((item) => ({ sourceTable: owner, item }));
      const result = await this.deps.shipper.shipOwnerChanges(writes, standingsByRing(writes, ring));
      if (result.firstFailedIndex !== undefined)
        throw new RingstoreError('dr.backupUnreachable', `the initial sync could not ship range ${nextRange}; the next run retries it`, {
          retryable: true,
        });
      keys += items.length;
      nextRange += 1;
    }
    const next: DrSyncState = {
      ...state,
      nextRange,
      keys,
      ranges: ranges.length,
      status: nextRange >= ranges.length ? 'completed' : 'running',
      updatedAtMs: this.deps.clock.nowMs(),
    };
    await this.deps.state.saveSync(next);
    return next;
  }
}
