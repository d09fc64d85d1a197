// An in-memory FeedStore with the DynamoDB adapter's semantics (ordered partitions, a strongly consistent read, a
// bounded number of filtered entries per read), and hooks to delay or fail an append, for the feed's unit tests.
import type { FeedEntry, FeedPage, FeedQuery, FeedStore } from '../../lambdas/ports';

/** Entries one read looks at before it stops early (the adapter's pages of a filtered partition). */
const examinedPerReadMax = 50;

export class MemoryFeedStore implements FeedStore {
  readonly partitions = new Map<string, Map<string, FeedEntry>>();
  appends = 0;
  reads = 0;
  /** Called inside each append before the entries land (a slow or failing append). */
  beforeAppend: (entries: readonly FeedEntry[]) => Promise<void> | void = () => undefined;

  async append(entries: readonly FeedEntry[]): Promise<void> {
    this.appends += 1;
    await this.beforeAppend(entries);
    for (const entry of entries) {
      const id = `${entry.namespace}#${entry.bucket}`;
      const partition = this.partitions.get(id) ?? new Map<string, FeedEntry>();
      partition.set(entry.position, entry);
      this.partitions.set(id, partition);
    }
  }

  async read(query: FeedQuery): Promise<FeedPage> {
    this.reads += 1;
    const partition = this.partitions.get(`${query.namespace}#${query.bucket}`) ?? new Map<string, FeedEntry>();
    const inRange = [...partition.values()]
      .filter((entry) => entry.position > query.after && entry.position <= query.upTo)
      .sort((a, b) => (a.position < b.position ? -1 : 1));
    const entries: FeedEntry[] = [];
    for (const [index, entry] of inRange.entries()) {
      if (entry.key.startsWith(query.keyPrefix)) entries.push(entry);
      if (entries.length >= query.limit) return { entries, readTo: entry.position };
      if (index + 1 >= examinedPerReadMax && index + 1 < inRange.length) return { entries, readTo: entry.position };
    }
    return { entries, readTo: query.upTo };
  }

  /** Every entry of a namespace, in position order. */
  all(namespace: string): FeedEntry[] {
    return [...this.partitions.entries()]
      .filter(([id]) => id.startsWith(`${namespace}#`))
      .flatMap(([, partition]) => [...partition.values()])
      .sort((a, b) => (a.position < b.position ? -1 : 1));
  }
}
