// Resolving another transaction's intent met on a key (docs/transactions.md, "Recovery"): read its record and act on it.
// Committed (or no record: presumed commit) -> roll forward; aborted or past its deadline -> clear;
// pending -> readers see the committed content, writers defer to an older transaction.
import type {
  CacheEntry,
  Intent,
  StoredItem,
  Clock,
  ShardItemReads,
  ShardTransactions,
  TxnRecord,
  TxnRecordStore,
  ValueCache,
} from '../ports';
import { tokenOf } from './ring';

export interface IntentDeps {
  shards: ShardItemReads & ShardTransactions;
  records: TxnRecordStore;
  clock: Clock;
  cache?: ValueCache;
}

/** How an intent stands after resolution. */
export type Resolution =
  | { state: 'gone'; item: StoredItem | undefined }
  /** Its transaction is still pending and within its deadline. */
  | { state: 'pending'; record: TxnRecord };

/** Orders transactions by age: the older one (earlier start, then smaller id) wins a conflict. */
export function isOlder(a: { createdAtMs: number; txid: string }, b: { createdAtMs: number; txid: string }): boolean {
  return a.createdAtMs < b.createdAtMs || (a.createdAtMs === b.createdAtMs && a.txid < b.txid);
}

export class IntentResolver {
  constructor(private readonly deps: IntentDeps) {}

  /**
   * Resolves the intent on `item` (read from the owner `table`). With `wound`, a pending transaction
   * younger than the caller is aborted first (wound-wait: the older transaction never waits for a
   * younger one, so no deadlock can form).
   */
  async resolve(table: string, item: StoredItem, wound?: { createdAtMs: number; txid: string }): Promise<Resolution> {
    const intent = item.intent;
    if (!intent) return { state: 'gone', item };
    let record = await this.deps.records.find(intent.txid);
    if (record?.status === 'pending') {
      const expired = this.deps.clock.nowMs() > record.deadlineMs;
      const younger = wound !== undefined && isOlder(wound, record);
      if (!expired && !younger) return { state: 'pending', record };
      record = await this.deps.records.decide(intent.txid, 'aborted', {
        reason: expired ? 'timeout' : 'wounded',
        conflictKey: item.key,
      });
    }
    // No record: presumed commit (records are written before any intent and kept while intents live).
    if (!record || record.status === 'committed') return { state: 'gone', item: await this.rollForward(table, item, intent) };
    if (record.status === 'pending') return { state: 'pending', record };
    await this.deps.shards.clearIntent(table, { namespace: item.namespace, key: item.key, txid: intent.txid });
    const { intent: _cleared, ...committed } = item;
    return { state: 'gone', item: committed };
  }

  /** Makes a committed transaction's intent the key's value (idempotent: a second apply finds nothing). */
  async rollForward(
    table: string,
    item: Pick<StoredItem, 'namespace' | 'key'>,
    intent: Pick<Intent, 'txid' | 'kind'>,
  ): Promise<StoredItem | undefined> {
    const nowMs = this.deps.clock.nowMs();
    const applied = await this.deps.shards.applyIntent(table, {
      namespace: item.namespace,
      key: item.key,
      txid: intent.txid,
      kind: intent.kind,
      nowSeconds: Math.floor(nowMs / 1000),
      modifiedAtMs: nowMs,
    });
    const current = applied ?? (await this.deps.shards.get(table, item.namespace, item.key, { consistent: true }));
    if (applied) await this.deps.cache?.put(item.namespace, item.key, cacheEntryOf(applied));
    return current;
  }
}

/**
 * The item a cache entry describes (the inverse of {@link cacheEntryOf}): without a value when the entry holds only
 * the version (a blob, or a tombstone).
 */
export function itemOfCacheEntry(namespace: string, key: string, entry: CacheEntry): StoredItem {
  return {
    namespace,
    key,
    version: entry.version,
    token: tokenOf(namespace, key),
    contentType: entry.contentType,
    size: entry.size,
    sha256: entry.sha256,
    tombstone: entry.tombstone,
    ...(entry.expiresAtSeconds === undefined ? {} : { expiresAtSeconds: entry.expiresAtSeconds }),
    ...(entry.value === undefined ? {} : { value: entry.value }),
  };
}

/** The cache entry of an item: inline values are cached; for a blob only its version is. */
export function cacheEntryOf(
  item: Pick<StoredItem, 'version' | 'tombstone' | 'contentType' | 'size' | 'sha256' | 'expiresAtSeconds' | 'value'>,
) {
  return {
    version: item.version,
    tombstone: item.tombstone,
    contentType: item.contentType,
    size: item.size,
    sha256: item.sha256,
    ...(item.expiresAtSeconds === undefined ? {} : { expiresAtSeconds: item.expiresAtSeconds }),
    ...(item.value === undefined ? {} : { value: item.value }),
  };
}
