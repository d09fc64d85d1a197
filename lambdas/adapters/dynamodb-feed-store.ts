// FeedStore on the feed table (docs/watch.md): pk = `<namespace>#<bucket>`, sk = the entry's position, kept for the
// retention by DynamoDB's TTL. Appends are BatchWriteItem puts and reads strongly consistent queries of one partition,
// sent with the document client alone: an append is on the stream path of every write (see dynamodb-owner-write).
import { BatchWriteCommand, type BatchWriteCommandInput, type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { forAllBounded } from '../core/bounded';
import { RingstoreError } from '../core/errors';
import type { FeedEntry, FeedOperation, FeedPage, FeedQuery, FeedStore } from '../ports';
import { feedSchema, watchDefaults } from '../../schemas/topology';
import { awsCall } from './aws-errors';

/** DynamoDB's bound on the writes of one BatchWriteItem. */
const batchWriteItemsPerRequest = 25;
const batchWriteAttemptsMax = 6;
const appendConcurrency = 4;

const { partitionKey, sortKey, ttlAttribute } = feedSchema;

export function feedPartitionOf(namespace: string, bucket: number): string {
  return `${namespace}#${bucket}`;
}

/** The smallest text after `position` that any position can be: positions use no character below `!`. */
function justAfter(position: string): string {
  return `${position}!`;
}

type PutRequests = NonNullable<BatchWriteCommandInput['RequestItems']>[string];

// A type literal rather than an interface: it is then a record of attributes, as the document client takes items.
type FeedItem = {
  [partitionKey.name]: string;
  [sortKey.name]: string;
  k: string;
  v: number;
  op: FeedOperation;
  ct: string;
  size: number;
  val?: Uint8Array;
  tx?: string;
  mt?: number;
  exp?: number;
  [ttlAttribute]: number;
};

function itemOf(entry: FeedEntry, retentionSeconds: number): FeedItem {
  const item: FeedItem = {
    [partitionKey.name]: feedPartitionOf(entry.namespace, entry.bucket),
    [sortKey.name]: entry.position,
    k: entry.key,
    v: entry.version,
    op: entry.operation,
    ct: entry.contentType,
    size: entry.size,
    [ttlAttribute]: Math.ceil(Number(entry.position.slice(0, 15)) / 1000) + retentionSeconds,
  };
  if (entry.value !== undefined) item.val = entry.value;
  if (entry.txid !== undefined) item.tx = entry.txid;
  if (entry.modifiedAtMs !== undefined) item.mt = entry.modifiedAtMs;
  if (entry.expiresAtSeconds !== undefined) item.exp = entry.expiresAtSeconds;
  return item;
}

function entryOf(item: FeedItem, namespace: string, bucket: number): FeedEntry {
  return {
    namespace,
    bucket,
    position: item[sortKey.name],
    key: item.k,
    version: item.v,
    operation: item.op,
    contentType: item.ct,
    size: item.size,
    ...(item.val === undefined ? {} : { value: new Uint8Array(item.val) }),
    ...(item.tx === undefined ? {} : { txid: item.tx }),
    ...(item.mt === undefined ? {} : { modifiedAtMs: item.mt }),
    ...(item.exp === undefined ? {} : { expiresAtSeconds: item.exp }),
  };
}

export class DynamoFeedStore implements FeedStore {
  constructor(
    private readonly documentClient: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async append(entries: readonly FeedEntry[], retentionSeconds: number): Promise<void> {
    const batches: FeedEntry[][] = [];
    for (let start = 0; start < entries.length; start += batchWriteItemsPerRequest) {
      batches.push(entries.slice(start, start + batchWriteItemsPerRequest));
    }
    await forAllBounded(batches, appendConcurrency, async (batch) => {
      let pending: PutRequests = batch.map((entry) => ({ PutRequest: { Item: itemOf(entry, retentionSeconds) } }));
      for (let attempt = 0; pending.length > 0; attempt += 1) {
        if (attempt >= batchWriteAttemptsMax) {
          throw new RingstoreError('throttled', `feed append: writes left unprocessed after ${attempt} attempts`, { retryable: true });
        }
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 2 ** attempt * 10));
        const { UnprocessedItems = {} } = await awsCall('feed append', () =>
          this.documentClient.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: pending } })),
        );
        pending = UnprocessedItems[this.tableName] ?? [];
      }
    });
  }

  async read(query: FeedQuery): Promise<FeedPage> {
    const entries: FeedEntry[] = [];
    let startKey: Record<string, unknown> | undefined;
    for (let pages = 0; pages < watchDefaults.pagesPerReadMax; pages++) {
      const { Items = [], LastEvaluatedKey } = await awsCall('feed read', () =>
        this.documentClient.send(
          new QueryCommand({
            TableName: this.tableName,
            // Strongly consistent: an entry appended before the read began is in it (the feed's no-gap argument).
            ConsistentRead: true,
            KeyConditionExpression: '#p = :p AND #s BETWEEN :low AND :high',
            ...(query.keyPrefix ? { FilterExpression: 'begins_with(#k, :prefix)' } : {}),
            ExpressionAttributeNames: { '#p': partitionKey.name, '#s': sortKey.name, ...(query.keyPrefix ? { '#k': 'k' } : {}) },
            ExpressionAttributeValues: {
              ':p': feedPartitionOf(query.namespace, query.bucket),
              ':low': justAfter(query.after),
              ':high': query.upTo,
              ...(query.keyPrefix ? { ':prefix': query.keyPrefix } : {}),
            },
            Limit: query.limit,
            ...(startKey ? { ExclusiveStartKey: startKey } : {}),
          }),
        ),
      );
      for (const item of Items as FeedItem[]) entries.push(entryOf(item, query.namespace, query.bucket));
      if (entries.length >= query.limit) {
        const page = entries.slice(0, query.limit);
        return { entries: page, readTo: page[page.length - 1]!.position };
      }
      if (!LastEvaluatedKey) return { entries, readTo: query.upTo };
      startKey = LastEvaluatedKey;
    }
    // Pages of entries the prefix filtered out: what was read is complete up to the last key evaluated.
    return { entries, readTo: String(startKey![sortKey.name]) };
  }
}
