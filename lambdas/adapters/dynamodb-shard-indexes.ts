// A shard table's two indexes (ShardIndexes): the listing index of the owners' live keys, and the token-ordered
// index of every copy that anti-entropy and rebalancing read range by range.
import { type EntityFormatter, QueryCommand, UpdateItemCommand } from 'dynamodb-toolbox';
import { forAllBounded } from '../core/bounded';
import { RingstoreError } from '../core/errors';
import { tokenBucket, tokenSpace } from '../core/ring';
import type { KeySummary, ListPage, ListQuery, ShardIndexes, VersionEntry } from '../ports';
import { shardSchema } from '../../schemas/topology';
import { awsCall, conditionalWrite } from './aws-errors';
import { type KvEntity, type ShardTable, listingPartitionOf, partitionKeyOf } from './dynamodb-item-codec';

/** Keys listed at once when a shard becomes the owner of a range. */
const listAsOwnerConcurrency = 16;

/** Bounded work per shard per listing call: pages read before answering "more". */
export const listPagesPerShardMax = 8;

/**
 * Keys one token-index query reads, at most. On DynamoDB Local a query holds the engine from every other
 * request while it runs, so a rebalance's and an anti-entropy comparison's range reads go in small pages
 * (`npm run bench:engine-hold`, docs/benchmarks.md); on DynamoDB they cost the same read units either way.
 */
export const tokenIndexKeysPerQuery = 100;

/** Index pages read per token bucket by one anti-entropy comparison: a bound, so a runaway scan fails loudly. */
export const rangePagesPerBucketMax = 10_000;

export class DynamoShardIndexes implements ShardIndexes {
  constructor(
    private readonly table: ShardTable,
    private readonly entity: KvEntity,
    private readonly formatter: EntityFormatter<KvEntity>,
  ) {}

  async listAsOwner(tableName: string, entries: readonly VersionEntry[]): Promise<number> {
    let listed = 0;
    await forAllBounded(
      entries.filter((entry) => !entry.tombstone),
      listAsOwnerConcurrency,
      async ({ namespace, key, token }) => {
        const joined = await conditionalWrite(`listing of ${key} on ${tableName}`, () =>
          this.entity
            .build(UpdateItemCommand)
            .item({ pk: partitionKeyOf(namespace, key), lp: listingPartitionOf(namespace, token) })
            // Only a live copy joins; one already listed is left as it is (no write unit spent).
            .options({
              tableName,
              condition: {
                and: [
                  { attr: 'tomb', eq: false },
                  { attr: 'lp', exists: false },
                ],
              },
            })
            .send(),
        );
        if (joined) listed += 1;
      },
    );
    return listed;
  }

  async versionsInRange(tableName: string, range: { start: number; end: number }): Promise<VersionEntry[]> {
    const entries: VersionEntry[] = [];
    // (start, end] may wrap past the top of the token space: then it is (start, max] and [0, end].
    const spans: Array<[number, number]> =
      range.start < range.end
        ? [[range.start + 1, range.end]]
        : [
            [range.start + 1, tokenSpace - 1],
            [0, range.end],
          ];
    for (const [low, high] of spans) {
      if (low > high) continue;
      for (let bucket = tokenBucket(low); bucket <= tokenBucket(high); bucket += 1) {
        let startKey: Record<string, unknown> | undefined;
        let pages = 0;
        do {
          const { Items = [], LastEvaluatedKey } = await awsCall(`token range scan of ${tableName}`, () =>
            this.table
              .build(QueryCommand)
              .query({ index: shardSchema.tokenIndex.name, partition: bucket, range: { between: [low, high] } })
              .options({ tableName, limit: tokenIndexKeysPerQuery, ...(startKey ? { exclusiveStartKey: startKey } : {}) })
              .send(),
          );
          for (const projected of Items) {
            const { pk, tok, v, tomb, sha } = this.formatter.format(projected, {
              attributes: ['pk', 'tok', ...shardSchema.tokenIndex.nonKeyAttributes],
            });
            const separator = pk.indexOf('#');
            entries.push({
              namespace: pk.slice(0, separator),
              key: pk.slice(separator + 1),
              token: tok,
              version: v,
              tombstone: tomb,
              sha256: sha,
            });
          }
          startKey = LastEvaluatedKey;
          pages += 1;
          if (pages > rangePagesPerBucketMax) {
            throw new RingstoreError(
              'internal',
              `token bucket ${bucket} of ${tableName} has more than ${rangePagesPerBucketMax} index pages`,
            );
          }
        } while (startKey);
      }
    }
    return entries;
  }

  async list(tableName: string, query: ListQuery): Promise<ListPage> {
    const { namespace, prefix, afterKey, limit, nowSeconds } = query;
    const partition = `${namespace}#${query.bucket}`;
    const items: KeySummary[] = [];
    // A position, not an item: DynamoDB resumes after (lp, k, pk) whether or not that key is in this bucket.
    let startKey: Record<string, unknown> | undefined =
      afterKey === undefined ? undefined : { pk: partitionKeyOf(namespace, afterKey), lp: partition, k: afterKey };
    for (let page = 0; page < listPagesPerShardMax; page += 1) {
      const { Items = [], LastEvaluatedKey } = await awsCall(`listing of ${tableName}`, () =>
        this.table
          .build(QueryCommand)
          .query({
            index: shardSchema.keyIndex.name,
            partition,
            ...(prefix ? { range: { beginsWith: prefix } } : {}),
          })
          .options({
            tableName,
            limit: limit - items.length,
            ...(startKey ? { exclusiveStartKey: startKey } : {}),
          })
          .send(),
      );
      for (const projected of Items) {
        const summary = this.formatter.format(projected, { attributes: ['k', ...shardSchema.keyIndex.nonKeyAttributes] });
        // Deletes leave the index; an expired key stays until DynamoDB's TTL removes it.
        if (summary.ttl !== undefined && summary.ttl <= nowSeconds) continue;
        items.push({
          key: summary.k,
          version: summary.v,
          size: summary.size,
          contentType: summary.ct,
          ...(summary.ttl === undefined ? {} : { expiresAtSeconds: summary.ttl }),
        });
      }
      startKey = LastEvaluatedKey;
      if (!startKey || items.length >= limit) break;
    }
    const resumeAfter = startKey ? String(startKey[shardSchema.keyIndex.sortKey.name]) : undefined;
    return resumeAfter === undefined ? { items, more: false } : { items, more: true, resumeAfter };
  }
}
