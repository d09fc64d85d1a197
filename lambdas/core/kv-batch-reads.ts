// Batch reads (POST /v1/batch/get): up to 100 keys of one namespace, each read exactly as a single GET reads it
// (kv-reads.ts: cache, replicas, owner, DR gate, intents), a bounded number at once, answered in request order.
import { forAllBounded } from './bounded';
import { isRingstoreError, RingstoreError } from './errors';
import type { BlobStore, Consistency, StoredItem } from '../ports';
import type { KvReader } from './kv-reads';
import { validateKey } from './validation';

/**
 * Keys of one batch read at once: a GET's work each, so a batch of 100 takes about 7 GETs' time, while one
 * request's burst on a shard table stays far below a partition's 3,000 reads a second.
 */
export const batchGetReadsInFlight = 16;

export interface KvBatchLimits {
  keyBytesMax: number;
  batchGetKeysMax: number;
  batchGetValueBytesMax: number;
  presignedUrlTtlSeconds: number;
}

export interface KvBatchReaderDeps {
  reader: Pick<KvReader, 'readLive'>;
  blobs: Pick<BlobStore, 'presignGet'>;
  limits: KvBatchLimits;
}

/** How a found key's value travels: inline, by a presigned URL (kept in S3), or not at all (over the answer's budget). */
export type BatchValue = { kind: 'inline'; value: Uint8Array } | { kind: 'url'; url: string } | { kind: 'omitted' };

export type BatchGetEntry = { key: string; found: false } | { key: string; found: true; item: StoredItem; value: BatchValue };

export interface BatchGetOptions {
  consistency: Consistency;
  /**
   * Called once the keys are valid and before any is read, with the reads the batch makes: the namespace's rate
   * quota counts a batch as that many GETs. A refusal refuses the batch.
   */
  admit?: (reads: number) => Promise<void>;
}

export class KvBatchReader {
  constructor(private readonly deps: KvBatchReaderDeps) {}

  /**
   * Every key's entry, in the order asked. A key that is absent, deleted or expired is `found: false`; any other
   * failure of a read (a shard that no replica can stand in for, a fenced range) fails the batch, naming the key.
   */
  async get(namespace: string, keys: readonly string[], options: BatchGetOptions): Promise<BatchGetEntry[]> {
    validateBatchKeys(keys, this.deps.limits);
    await options.admit?.(keys.length);
    const items = new Array<StoredItem | undefined>(keys.length);
    const work = keys.map((key, index) => ({ key, index }));
    await forAllBounded(work, batchGetReadsInFlight, async ({ key, index }) => {
      items[index] = await this.readOne(namespace, key, options.consistency);
    });
    let inlineBytes = 0;
    const entries: BatchGetEntry[] = [];
    for (const [index, key] of keys.entries()) {
      const item = items[index];
      if (!item) {
        entries.push({ key, found: false });
        continue;
      }
      // Values fill the answer's budget in request order, so the same keys always get the same answer.
      const fits = item.value !== undefined && inlineBytes + item.size <= this.deps.limits.batchGetValueBytesMax;
      if (fits) inlineBytes += item.size;
      entries.push({ key, found: true, item, value: await this.valueOf(item, fits) });
    }
    return entries;
  }

  private async readOne(namespace: string, key: string, consistency: Consistency): Promise<StoredItem | undefined> {
    try {
      return await this.deps.reader.readLive(namespace, key, consistency);
    } catch (error) {
      if (isRingstoreError(error, 'kv.notFound')) return undefined;
      if (!isRingstoreError(error)) throw error;
      // The answer a GET of this key would have had, with the key it came from.
      throw new RingstoreError(error.code, error.message, {
        retryable: error.retryable,
        cause: error,
        details: { ...error.details, key },
      });
    }
  }

  private async valueOf(item: StoredItem, fits: boolean): Promise<BatchValue> {
    if (item.value !== undefined) return fits ? { kind: 'inline', value: item.value } : { kind: 'omitted' };
    const objectKey = item.blob?.objectKey;
    if (!objectKey) throw new RingstoreError('internal', `item ${item.key} has neither a value nor a blob`);
    const { blobs, limits } = this.deps;
    return { kind: 'url', url: await blobs.presignGet(objectKey, { expiresInSeconds: limits.presignedUrlTtlSeconds }) };
  }
}

/** A key as an error message shows it: quoted, and cut short when long. */
const shown = (key: string) => JSON.stringify(key.length > 64 ? `${key.slice(0, 64)}…` : key);

/**
 * Refuses a batch that is empty, too large, names a key twice or names a key a GET would refuse: the 400 names
 * the limit, the repeated keys or the bad key and its place, and nothing is read.
 */
export function validateBatchKeys(keys: readonly string[], limits: Pick<KvBatchLimits, 'keyBytesMax' | 'batchGetKeysMax'>): void {
  const max = limits.batchGetKeysMax;
  if (keys.length < 1 || keys.length > max) {
    throw new RingstoreError('request.invalid', `keys: a batch names 1 to ${max} keys (got ${keys.length})`, {
      details: { field: 'keys', limit: max, count: keys.length },
    });
  }
  for (const [index, key] of keys.entries()) {
    try {
      validateKey(key, limits);
    } catch (error) {
      if (!isRingstoreError(error)) throw error;
      throw new RingstoreError('kv.keyInvalid', `keys.${index} ${shown(key)}: ${error.message}`, {
        details: { ...error.details, field: `keys.${index}`, key },
      });
    }
  }
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const key of keys) (seen.has(key) ? repeated : seen).add(key);
  if (repeated.size > 0) {
    throw new RingstoreError(
      'request.invalid',
      `keys: each key may be named once; named more than once: ${[...repeated].map(shown).join(', ')}`,
      {
        details: { field: 'keys', duplicates: [...repeated] },
      },
    );
  }
}
