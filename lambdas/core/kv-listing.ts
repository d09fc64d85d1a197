// A namespace's keys in key order across every shard (docs/api.md, "Listing"): the owners' listing index
// partitions merged a page at a time (listing.ts), resumed from an opaque cursor.
import { RingstoreError } from './errors';
import type { Clock, KeySummary, ShardHealthStore, ShardIndexes } from '../ports';
import { mergeListing } from './listing';
import { isReadable } from './replication';
import { tokenOf } from './ring';
import type { RingSource } from './ring-source';
import { shardSchema } from '../../schemas/topology';

/** Rounds of index reads one listing page may take (docs/api.md: a page may hold fewer keys than `limit`). */
const listRoundsMax = 4;

export interface KvListingDeps {
  shards: Pick<ShardIndexes, 'list'>;
  ring: Pick<RingSource, 'current'>;
  /** A listing refuses while a shard may not serve reads. */
  health: Pick<ShardHealthStore, 'all'>;
  clock: Pick<Clock, 'nowMs'>;
  limits: { listLimitMax: number };
}

export interface ListInput {
  prefix: string;
  limit: number;
  cursor?: string;
}

export interface ListResult {
  items: KeySummary[];
  cursor?: string;
}

export class KvListing {
  constructor(private readonly deps: KvListingDeps) {}

  /** Keys of a namespace in key order across every shard, `limit` at a time. */
  async list(namespace: string, input: ListInput): Promise<ListResult> {
    const { limit, prefix } = input;
    const { listLimitMax } = this.deps.limits;
    if (!Number.isInteger(limit) || limit < 1 || limit > listLimitMax) {
      throw new RingstoreError('request.invalid', `limit must be an integer from 1 to ${listLimitMax}`, {
        details: { field: 'limit' },
      });
    }
    const afterKey = input.cursor === undefined ? undefined : decodeCursor(input.cursor, prefix);
    const ring = await this.deps.ring.current();
    const nowSeconds = Math.floor(this.deps.clock.nowMs() / 1000);
    // The listing index holds each live key once, on its owner (topology, shardSchema.keyIndex): a
    // shard that cannot be read would hide the keys it owns, so the listing waits for it (or for its
    // ranges to fail over) rather than answer an incomplete page. A shard that owns no range (its
    // ranges failed over) is not read, and a copy listed on a shard that no longer owns its key (left
    // there by a failover) is not shown: the owner's copy is.
    const owners = ring.shards.filter((shard) => ring.ownsAnyRange(shard.id));
    const health = await this.deps.health.all();
    const unreadable = owners.filter((shard) => !isReadable(health, shard.table));
    if (unreadable.length > 0) {
      throw new RingstoreError(
        'shard.unavailable',
        `shard ${unreadable.map((shard) => shard.table).join(', ')} is unavailable: a listing would miss the keys it owns`,
        { retryable: true },
      );
    }
    const buckets = Array.from({ length: shardSchema.keyIndex.buckets }, (_, bucket) => bucket);
    // Always checked: a range moved back to its walk owner leaves no override, but the shard that held it
    // meanwhile still lists its copies until they are overwritten.
    const ownedHere = (table: string, key: string) => ring.ownerOf(tokenOf(namespace, key)).table === table;
    const merged = await mergeListing({
      partitions: owners.flatMap((shard) => buckets.map((bucket) => ({ table: shard.table, bucket }))),
      read: async (partition, after, partitionLimit) => {
        const page = await this.deps.shards.list(partition.table, {
          namespace,
          bucket: partition.bucket,
          prefix,
          ...(after === undefined ? {} : { afterKey: after }),
          limit: partitionLimit,
          nowSeconds,
        });
        // The page's resume point is what it examined, shown or not, so the merge stays exact.
        return { ...page, items: page.items.filter((summary) => ownedHere(partition.table, summary.key)) };
      },
      afterKey,
      limit,
      roundsMax: listRoundsMax,
    });
    return merged.resumeAfter === undefined
      ? { items: merged.items }
      : { items: merged.items, cursor: encodeCursor(merged.resumeAfter, prefix) };
  }
}

interface CursorBody {
  after: string;
  prefix: string;
}

export function encodeCursor(afterKey: string, prefix: string): string {
  const body: CursorBody = { after: afterKey, prefix };
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, prefix: string): string {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    body = undefined;
  }
  const parsed = body as Partial<CursorBody> | undefined;
  if (!parsed || typeof parsed.after !== 'string' || typeof parsed.prefix !== 'string') {
    throw new RingstoreError('kv.cursorInvalid', 'cursor is not one this API returned', { details: { field: 'cursor' } });
  }
  if (parsed.prefix !== prefix || !parsed.after.startsWith(prefix)) {
    throw new RingstoreError('kv.cursorInvalid', `cursor belongs to a listing of prefix "${parsed.prefix}", not "${prefix}"`, {
      details: { field: 'cursor' },
    });
  }
  return parsed.after;
}
