// ShardStore on DynamoDB: one entity definition (dynamodb-toolbox), routed to a shard by `tableName`.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import {
  type Condition,
  $add,
  $remove,
  Entity,
  GetItemCommand,
  QueryCommand,
  Table,
  UpdateItemCommand,
  binary,
  boolean,
  item,
  number,
  string,
} from 'dynamodb-toolbox';
import { PreconditionFailedError } from '../core/errors';
import type { KeySummary, StoredItem } from '../core/item';
import { tokenBucket } from '../core/ring';
import type { ItemWrite, ListPage, ListQuery, ShardStore, WritePrecondition, WriteResult } from '../ports';
import { shardSchema } from '../topology';
import { translateAwsError } from './aws-errors';

/** Bounded work per shard per listing call (conventions §8): pages read before answering "more". */
export const listPagesPerShardMax = 8;

/** How long a tombstone is kept so that replicas and late writers still see the delete's version. */
export const tombstoneRetentionSeconds = 7 * 24 * 3600;

export function shardTable(documentClient?: DynamoDBDocumentClient) {
  return new Table({
    // Every call names its shard with `tableName`; this default is never used for I/O.
    name: 'ringstore-shard',
    partitionKey: { name: shardSchema.partitionKey, type: 'string' },
    indexes: {
      [shardSchema.tokenIndex.name]: {
        type: 'global',
        partitionKey: { name: shardSchema.tokenIndex.partitionKey, type: 'number' },
        sortKey: { name: shardSchema.tokenIndex.sortKey, type: 'number' },
      },
      [shardSchema.keyIndex.name]: {
        type: 'global',
        partitionKey: { name: shardSchema.keyIndex.partitionKey, type: 'string' },
        sortKey: { name: shardSchema.keyIndex.sortKey, type: 'string' },
      },
    },
    ...(documentClient ? { documentClient } : {}),
  });
}

export function kvEntity(table: ReturnType<typeof shardTable>) {
  return new Entity({
    name: 'kv',
    table,
    entityAttribute: false,
    timestamps: false,
    schema: item({
      pk: string().key(),
      ns: string(),
      k: string(),
      v: number(),
      tok: number(),
      tb: number(),
      ct: string(),
      size: number(),
      sha: string(),
      tomb: boolean(),
      ttl: number().optional(),
      val: binary().optional(),
      blob: string().optional(),
    }),
  });
}

type KvEntity = ReturnType<typeof kvEntity>;

export function partitionKeyOf(namespace: string, key: string): string {
  return `${namespace}#${key}`;
}

interface RawItem {
  pk: string;
  ns: string;
  k: string;
  v: number;
  tok: number;
  ct: string;
  size: number;
  sha: string;
  tomb: boolean;
  ttl?: number;
  val?: Uint8Array;
  blob?: string;
}

function toStoredItem(raw: RawItem): StoredItem {
  return {
    namespace: raw.ns,
    key: raw.k,
    version: Number(raw.v),
    token: Number(raw.tok),
    contentType: raw.ct,
    size: Number(raw.size),
    sha256: raw.sha,
    tombstone: raw.tomb,
    ...(raw.ttl === undefined ? {} : { expiresAtSeconds: Number(raw.ttl) }),
    ...(raw.val === undefined ? {} : { value: raw.val }),
    ...(raw.blob === undefined ? {} : { blob: { objectKey: raw.blob } }),
  };
}

function liveCondition(nowSeconds: number): Condition<KvEntity> {
  return {
    and: [
      { attr: 'pk', exists: true },
      { attr: 'tomb', eq: false },
      { or: [{ attr: 'ttl', exists: false }, { attr: 'ttl', gt: nowSeconds }] },
    ],
  };
}

function conditionFor(precondition: WritePrecondition, nowSeconds: number): Condition<KvEntity> | undefined {
  switch (precondition.kind) {
    case 'none':
      return undefined;
    case 'live':
      return liveCondition(nowSeconds);
    case 'versionIs':
      return { and: [{ attr: 'v', eq: precondition.version }, liveCondition(nowSeconds)] };
    case 'absent':
      return {
        or: [{ attr: 'pk', exists: false }, { attr: 'tomb', eq: true }, { attr: 'ttl', lte: nowSeconds }],
      };
  }
}

export class DynamoShardStore implements ShardStore {
  private readonly entity: KvEntity;
  private readonly table: ReturnType<typeof shardTable>;

  constructor(documentClient: DynamoDBDocumentClient) {
    this.table = shardTable(documentClient);
    this.entity = kvEntity(this.table);
  }

  async get(tableName: string, namespace: string, key: string, options: { consistent: boolean }): Promise<StoredItem | undefined> {
    try {
      const { Item } = await this.entity
        .build(GetItemCommand)
        .key({ pk: partitionKeyOf(namespace, key) })
        .options({ tableName, consistent: options.consistent })
        .send();
      return Item ? toStoredItem(Item as RawItem) : undefined;
    } catch (error) {
      throw translateAwsError(error, `read of ${key} from ${tableName}`);
    }
  }

  async write(tableName: string, write: ItemWrite): Promise<WriteResult> {
    const { namespace, key, token, content } = write;
    const identity = { pk: partitionKeyOf(namespace, key), ns: namespace, k: key, tok: token, tb: tokenBucket(token) };
    const body = content
      ? {
          ct: content.contentType,
          size: content.size,
          sha: content.sha256,
          tomb: false,
          ttl: content.expiresAtSeconds ?? $remove(),
          val: content.value ?? $remove(),
          blob: content.blob?.objectKey ?? $remove(),
        }
      : { ct: '', size: 0, sha: '', tomb: true, ttl: write.nowSeconds + tombstoneRetentionSeconds, val: $remove(), blob: $remove() };
    const condition = conditionFor(write.precondition, write.nowSeconds);
    try {
      const { Attributes } = await this.entity
        .build(UpdateItemCommand)
        // The owner assigns the version in the same atomic update: ADD starts a new key at 1.
        .item({ ...identity, ...body, v: $add(1) })
        .options({
          tableName,
          returnValues: 'ALL_OLD',
          returnValuesOnConditionFalse: 'ALL_OLD',
          ...(condition ? { condition } : {}),
        })
        .send();
      const previous = Attributes ? toStoredItem(Attributes as RawItem) : undefined;
      return { version: (previous?.version ?? 0) + 1, ...(previous ? { previous } : {}) };
    } catch (error) {
      if (isConditionalCheckFailure(error)) {
        const raw = (error as { Item?: Record<string, unknown> }).Item;
        const current = raw ? toStoredItem(unmarshall(raw as never) as RawItem) : undefined;
        throw new PreconditionFailedError<StoredItem>(`condition failed for ${key}`, current);
      }
      throw translateAwsError(error, `write of ${key} to ${tableName}`);
    }
  }

  async list(tableName: string, query: ListQuery): Promise<ListPage> {
    const { namespace, prefix, afterKey, limit, nowSeconds } = query;
    const items: KeySummary[] = [];
    let startKey: Record<string, unknown> | undefined =
      afterKey === undefined ? undefined : { pk: partitionKeyOf(namespace, afterKey), ns: namespace, k: afterKey };
    try {
      for (let page = 0; page < listPagesPerShardMax; page += 1) {
        const { Items = [], LastEvaluatedKey } = await this.table
          .build(QueryCommand)
          .query({
            index: shardSchema.keyIndex.name,
            partition: namespace,
            ...(prefix ? { range: { beginsWith: prefix } } : {}),
          })
          .options({
            tableName,
            limit: limit - items.length,
            ...(startKey ? { exclusiveStartKey: startKey } : {}),
          })
          .send();
        for (const raw of Items as unknown as RawItem[]) {
          const expired = raw.ttl !== undefined && Number(raw.ttl) <= nowSeconds;
          if (raw.tomb || expired) continue;
          items.push({
            key: raw.k,
            version: Number(raw.v),
            size: Number(raw.size),
            contentType: raw.ct,
            ...(raw.ttl === undefined ? {} : { expiresAtSeconds: Number(raw.ttl) }),
          });
        }
        startKey = LastEvaluatedKey;
        if (!startKey || items.length >= limit) break;
      }
    } catch (error) {
      throw translateAwsError(error, `listing of ${tableName}`);
    }
    const resumeAfter = startKey ? String(startKey[shardSchema.keyIndex.sortKey]) : undefined;
    return resumeAfter === undefined ? { items, more: false } : { items, more: true, resumeAfter };
  }
}

function isConditionalCheckFailure(error: unknown): boolean {
  return (error as { name?: string } | undefined)?.name === 'ConditionalCheckFailedException';
}
