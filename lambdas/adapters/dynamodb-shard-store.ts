// ShardStore on DynamoDB: the `kv` entity of the item codec, routed to a shard by `tableName`. Its indexes are
// dynamodb-shard-indexes.ts, its write conditions and owner attributes dynamodb-shard-conditions.ts.
import type { CancellationReason } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  type Condition,
  $add,
  $get,
  $remove,
  $sum,
  ConditionCheck,
  DeleteItemCommand,
  EntityFormatter,
  GetTransaction,
  PutItemCommand,
  UpdateItemCommand,
  UpdateTransaction,
  executeTransactGet,
  executeTransactWrite,
} from 'dynamodb-toolbox';
import { RingstoreError, invariant } from '../core/errors';
import { tombstoneRetentionSeconds } from '../core/item';
import { storageQuotaExceeded } from '../core/quotas';
import { exceededBoundOf, usageChargeUpdate } from './dynamodb-namespace-usage-store';
import { tokenBucket, tokenOf } from '../core/ring';
import type {
  HeldVersion,
  AtomicWrite,
  AtomicWriteResult,
  IntentPlacement,
  IntentPlacementOutcome,
  ItemWrite,
  ItemWriteOutcome,
  KeyRef,
  ListPage,
  ListQuery,
  ShardStore,
  StorageCharge,
  VersionEntry,
  Intent,
  StoredItem,
} from '../ports';
import { txnLimits } from '../../schemas/topology';
import { awsCall, conditionalWrite, isConditionalCheckFailure, translateAwsError } from './aws-errors';
import { batchGetItems } from './dynamodb-batch-get';
import {
  type KvEntity,
  type ShardTable,
  type StoredAttributes,
  kvEntity,
  listingPartitionOf,
  noIntent,
  partitionKeyOf,
  shardTable,
  toCopiedAttributes,
  toStoredItem,
} from './dynamodb-item-codec';
import { ownerWriteParams } from './dynamodb-owner-write';
import {
  conditionFor,
  expectationOf,
  failedCondition,
  failedConditionOf,
  idempotencyTokenOf,
  ownerContent,
  ownerItemIdentity,
} from './dynamodb-shard-conditions';
import { DynamoShardIndexes } from './dynamodb-shard-indexes';

export class DynamoShardStore implements ShardStore {
  private readonly entity: KvEntity;
  private readonly table: ShardTable;
  // Checks and types what a read returns outside an entity command: projected items of a batch read or an
  // index. Index queries are sent without `.entities()` and formatted here against the index's projection,
  // because with the `attributes` option dynamodb-toolbox (2.10) adds its entity attribute `_et` to the
  // ProjectionExpression, and DynamoDB refuses a query naming an attribute a global index does not project.
  private readonly formatter: EntityFormatter<KvEntity>;
  private readonly indexes: DynamoShardIndexes;

  /** `usageTable`: the control table, where writes counted against a storage quota change their namespace's usage. */
  constructor(
    private readonly documentClient: DynamoDBDocumentClient,
    private readonly usageTable?: string,
  ) {
    this.table = shardTable(documentClient);
    this.entity = kvEntity(this.table);
    this.formatter = this.entity.build(EntityFormatter);
    this.indexes = new DynamoShardIndexes(this.table, this.entity, this.formatter);
  }

  // Only the key and the intent's two attributes are read (a projection: no value crosses the wire).
  async intentsOf(keys: readonly KeyRef[]): Promise<Array<Pick<Intent, 'txid' | 'kind'> | undefined>> {
    const found = new Map<string, Pick<Intent, 'txid' | 'kind'>>();
    const idOf = (table: string, pk: string) => `${table}\u0000${pk}`;
    const requests = keys.map(({ table, namespace, key }) => ({ table, key: { pk: partitionKeyOf(namespace, key) } }));
    const items = await batchGetItems(this.documentClient, requests, {
      attributes: ['pk', 'itx', 'iop'],
      consistent: true,
      what: `intents of ${keys.length} keys`,
    });
    for (const { table, item: projected } of items) {
      const { pk, itx, iop } = this.formatter.format(projected, { attributes: ['pk', 'itx', 'iop'] });
      if (itx !== undefined) found.set(idOf(table, pk), { txid: itx, kind: iop ?? 'put' });
    }
    return keys.map(({ table, namespace, key }) => found.get(idOf(table, partitionKeyOf(namespace, key))));
  }

  async getMany(
    tableName: string,
    namespace: string,
    keys: readonly string[],
    options: { atomic: boolean },
  ): Promise<Map<string, StoredItem>> {
    const found = new Map<string, StoredItem>();
    if (keys.length === 0) return found;
    if (options.atomic) {
      invariant(keys.length <= txnLimits.atomicKeysMax, `an atomic read takes at most ${txnLimits.atomicKeysMax} keys`);
      const { Responses = [] } = await awsCall(`atomic read of ${keys.length} keys from ${tableName}`, () =>
        executeTransactGet(
          ...keys.map((key) =>
            this.entity
              .build(GetTransaction)
              .key({ pk: partitionKeyOf(namespace, key) })
              .options({ tableName }),
          ),
        ),
      );
      for (const response of Responses) if (response.Item) found.set(response.Item.k, toStoredItem(response.Item));
      return found;
    }
    const items = await batchGetItems(
      this.documentClient,
      keys.map((key) => ({ table: tableName, key: { pk: partitionKeyOf(namespace, key) } })),
      { consistent: true, what: `read of ${keys.length} keys from ${tableName}` },
    );
    for (const { item: raw } of items) {
      const item = toStoredItem(this.formatter.format(raw));
      found.set(item.key, item);
    }
    return found;
  }

  async writeAtomically(tableName: string, input: AtomicWrite): Promise<AtomicWriteResult> {
    const { namespace, entries } = input;
    invariant(entries.length >= 1 && entries.length <= txnLimits.atomicKeysMax, `an atomic write has 1 to ${txnLimits.atomicKeysMax} keys`);
    const transactions = entries.map((entry) => {
      const pk = partitionKeyOf(namespace, entry.key);
      // As read: no item at all, or this stored version with no intent on it.
      const asRead: Condition<KvEntity> =
        entry.seenVersion === undefined
          ? { attr: 'pk', exists: false }
          : {
              and: [
                { attr: 'v', eq: entry.seenVersion },
                { attr: 'itx', exists: false },
              ],
            };
      if (!entry.write) return this.entity.build(ConditionCheck).key({ pk }).condition(asRead).options({ tableName });
      const { write } = entry;
      const content =
        write.kind === 'put'
          ? { contentType: write.contentType, size: write.size, sha256: write.sha256, value: write.value ?? new Uint8Array(0) }
          : undefined;
      return this.entity
        .build(UpdateTransaction)
        .item({
          ...ownerItemIdentity(namespace, entry.key, entry.token, input.modifiedAtMs),
          ...ownerContent(namespace, entry.token, content, input.nowSeconds),
          v: (entry.seenVersion ?? 0) + 1,
          ...(input.writtenBy ? { wtx: input.writtenBy.txid, wtv: (entry.seenVersion ?? 0) + 1, wtn: input.writtenBy.writes } : {}),
        })
        .options({ tableName, condition: asRead });
    });
    try {
      await executeTransactWrite(
        // A retry of a request whose answer was lost is a no-op for ten minutes, not a second write.
        { clientRequestToken: idempotencyTokenOf(input.idempotencyToken) },
        ...transactions,
      );
      return { committed: true };
    } catch (error) {
      if ((error as { name?: string }).name !== 'TransactionCanceledException') {
        throw translateAwsError(error, `atomic write of ${entries.length} keys to ${tableName}`);
      }
      // Nothing was written; the first key whose condition failed (or that another transaction held) is named.
      const reasons = (error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons ?? [];
      const index = reasons.findIndex((reason) => reason.Code !== undefined && reason.Code !== 'None');
      const key = index >= 0 ? entries[index]?.key : undefined;
      return key === undefined ? { committed: false } : { committed: false, key };
    }
  }

  async get(tableName: string, namespace: string, key: string, options: { consistent: boolean }): Promise<StoredItem | undefined> {
    // Every GET's one DynamoDB request, sent with the document client alone: dynamodb-toolbox's command builder
    // and formatter would add a third to the SDK's own CPU per call (bench/results/history.md, "KV overhead"). The item's attribute
    // names are the entity's own (no savedAs), so the unmarshalled item is its format.
    const { Item } = await awsCall(`read of ${key} from ${tableName}`, () =>
      this.documentClient.send(
        new GetCommand({ TableName: tableName, Key: { pk: partitionKeyOf(namespace, key) }, ConsistentRead: options.consistent }),
      ),
    );
    return Item ? toStoredItem(Item as StoredAttributes) : undefined;
  }

  async heldVersion(tableName: string, namespace: string, key: string): Promise<HeldVersion | undefined> {
    const { Item } = await awsCall(`version of ${key} in ${tableName}`, () =>
      this.documentClient.send(
        new GetCommand({
          TableName: tableName,
          Key: { pk: partitionKeyOf(namespace, key) },
          ConsistentRead: true,
          ProjectionExpression: '#v, cpv, mt',
          ExpressionAttributeNames: { '#v': 'v' },
        }),
      ),
    );
    if (!Item || typeof Item.v !== 'number') return undefined;
    const held = Item as { v: number; cpv?: number; mt?: number };
    return {
      version: held.v,
      ...(held.cpv === undefined ? {} : { copiedVersion: held.cpv }),
      ...(held.mt === undefined ? {} : { modifiedAtMs: held.mt }),
    };
  }

  async write(tableName: string, write: ItemWrite, charge?: StorageCharge): Promise<ItemWriteOutcome> {
    const { key } = write;
    const precondition = conditionFor(write.precondition, write.nowSeconds);
    // A key locked by a transaction's intent takes no plain write until the intent is resolved.
    const unlocked: Condition<KvEntity> = { attr: 'itx', exists: false };
    if (charge) return this.writeCharged(tableName, write, charge, precondition ? { and: [unlocked, precondition] } : unlocked);
    try {
      // Sent with the document client alone, as the GET is: see dynamodb-owner-write.
      const { Attributes } = await this.documentClient.send(
        new UpdateCommand(ownerWriteParams(tableName, write, precondition ? { and: [unlocked, precondition] } : unlocked)),
      );
      const previous = Attributes ? toStoredItem(Attributes as StoredAttributes) : undefined;
      return { outcome: 'written', version: (previous?.version ?? 0) + 1, ...(previous ? { previous } : {}) };
    } catch (error) {
      return failedConditionOf(error, `write of ${key} to ${tableName}`);
    }
  }

  /**
   * The owner's write and its namespace's usage change in one TransactWriteItems: both or neither, so the
   * counter is exact whatever the number of concurrent writers (docs/security.md, "Quotas"). The item must
   * still be at the version the charge was computed from; a transaction cannot return the old item, so the
   * new version is that one's successor and the previous item is the caller's read.
   */
  private async writeCharged(
    tableName: string,
    write: ItemWrite,
    charge: StorageCharge,
    condition: Condition<KvEntity>,
  ): Promise<ItemWriteOutcome> {
    invariant(this.usageTable !== undefined, 'a write counted against a storage quota needs the control table');
    const asRead: Condition<KvEntity> =
      charge.expectVersion === undefined ? { attr: 'pk', exists: false } : { attr: 'v', eq: charge.expectVersion };
    const { ReturnValues: _returnValues, ...owner } = ownerWriteParams(tableName, write, { and: [asRead, condition] });
    // The namespace whose usage the charge changes: the write's own, or the one a rule names (a volume's record).
    const chargedNamespace = charge.namespace ?? write.namespace;
    try {
      await this.documentClient.send(
        new TransactWriteCommand({
          TransactItems: [
            { Update: { ...owner, UpdateExpression: owner.UpdateExpression!, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } },
            { Update: usageChargeUpdate(this.usageTable, chargedNamespace, charge) },
          ],
        }),
      );
      return { outcome: 'written', version: (charge.expectVersion ?? 0) + 1 };
    } catch (error) {
      if ((error as { name?: string }).name !== 'TransactionCanceledException') {
        throw translateAwsError(error, `counted write of ${write.key} to ${tableName}`);
      }
      const reasons = (error as { CancellationReasons?: CancellationReason[] }).CancellationReasons ?? [];
      const [ownerReason, usageReason] = reasons;
      if (ownerReason?.Code === 'ConditionalCheckFailed') return failedCondition(ownerReason.Item);
      if (usageReason?.Code === 'ConditionalCheckFailed') {
        throw storageQuotaExceeded(chargedNamespace, exceededBoundOf(usageReason.Item, charge), charge.quota);
      }
      // Another transaction on the item or the counter at the same time (TransactionConflict): the caller reads again.
      throw new RingstoreError('txn.conflict', `counted write of ${write.key} met a concurrent write; retry`, {
        retryable: true,
        cause: error,
        details: { key: write.key },
      });
    }
  }

  async placeIntent(tableName: string, input: IntentPlacement): Promise<IntentPlacementOutcome> {
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
          iwn: intent.writes ?? $remove(),
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
      return Attributes ? { outcome: 'placed', previous: toStoredItem(Attributes) } : { outcome: 'placed' };
    } catch (error) {
      return failedConditionOf(error, `intent on ${key} in ${tableName}`, intent.txid);
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
            lp: listingPartitionOf(input.namespace, tokenOf(input.namespace, input.key)),
          }
        : { ct: '', size: 0, sha: '', tomb: true, ttl: input.nowSeconds + tombstoneRetentionSeconds, val: $remove(), lp: $remove() };
    try {
      const { Attributes } = await this.entity
        .build(UpdateItemCommand)
        .item({
          pk: partitionKeyOf(input.namespace, input.key),
          ...content,
          blob: $remove(),
          mt: input.modifiedAtMs,
          v: $add(1),
          // The writer of the version this makes (v + 1: the right side reads the item as it was).
          wtx: input.txid,
          wtv: $sum($get('v', 0), 1),
          wtn: $get('iwn', 1),
          ...noIntent,
        })
        .options({ tableName, returnValues: 'ALL_NEW', condition: { attr: 'itx', eq: input.txid } })
        .send();
      return Attributes ? toStoredItem(Attributes) : undefined;
    } catch (error) {
      // The key holds no intent of this transaction: applied already, or cleared.
      if (isConditionalCheckFailure(error)) return undefined;
      throw translateAwsError(error, `commit of ${input.key} in ${tableName}`);
    }
  }

  async clearIntent(tableName: string, input: { namespace: string; key: string; txid: string }): Promise<boolean> {
    return conditionalWrite(`abort of ${input.key} in ${tableName}`, () =>
      this.entity
        .build(UpdateItemCommand)
        .item({ pk: partitionKeyOf(input.namespace, input.key), ...noIntent })
        .options({ tableName, condition: { attr: 'itx', eq: input.txid } })
        .send(),
    );
  }

  async applyReplica(
    tableName: string,
    item: StoredItem,
    options: { nowSeconds: number; listed: boolean; ownerWrite?: boolean },
  ): Promise<boolean> {
    const listing = options.listed && !item.tombstone ? { lp: listingPartitionOf(item.namespace, item.token) } : {};
    const { cpv, ...uncopied } = toCopiedAttributes(item);
    // An owner write keeps its transaction writer, as applying the intent would have recorded it, and its write id.
    const writer = {
      ...(item.writtenBy ? { wtx: item.writtenBy.txid, wtv: item.version, wtn: item.writtenBy.writes } : {}),
      ...(item.writeId === undefined ? {} : { wid: item.writeId }),
    };
    const attributes = options.ownerWrite ? { ...uncopied, ...writer } : { ...uncopied, cpv };
    return conditionalWrite(`replica write of ${item.key} to ${tableName}`, () =>
      this.entity
        .build(PutItemCommand)
        .item({ pk: partitionKeyOf(item.namespace, item.key), tb: tokenBucket(item.token), ...listing, ...attributes })
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
        .send(),
    );
  }

  async resetCopy(
    tableName: string,
    ref: { namespace: string; key: string; expectVersion: number },
    item: StoredItem | undefined,
  ): Promise<boolean> {
    const pk = partitionKeyOf(ref.namespace, ref.key);
    const condition = { attr: 'v', eq: ref.expectVersion } as const;
    if (!item) {
      return conditionalWrite(`removal of ${ref.key} from ${tableName}`, () =>
        this.entity.build(DeleteItemCommand).key({ pk }).options({ tableName, condition }).send(),
      );
    }
    return conditionalWrite(`reset of ${ref.key} on ${tableName}`, () =>
      this.entity
        .build(PutItemCommand)
        .item({ pk, tb: tokenBucket(item.token), ...toCopiedAttributes(item) })
        .options({ tableName, condition })
        .send(),
    );
  }

  listAsOwner(tableName: string, entries: readonly VersionEntry[]): Promise<number> {
    return this.indexes.listAsOwner(tableName, entries);
  }

  versionsInRange(tableName: string, range: { start: number; end: number }): Promise<VersionEntry[]> {
    return this.indexes.versionsInRange(tableName, range);
  }

  list(tableName: string, query: ListQuery): Promise<ListPage> {
    return this.indexes.list(tableName, query);
  }
}
