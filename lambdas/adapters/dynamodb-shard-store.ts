// ShardStore on DynamoDB: one entity definition (dynamodb-toolbox), routed to a shard by `tableName`.
import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import {
  type Condition,
  $add,
  $get,
  $remove,
  Entity,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  Table,
  UpdateItemCommand,
  binary,
  boolean,
  item,
  number,
  string,
} from 'dynamodb-toolbox';
import { IntentConflictError, PreconditionFailedError, RingstoreError, invariant } from '../core/errors';
import { tombstoneRetentionSeconds } from '../core/item';
import { tokenBucket, tokenSpace } from '../core/ring';
import type {
  IntentPlacement,
  ItemWrite,
  KeyRef,
  ListPage,
  ListQuery,
  ShardStore,
  VersionEntry,
  WritePrecondition,
  WriteResult,
  Intent,
  KeySummary,
  StoredItem,
} from '../ports';
import { limits, shardSchema } from '../../schemas/topology';
import { translateAwsError } from './aws-errors';

/** Bounded work per shard per listing call: pages read before answering "more". */
export const listPagesPerShardMax = 8;

/** Index pages read per token bucket by one anti-entropy comparison: a bound, so a runaway scan fails loudly. */
export const rangePagesPerBucketMax = 1_000;

export function shardTable(documentClient?: DynamoDBDocumentClient) {
  return new Table({
    // Every call names its shard with `tableName`; this default is never used for I/O.
    name: 'ringstore-shard',
    partitionKey: shardSchema.partitionKey,
    indexes: {
      [shardSchema.tokenIndex.name]: {
        type: 'global',
        partitionKey: shardSchema.tokenIndex.partitionKey,
        sortKey: shardSchema.tokenIndex.sortKey,
      },
      [shardSchema.keyIndex.name]: {
        type: 'global',
        partitionKey: shardSchema.keyIndex.partitionKey,
        sortKey: shardSchema.keyIndex.sortKey,
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
    schema: item({ pk: string().key(), tb: number(), ...storedItemAttributes(), ...intentAttributes() }),
  });
}

/** A transaction's intent, kept beside the committed content on the owner's item (never replicated). */
function intentAttributes() {
  return {
    itx: string().optional(),
    iop: string().enum('put', 'delete').optional(),
    ict: string().optional(),
    isize: number().optional(),
    isha: string().optional(),
    ival: binary().optional(),
    its: number().optional(),
  };
}

const noIntent = { itx: $remove(), iop: $remove(), ict: $remove(), isize: $remove(), isha: $remove(), ival: $remove(), its: $remove() };

/** The attributes of a stored item; the hints table keeps whole items with the same ones. */
export function storedItemAttributes() {
  return {
    ns: string(),
    k: string(),
    v: number(),
    tok: number(),
    ct: string(),
    size: number(),
    sha: string(),
    tomb: boolean(),
    ttl: number().optional(),
    val: binary().optional(),
    blob: string().optional(),
    mt: number().optional(),
  };
}

type KvEntity = ReturnType<typeof kvEntity>;

export function partitionKeyOf(namespace: string, key: string): string {
  return `${namespace}#${key}`;
}

export interface RawItem {
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
  mt?: number;
  itx?: string;
  iop?: 'put' | 'delete';
  ict?: string;
  isize?: number;
  isha?: string;
  ival?: Uint8Array;
  its?: number;
}

export function toStoredItem(raw: RawItem): StoredItem {
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
    ...(raw.mt === undefined ? {} : { modifiedAtMs: Number(raw.mt) }),
    ...(raw.itx === undefined ? {} : { intent: intentOf(raw) }),
  };
}

function intentOf(raw: RawItem): Intent {
  return {
    txid: raw.itx!,
    kind: raw.iop ?? 'put',
    contentType: raw.ict ?? '',
    size: Number(raw.isize ?? 0),
    sha256: raw.isha ?? '',
    ...(raw.ival === undefined ? {} : { value: raw.ival }),
    placedAtMs: Number(raw.its ?? 0),
  };
}

/** The table attributes of an item (the inverse of toStoredItem). */
export function toRawItem(item: StoredItem): RawItem {
  return {
    pk: partitionKeyOf(item.namespace, item.key),
    ns: item.namespace,
    k: item.key,
    v: item.version,
    tok: item.token,
    ct: item.contentType,
    size: item.size,
    sha: item.sha256,
    tomb: item.tombstone,
    ...(item.expiresAtSeconds === undefined ? {} : { ttl: item.expiresAtSeconds }),
    ...(item.value === undefined ? {} : { val: item.value }),
    ...(item.blob === undefined ? {} : { blob: item.blob.objectKey }),
    ...(item.modifiedAtMs === undefined ? {} : { mt: item.modifiedAtMs }),
  };
}

function liveCondition(nowSeconds: number): Condition<KvEntity> {
  return {
    and: [
      { attr: 'pk', exists: true },
      { attr: 'tomb', eq: false },
      {
        or: [
          { attr: 'ttl', exists: false },
          { attr: 'ttl', gt: nowSeconds },
        ],
      },
    ],
  };
}

function absentCondition(nowSeconds: number): Condition<KvEntity> {
  return {
    or: [
      { attr: 'pk', exists: false },
      { attr: 'tomb', eq: true },
      { attr: 'ttl', lte: nowSeconds },
    ],
  };
}

/** `v IN (…)`: DynamoDB refuses an empty list and one over 100 operands; the core bounds it far below. */
function versionsOperand(versions: readonly number[]): Condition<KvEntity> {
  invariant(
    versions.length >= 1 && versions.length <= limits.entityTagsMax,
    `a version list has 1 to ${limits.entityTagsMax} entries (got ${versions.length})`,
  );
  return { attr: 'v', in: [...versions] };
}

export function conditionFor(precondition: WritePrecondition, nowSeconds: number): Condition<KvEntity> | undefined {
  switch (precondition.kind) {
    case 'none':
      return undefined;
    case 'live': {
      const except = precondition.exceptVersions ?? [];
      return except.length === 0 ? liveCondition(nowSeconds) : { and: [liveCondition(nowSeconds), { not: versionsOperand(except) }] };
    }
    case 'versionIn':
      return { and: [versionsOperand(precondition.versions), liveCondition(nowSeconds)] };
    case 'absent':
      return absentCondition(nowSeconds);
    case 'versionNotIn':
      // Not live, or live at another version: `NOT v IN (…)` alone covers the live case, since live is not absent.
      return { or: [absentCondition(nowSeconds), { not: versionsOperand(precondition.versions) }] };
  }
}

/** DynamoDB's bound on keys per BatchGetItem request. */
const batchGetKeysMax = 100;
/** Requests per batch of keys before unprocessed keys (throttling) count as an outage. */
const batchGetAttemptsMax = 5;

export class DynamoShardStore implements ShardStore {
  private readonly entity: KvEntity;
  private readonly table: ReturnType<typeof shardTable>;

  constructor(private readonly documentClient: DynamoDBDocumentClient) {
    this.table = shardTable(documentClient);
    this.entity = kvEntity(this.table);
  }

  // BatchGetItem through lib-dynamodb rather than dynamodb-toolbox: toolbox batches are built per Table
  // instance, while one request here spans several shard tables routed by name. Only the key and the
  // intent's two attributes are read (a projection: no value crosses the wire).
  async intentsOf(keys: readonly KeyRef[]): Promise<Array<Pick<Intent, 'txid' | 'kind'> | undefined>> {
    const found = new Map<string, Pick<Intent, 'txid' | 'kind'>>();
    const idOf = (table: string, pk: string) => `${table}\u0000${pk}`;
    for (let start = 0; start < keys.length; start += batchGetKeysMax) {
      let pending: Record<string, { Keys: Array<Record<string, unknown>> }> = {};
      for (const { table, namespace, key } of keys.slice(start, start + batchGetKeysMax)) {
        const keysOfTable = (pending[table] ??= { Keys: [] }).Keys;
        const pk = partitionKeyOf(namespace, key);
        // BatchGetItem refuses a key twice in one request.
        if (!keysOfTable.some((existing) => existing.pk === pk)) keysOfTable.push({ pk });
      }
      for (let attempt = 0; Object.keys(pending).length > 0; attempt += 1) {
        if (attempt >= batchGetAttemptsMax) {
          throw new RingstoreError('shard.unavailable', `intents of ${keys.length} keys: keys left unprocessed after ${attempt} attempts`, {
            retryable: true,
          });
        }
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 2 ** attempt * 10));
        const requestItems = Object.fromEntries(
          Object.entries(pending).map(([table, { Keys }]) => [
            table,
            {
              Keys,
              ConsistentRead: true,
              ProjectionExpression: '#pk, #itx, #iop',
              ExpressionAttributeNames: { '#pk': 'pk', '#itx': 'itx', '#iop': 'iop' },
            },
          ]),
        );
        try {
          const { Responses = {}, UnprocessedKeys = {} } = await this.documentClient.send(
            new BatchGetCommand({ RequestItems: requestItems }),
          );
          for (const [table, items] of Object.entries(Responses)) {
            for (const item of items)
              if (item.itx !== undefined)
                found.set(idOf(table, item.pk as string), {
                  txid: item.itx as string,
                  kind: (item.iop as Intent['kind'] | undefined) ?? 'put',
                });
          }
          pending = Object.fromEntries(Object.entries(UnprocessedKeys).map(([table, { Keys = [] }]) => [table, { Keys }]));
        } catch (error) {
          throw translateAwsError(error, `intents of ${keys.length} keys`);
        }
      }
    }
    return keys.map(({ table, namespace, key }) => found.get(idOf(table, partitionKeyOf(namespace, key))));
  }

  async get(tableName: string, namespace: string, key: string, options: { consistent: boolean }): Promise<StoredItem | undefined> {
    try {
      const { Item } = await this.entity
        .build(GetItemCommand)
        .key({ pk: partitionKeyOf(namespace, key) })
        .options({ tableName, consistent: options.consistent })
        .send();
      return Item ? toStoredItem(Item) : undefined;
    } catch (error) {
      throw translateAwsError(error, `read of ${key} from ${tableName}`);
    }
  }

  async write(tableName: string, write: ItemWrite): Promise<WriteResult> {
    const { namespace, key, token, content } = write;
    const identity = {
      pk: partitionKeyOf(namespace, key),
      ns: namespace,
      k: key,
      tok: token,
      tb: tokenBucket(token),
      mt: write.modifiedAtMs,
    };
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
    const precondition = conditionFor(write.precondition, write.nowSeconds);
    // A key locked by a transaction's intent takes no plain write until the intent is resolved.
    const unlocked: Condition<KvEntity> = { attr: 'itx', exists: false };
    try {
      const { Attributes } = await this.entity
        .build(UpdateItemCommand)
        // The owner assigns the version in the same atomic update: ADD starts a new key at 1.
        .item({ ...identity, ...body, v: $add(1) })
        .options({
          tableName,
          returnValues: 'ALL_OLD',
          returnValuesOnConditionFalse: 'ALL_OLD',
          condition: precondition ? { and: [unlocked, precondition] } : unlocked,
        })
        .send();
      const previous = Attributes ? toStoredItem(Attributes) : undefined;
      return { version: (previous?.version ?? 0) + 1, ...(previous ? { previous } : {}) };
    } catch (error) {
      throw conditionFailure(error, key, `write of ${key} to ${tableName}`);
    }
  }

  async placeIntent(tableName: string, input: IntentPlacement): Promise<StoredItem | undefined> {
    const { namespace, key, token, intent } = input;
    const expectation = expectationOf(input);
    try {
      const { Attributes } = await this.entity
        .build(UpdateItemCommand)
        .item({
          pk: partitionKeyOf(namespace, key),
          ns: namespace,
          k: key,
          tok: token,
          tb: tokenBucket(token),
          // A key that does not exist yet gets a version-0 tombstone to hold the intent.
          v: $get('v', 0),
          tomb: $get('tomb', true),
          ct: $get('ct', ''),
          size: $get('size', 0),
          sha: $get('sha', ''),
          itx: intent.txid,
          iop: intent.kind,
          ict: intent.contentType,
          isize: intent.size,
          isha: intent.sha256,
          ival: intent.value ?? $remove(),
          its: intent.placedAtMs,
        })
        .options({
          tableName,
          returnValues: 'ALL_OLD',
          returnValuesOnConditionFalse: 'ALL_OLD',
          condition: {
            and: [
              {
                or: [
                  { attr: 'itx', exists: false },
                  { attr: 'itx', eq: intent.txid },
                ],
              },
              ...(expectation ? [expectation] : []),
            ],
          },
        })
        .send();
      return Attributes ? toStoredItem(Attributes) : undefined;
    } catch (error) {
      throw conditionFailure(error, key, `intent on ${key} in ${tableName}`, intent.txid);
    }
  }

  async applyIntent(
    tableName: string,
    input: { namespace: string; key: string; txid: string; kind: Intent['kind']; nowSeconds: number; modifiedAtMs: number },
  ): Promise<StoredItem | undefined> {
    const content =
      input.kind === 'put'
        ? {
            ct: $get('ict', ''),
            size: $get('isize', 0),
            sha: $get('isha', ''),
            val: $get('ival', new Uint8Array(0)),
            tomb: false,
            ttl: $remove(),
          }
        : { ct: '', size: 0, sha: '', tomb: true, ttl: input.nowSeconds + tombstoneRetentionSeconds, val: $remove() };
    try {
      const { Attributes } = await this.entity
        .build(UpdateItemCommand)
        .item({
          pk: partitionKeyOf(input.namespace, input.key),
          ...content,
          blob: $remove(),
          mt: input.modifiedAtMs,
          v: $add(1),
          ...noIntent,
        })
        .options({ tableName, returnValues: 'ALL_NEW', condition: { attr: 'itx', eq: input.txid } })
        .send();
      return Attributes ? toStoredItem(Attributes) : undefined;
    } catch (error) {
      if (isConditionalCheckFailure(error)) return undefined;
      throw translateAwsError(error, `commit of ${input.key} in ${tableName}`);
    }
  }

  async clearIntent(tableName: string, input: { namespace: string; key: string; txid: string }): Promise<boolean> {
    try {
      await this.entity
        .build(UpdateItemCommand)
        .item({ pk: partitionKeyOf(input.namespace, input.key), ...noIntent })
        .options({ tableName, condition: { attr: 'itx', eq: input.txid } })
        .send();
      return true;
    } catch (error) {
      if (isConditionalCheckFailure(error)) return false;
      throw translateAwsError(error, `abort of ${input.key} in ${tableName}`);
    }
  }

  async applyReplica(tableName: string, item: StoredItem, options: { nowSeconds: number }): Promise<boolean> {
    try {
      await this.entity
        .build(PutItemCommand)
        .item({ ...toRawItem(item), tb: tokenBucket(item.token) })
        .options({
          tableName,
          // Strictly newer only; an expired item (TTL passed, DynamoDB has not removed it yet) counts as
          // absent, so a key rewritten after its expiry replicates even though its version restarted.
          condition: {
            or: [
              { attr: 'pk', exists: false },
              { attr: 'v', lt: item.version },
              { attr: 'ttl', lte: options.nowSeconds },
            ],
          },
        })
        .send();
      return true;
    } catch (error) {
      if (isConditionalCheckFailure(error)) return false;
      throw translateAwsError(error, `replica write of ${item.key} to ${tableName}`);
    }
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
    try {
      for (const [low, high] of spans) {
        if (low > high) continue;
        for (let bucket = tokenBucket(low); bucket <= tokenBucket(high); bucket += 1) {
          let startKey: Record<string, unknown> | undefined;
          let pages = 0;
          do {
            const { Items = [], LastEvaluatedKey } = await this.table
              .build(QueryCommand)
              .query({ index: shardSchema.tokenIndex.name, partition: bucket, range: { between: [low, high] } })
              .options({ tableName, ...(startKey ? { exclusiveStartKey: startKey } : {}) })
              .send();
            for (const raw of Items as unknown as Pick<RawItem, 'pk' | 'tok' | 'v' | 'tomb'>[]) {
              const separator = raw.pk.indexOf('#');
              entries.push({
                namespace: raw.pk.slice(0, separator),
                key: raw.pk.slice(separator + 1),
                token: Number(raw.tok),
                version: Number(raw.v),
                tombstone: Boolean(raw.tomb),
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
    } catch (error) {
      throw translateAwsError(error, `token range scan of ${tableName}`);
    }
    return entries;
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
    const resumeAfter = startKey ? String(startKey[shardSchema.keyIndex.sortKey.name]) : undefined;
    return resumeAfter === undefined ? { items, more: false } : { items, more: true, resumeAfter };
  }
}

/** What a placement expects of the key's committed content, as a condition. */
function expectationOf(input: IntentPlacement): Condition<KvEntity> | undefined {
  if (input.expectVersion === 0) return conditionFor({ kind: 'absent' }, input.nowSeconds);
  if (input.expectVersion !== undefined) return conditionFor({ kind: 'versionIn', versions: [input.expectVersion] }, input.nowSeconds);
  return input.mustBeLive ? conditionFor({ kind: 'live' }, input.nowSeconds) : undefined;
}

/** A failed condition: a transaction's intent is in the way, or the write's own condition did not hold. */
function conditionFailure(error: unknown, key: string, what: string, ownTxid?: string): RingstoreError {
  if (!isConditionalCheckFailure(error)) return translateAwsError(error, what);
  const raw = (error as { Item?: Record<string, unknown> }).Item;
  const current = raw ? toStoredItem(unmarshall(raw as never) as RawItem) : undefined;
  if (current?.intent && current.intent.txid !== ownTxid) {
    return new IntentConflictError<StoredItem>(`key ${key} is locked by transaction ${current.intent.txid}`, current);
  }
  return new PreconditionFailedError<StoredItem>(`condition failed for ${key}`, current);
}

function isConditionalCheckFailure(error: unknown): boolean {
  return (error as { name?: string } | undefined)?.name === 'ConditionalCheckFailedException';
}
