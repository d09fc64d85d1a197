// RangeStore on DynamoDB (docs/rebalancing.md): a range read page by page from a shard's token index (the
// keys, in token order) and the base table (the items, BatchGetItem with ConsistentRead); backfilled to
// another shard with BatchWriteItem (10 items a request) while that shard takes no live write of the range,
// copied with one conditional PutItem per item once it does, and removed from a shard with BatchWriteItem.
//
// A batch write cannot carry a condition, and a copy under live writes must never put an older version
// over a newer one: the conditional copy is for the catch-up after the backfill (bench/results/history.md,
// "rebalancing: run of record", measures both against each other).
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type Condition, EntityFormatter, PutItemCommand, QueryCommand } from 'dynamodb-toolbox';
import { forAllBounded } from '../core/bounded';
import { RingstoreError } from '../core/errors';
import { tokenBucket, tokenSpace } from '../core/ring';
import type { RangeCursor, RangePage, RangeStore, StoredItem, TokenSpan } from '../ports';
import { shardSchema } from '../../schemas/topology';
import { awsCall, conditionalWrite } from './aws-errors';
import { batchGetItems } from './dynamodb-batch-get';
import { tokenIndexKeysPerQuery } from './dynamodb-shard-indexes';
import {
  type KvEntity,
  type ShardTable,
  kvEntity,
  listingPartitionOf,
  partitionKeyOf,
  shardTable,
  toCopiedAttributes,
  toStoredItem,
} from './dynamodb-item-codec';

/** Conditional puts in flight at once per copy call. */
export const copyConcurrency = 16;
/**
 * Items per BatchWriteItem of the backfill and the cleanup (DynamoDB takes up to 25). On DynamoDB Local a
 * batch write holds the engine from other writes while it runs, so smaller batches keep the clients' p99
 * during a move steady (`npm run bench:engine-hold`; docs/benchmarks.md, "Rebalancing"). On DynamoDB,
 * write units are counted per item either way.
 */
const batchWriteItemsPerRequest = 10;
/** BatchWriteItem attempts before unprocessed items (throttling) count as an outage. */
const batchWriteAttemptsMax = 6;
/** BatchWriteItem requests in flight at once per backfill call. */
export const backfillConcurrency = 4;

type WriteRequest = { PutRequest: { Item: Record<string, unknown> } } | { DeleteRequest: { Key: Record<string, unknown> } };

export class DynamoRangeStore implements RangeStore {
  private readonly table: ShardTable;
  private readonly entity: KvEntity;
  private readonly formatter: EntityFormatter<KvEntity>;

  constructor(private readonly documentClient: DynamoDBDocumentClient) {
    this.table = shardTable(documentClient);
    this.entity = kvEntity(this.table);
    this.formatter = this.entity.build(EntityFormatter);
  }

  async itemsInRange(tableName: string, range: TokenSpan, page: { after?: RangeCursor; limit: number }): Promise<RangePage> {
    const keys: Array<{ pk: string; tok: number; bucket: number }> = [];
    let next: RangeCursor | undefined;
    for (const [low, high] of spansOf(range)) {
      for (let bucket = tokenBucket(low); bucket <= tokenBucket(high) && keys.length < page.limit; bucket += 1) {
        const after = page.after;
        // Buckets (and spans) before the cursor's are done; the cursor's bucket resumes after it.
        if (after && order(range, bucketEnd(bucket, high)) < order(range, after.token)) continue;
        let startKey: Record<string, unknown> | undefined =
          after && after.bucket === bucket && after.token >= low && after.token <= high
            ? { pk: after.pk, tb: bucket, tok: after.token }
            : undefined;
        do {
          const { Items = [], LastEvaluatedKey } = await awsCall(`token range page of ${tableName}`, () =>
            this.table
              .build(QueryCommand)
              .query({ index: shardSchema.tokenIndex.name, partition: bucket, range: { between: [low, high] } })
              .options({
                tableName,
                limit: Math.min(page.limit - keys.length, tokenIndexKeysPerQuery),
                ...(startKey ? { exclusiveStartKey: startKey } : {}),
              })
              .send(),
          );
          for (const projected of Items) {
            const { pk, tok } = this.formatter.format(projected, { attributes: ['pk', 'tok'] });
            keys.push({ pk, tok, bucket });
          }
          startKey = LastEvaluatedKey;
        } while (startKey && keys.length < page.limit);
        if (keys.length >= page.limit) {
          const last = keys[keys.length - 1]!;
          next = { bucket: last.bucket, token: last.tok, pk: last.pk };
        }
      }
      if (keys.length >= page.limit) break;
    }
    const found = await batchGetItems(
      this.documentClient,
      keys.map(({ pk }) => ({ table: tableName, key: { pk } })),
      { consistent: true, what: `range copy read of ${keys.length} keys from ${tableName}` },
    );
    const byKey = new Map(found.map(({ item }) => [item.pk as string, toStoredItem(this.formatter.format(item))]));
    // Token order, as the index gave it; a key removed since the index read is simply not there.
    const items = keys.flatMap(({ pk }) => (byKey.has(pk) ? [byKey.get(pk)!] : []));
    return next ? { items, next } : { items };
  }

  async copyItems(tableName: string, items: readonly StoredItem[], options: { nowSeconds: number; listed: boolean }): Promise<number> {
    let written = 0;
    await forAllBounded(items, copyConcurrency, async (item) => {
      const live = !item.tombstone;
      const listing = options.listed && live ? { lp: listingPartitionOf(item.namespace, item.token) } : {};
      const newer: Array<Condition<KvEntity>> = [
        { attr: 'pk', exists: false },
        { attr: 'v', lt: item.version },
        { attr: 'ttl', lte: options.nowSeconds },
      ];
      // The incoming owner's copy at this very version, unlisted (a replica before): rewritten listed.
      if (options.listed && live)
        newer.push({
          and: [
            { attr: 'v', eq: item.version },
            { attr: 'lp', exists: false },
          ],
        });
      const done = await conditionalWrite(`range copy of ${item.key} to ${tableName}`, () =>
        this.entity
          .build(PutItemCommand)
          .item({ pk: partitionKeyOf(item.namespace, item.key), tb: tokenBucket(item.token), ...listing, ...toCopiedAttributes(item) })
          .options({ tableName, condition: { or: newer } })
          .send(),
      );
      if (done) written += 1;
    });
    return written;
  }

  async backfillItems(tableName: string, items: readonly StoredItem[], options: { listed: boolean }): Promise<number> {
    const putOf = (item: StoredItem): WriteRequest => {
      const listing = options.listed && !item.tombstone ? { lp: listingPartitionOf(item.namespace, item.token) } : {};
      const Item = this.entity
        .build(PutItemCommand)
        .item({ pk: partitionKeyOf(item.namespace, item.key), tb: tokenBucket(item.token), ...listing, ...toCopiedAttributes(item) })
        .params().Item as Record<string, unknown>;
      return { PutRequest: { Item } };
    };
    await this.batchWrite(tableName, items, putOf, `backfill of ${tableName}`);
    return items.length;
  }

  async removeCopies(tableName: string, keys: ReadonlyArray<{ namespace: string; key: string }>): Promise<void> {
    const deleteOf = ({ namespace, key }: { namespace: string; key: string }): WriteRequest => ({
      DeleteRequest: { Key: { pk: partitionKeyOf(namespace, key) } },
    });
    await this.batchWrite(tableName, keys, deleteOf, `cleanup of ${tableName}`);
  }

  /**
   * BatchWriteItem of a request for each entry, batchWriteItemsPerRequest a call, a few calls at once;
   * unprocessed ones retried with backoff. Each call's requests are made when it is sent, so the first write
   * goes out at once and the rest are encoded while earlier ones are in flight (a page encoded whole first
   * delayed its first write by the encoding of every item).
   */
  private async batchWrite<T>(
    tableName: string,
    entries: readonly T[],
    requestOf: (entry: T) => WriteRequest,
    what: string,
  ): Promise<void> {
    const batches: T[][] = [];
    for (let start = 0; start < entries.length; start += batchWriteItemsPerRequest)
      batches.push(entries.slice(start, start + batchWriteItemsPerRequest));
    await forAllBounded(batches, backfillConcurrency, async (batch) => {
      let pending = batch.map(requestOf);
      for (let attempt = 0; pending.length > 0; attempt += 1) {
        if (attempt >= batchWriteAttemptsMax) {
          throw new RingstoreError('throttled', `${what}: writes left unprocessed after ${attempt} attempts`, { retryable: true });
        }
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 2 ** attempt * 20));
        const { UnprocessedItems = {} } = await awsCall(what, () =>
          this.documentClient.send(new BatchWriteCommand({ RequestItems: { [tableName]: pending } })),
        );
        pending = (UnprocessedItems[tableName] ?? []) as WriteRequest[];
      }
    });
  }
}

/** (start, end] as index spans: it may wrap past the top of the token space into (start, max] and [0, end]. */
function spansOf(range: TokenSpan): Array<[number, number]> {
  const spans: Array<[number, number]> =
    range.start < range.end
      ? [[range.start + 1, range.end]]
      : [
          [range.start + 1, tokenSpace - 1],
          [0, range.end],
        ];
  return spans.filter(([low, high]) => low <= high);
}

/** A token's position in the range, counted from its start: the order the copy goes in. */
function order(range: TokenSpan, token: number): number {
  return (token - range.start - 1 + tokenSpace) % tokenSpace;
}

/** The last token of a bucket within a span. */
function bucketEnd(bucket: number, high: number): number {
  return Math.min(high, (bucket + 1) * 2 ** 24 - 1);
}
