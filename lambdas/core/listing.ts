// The merge behind a namespace listing: the listing index is split into partitions (every shard, and
// within a shard `buckets` write-sharded index partitions), each read in key order from a cursor. The
// merge returns the first `limit` keys of their union in key order and a cursor from which the next
// page continues, reading from each partition only what the page needs.
//
// Why the result is exact: a partition that stopped early stopped at its `resumeAfter`, the last key it
// examined; every key it holds up to there has been seen. The boundary is the smallest such stop over
// the partitions that are not exhausted, so every key at or below the boundary has been seen from every
// partition: those keys are final, in order. Only the partitions stopped at the boundary are read again.
import type { KeySummary, ListPage } from '../ports';

/** DynamoDB orders string sort keys by their UTF-8 bytes; the merge must agree. */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

export interface MergeListingInput<Partition> {
  partitions: readonly Partition[];
  /** Reads a partition's live keys strictly after `afterKey`, at most `limit` of them. */
  read: (partition: Partition, afterKey: string | undefined, limit: number) => Promise<ListPage>;
  afterKey: string | undefined;
  limit: number;
  /**
   * Rounds of reads per page: the first reads every partition, each later one only those stopped at the
   * boundary. A page that ran out of rounds holds fewer than `limit` keys and a cursor.
   */
  roundsMax: number;
}

export interface MergedListing {
  items: KeySummary[];
  /** Absent when the listing is complete. */
  resumeAfter?: string;
}

/** Keys asked of each partition per read: its share of the page, twice over, so one round usually fills it. */
export function keysPerPartitionRead(limit: number, partitionCount: number): number {
  return Math.min(limit, Math.ceil((2 * limit) / Math.max(1, partitionCount)) + 1);
}

interface PartitionCursor<Partition> {
  partition: Partition;
  afterKey: string | undefined;
  exhausted: boolean;
}

export async function mergeListing<Partition>(input: MergeListingInput<Partition>): Promise<MergedListing> {
  const { limit } = input;
  const perRead = keysPerPartitionRead(limit, input.partitions.length);
  const cursors: Array<PartitionCursor<Partition>> = input.partitions.map((partition) => ({
    partition,
    afterKey: input.afterKey,
    exhausted: false,
  }));
  // A key can be in two partitions while its owner changes (a move or a failover): listed once, at its newest version.
  const seen = new Map<string, KeySummary>();
  let toRead = cursors;
  for (let round = 1; ; round += 1) {
    const pages = await Promise.all(toRead.map((cursor) => input.read(cursor.partition, cursor.afterKey, perRead)));
    toRead.forEach((cursor, index) => {
      const page = pages[index]!;
      for (const summary of page.items) {
        const known = seen.get(summary.key);
        if (!known || known.version < summary.version) seen.set(summary.key, summary);
      }
      if (page.more) cursor.afterKey = page.resumeAfter;
      else cursor.exhausted = true;
    });
    const open = cursors.filter((cursor) => !cursor.exhausted);
    const boundary = open.map((cursor) => cursor.afterKey!).sort(compareKeys)[0];
    const final = [...seen.values()]
      .filter((summary) => boundary === undefined || compareKeys(summary.key, boundary) <= 0)
      .sort((a, b) => compareKeys(a.key, b.key));
    if (final.length > limit) return { items: final.slice(0, limit), resumeAfter: final[limit - 1]!.key };
    if (boundary === undefined) return { items: final };
    if (final.length === limit || round >= input.roundsMax) return { items: final, resumeAfter: boundary };
    toRead = open.filter((cursor) => cursor.afterKey === boundary);
  }
}
