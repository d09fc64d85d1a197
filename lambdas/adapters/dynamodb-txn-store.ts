// TxnRecordStore on the transaction table. The decision is one conditional update (pending -> decided);
// the `byDeadline` index (keys only, partitioned by the deadline's minute and a bucket of the txid) is
// the recovery sweeper's walk.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { createHash } from 'node:crypto';
import { tokenOf } from '../core/ring';
import {
  $set,
  Entity,
  EntityFormatter,
  type FormattedItem,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  Table,
  UpdateItemCommand,
  binary,
  item,
  list,
  map,
  number,
  string,
} from 'dynamodb-toolbox';
import type { TxnCommittedWrite, TxnRecord, TxnRecordStore, TxnStatus } from '../ports';
import { txnLimits, txnSchema } from '../../schemas/topology';
import { awsCall, isConditionalCheckFailure, translateAwsError } from './aws-errors';
import { batchGetItems } from './dynamodb-batch-get';

const minuteMs = 60_000;

/** The deadline index partition: the deadline's minute and the record's bucket. */
function deadlinePartitionOf(minute: number, bucket: number): string {
  return `${minute}#${bucket}`;
}

/** A txid's bucket (FNV-1a of its characters): any txid spreads, whatever its format. */
export function deadlineBucketOf(txid: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < txid.length; index += 1) hash = Math.imul(hash ^ txid.charCodeAt(index), 0x01000193) >>> 0;
  return hash % txnSchema.deadlineIndex.buckets;
}

interface DueEntry {
  txid: string;
  deadlineMs: number;
}

const byDeadline = (a: DueEntry, b: DueEntry) => a.deadlineMs - b.deadlineMs || (a.txid < b.txid ? -1 : a.txid > b.txid ? 1 : 0);

/** The transaction table; with no client, only for formatting items. */
function txnTable(name: string, documentClient?: DynamoDBDocumentClient) {
  return new Table({
    name,
    partitionKey: txnSchema.partitionKey,
    indexes: {
      [txnSchema.deadlineIndex.name]: {
        type: 'global',
        partitionKey: txnSchema.deadlineIndex.partitionKey,
        sortKey: txnSchema.deadlineIndex.sortKey,
      },
    },
    ...(documentClient ? { documentClient } : {}),
  });
}

function recordEntity(table: ReturnType<typeof txnTable>) {
  return new Entity({
    name: 'txn',
    table,
    entityAttribute: false,
    timestamps: false,
    schema: item({
      txid: string().key(),
      status: string().enum('pending', 'committed', 'aborted'),
      createdAtMs: number(),
      dl: number(),
      db: string(),
      keys: list(map({ table: string(), namespace: string(), key: string(), kind: string().enum('put', 'delete') })),
      // A commit's writes, compact (the record's write units grow with its size): the namespace comes from
      // `keys`, the token and hash are computed again, a delete carries neither type nor value.
      writes: list(
        map({ k: string(), v: number(), op: string().enum('put', 'delete'), ct: string().optional(), val: binary().optional() }),
      ).optional(),
      reason: string().optional(),
      conflictKey: string().optional(),
      ttl: number(),
    }),
  });
}

type RecordEntity = ReturnType<typeof recordEntity>;

function toRecord(stored: FormattedItem<RecordEntity>): TxnRecord {
  return {
    txid: stored.txid,
    status: stored.status,
    createdAtMs: stored.createdAtMs,
    deadlineMs: stored.dl,
    keys: stored.keys,
    ...(stored.writes ? { writes: stored.writes.map((write) => committedWriteOf(write, stored.keys)) } : {}),
    ...(stored.reason ? { reason: stored.reason } : {}),
    ...(stored.conflictKey ? { conflictKey: stored.conflictKey } : {}),
  };
}

type StoredWrite = NonNullable<FormattedItem<RecordEntity>['writes']>[number];

function storedWriteOf(write: TxnCommittedWrite): StoredWrite {
  if (write.kind === 'delete') return { k: write.key, v: write.version, op: 'delete' };
  return { k: write.key, v: write.version, op: 'put', ct: write.contentType, val: write.value ?? new Uint8Array(0) };
}

function committedWriteOf(write: StoredWrite, keys: ReadonlyArray<{ namespace: string; key: string }>): TxnCommittedWrite {
  // One namespace per transaction: every key of its record carries it.
  const namespace = (keys.find((ref) => ref.key === write.k) ?? keys[0])?.namespace ?? '';
  const base = { namespace, key: write.k, token: tokenOf(namespace, write.k), version: write.v };
  if (write.op === 'delete') return { ...base, kind: 'delete', contentType: '', size: 0, sha256: '' };
  const value = write.val ?? new Uint8Array(0);
  return {
    ...base,
    kind: 'put',
    contentType: write.ct ?? '',
    size: value.byteLength,
    sha256: createHash('sha256').update(value).digest('hex'),
    value,
  };
}

const recordFormatter = recordEntity(txnTable('ringstore-txn')).build(EntityFormatter);

/** A record as the transaction table's stream carries it (DynamoDB's wire format), checked against the entity. */
export function txnRecordOfImage(image: Record<string, AttributeValue>): TxnRecord {
  return toRecord(recordFormatter.format(unmarshall(image)));
}

export class DynamoTxnRecordStore implements TxnRecordStore {
  private readonly table: ReturnType<typeof txnTable>;
  private readonly records: RecordEntity;

  // Checks what the keys-only index and the batch read return, as an entity read would.
  private readonly formatter: EntityFormatter<RecordEntity>;

  constructor(
    private readonly documentClient: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.table = txnTable(tableName, documentClient);
    this.records = recordEntity(this.table);
    this.formatter = this.records.build(EntityFormatter);
  }

  async begin(record: TxnRecord): Promise<void> {
    await awsCall(`record of ${record.txid}`, () =>
      this.records
        .build(PutItemCommand)
        .item({
          txid: record.txid,
          status: record.status,
          createdAtMs: record.createdAtMs,
          dl: record.deadlineMs,
          db: deadlinePartitionOf(Math.floor(record.deadlineMs / minuteMs), deadlineBucketOf(record.txid)),
          keys: record.keys,
          // Kept a day after the deadline, then removed by TTL: an intent left without a record is
          // presumed committed, and by then every intent has long been applied or cleared.
          ttl: Math.ceil(record.deadlineMs / 1000) + txnLimits.recordRetentionSeconds,
        })
        .options({ condition: { attr: 'txid', exists: false } })
        .send(),
    );
  }

  async find(txid: string): Promise<TxnRecord | undefined> {
    const { Item } = await awsCall(`record of ${txid}`, () =>
      this.records.build(GetItemCommand).key({ txid }).options({ consistent: true }).send(),
    );
    return Item ? toRecord(Item) : undefined;
  }

  async decide(
    txid: string,
    status: Exclude<TxnStatus, 'pending'>,
    details: { reason?: string; conflictKey?: string; writes?: TxnCommittedWrite[] } = {},
  ): Promise<TxnRecord | undefined> {
    try {
      const { Attributes } = await this.records
        .build(UpdateItemCommand)
        .item({
          txid,
          status,
          ...(details.reason ? { reason: details.reason } : {}),
          ...(details.conflictKey ? { conflictKey: details.conflictKey } : {}),
          // $set: a plain array would update the list element by element (and fail on a record without one).
          ...(details.writes?.length ? { writes: $set(details.writes.map(storedWriteOf)) } : {}),
        })
        .options({ condition: { attr: 'status', eq: 'pending' }, returnValues: 'ALL_NEW' })
        .send();
      return Attributes ? toRecord(Attributes) : undefined;
    } catch (error) {
      // Decided already (by the coordinator, an older transaction or the sweeper), or never begun.
      if (isConditionalCheckFailure(error)) return this.find(txid);
      throw translateAwsError(error, `decision of ${txid}`);
    }
  }

  async dueBetween(fromMs: number, toMs: number, limit: number): Promise<TxnRecord[]> {
    const due: DueEntry[] = [];
    // Minute by minute, oldest first; within a minute, every bucket's first `limit` entries merged by
    // deadline, so the first `limit` of the minute are exact whichever buckets they came from.
    for (let minute = Math.floor(fromMs / minuteMs); minute <= Math.floor((toMs - 1) / minuteMs) && due.length < limit; minute += 1) {
      const wanted = limit - due.length;
      const buckets = Array.from({ length: txnSchema.deadlineIndex.buckets }, (_, bucket) => bucket);
      const perBucket = await Promise.all(
        buckets.map((bucket) => this.dueInPartition(deadlinePartitionOf(minute, bucket), fromMs, toMs, wanted)),
      );
      due.push(...perBucket.flat().sort(byDeadline).slice(0, wanted));
    }
    if (due.length === 0) return [];
    // The index holds keys only: the records themselves, read consistently (a decision is never missed).
    const items = await batchGetItems(
      this.documentClient,
      due.map(({ txid }) => ({ table: this.tableName, key: { txid } })),
      { consistent: true, what: `${due.length} transactions due` },
    );
    const records = new Map(items.map(({ item: stored }) => [stored.txid, toRecord(this.formatter.format(stored))]));
    // A record gone between the index read and the table read expired by TTL: nothing left to sweep.
    return due.flatMap(({ txid }) => records.get(txid) ?? []);
  }

  private async dueInPartition(partition: string, fromMs: number, toMs: number, limit: number): Promise<DueEntry[]> {
    const entries: DueEntry[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await awsCall('transactions due', () =>
        this.table
          .build(QueryCommand)
          .query({ index: txnSchema.deadlineIndex.name, partition, range: { between: [fromMs, toMs - 1] } })
          .options({ limit: limit - entries.length, ...(startKey ? { exclusiveStartKey: startKey } : {}) })
          .send(),
      );
      for (const projected of page.Items ?? []) {
        const { txid, dl } = this.formatter.format(projected, { attributes: ['txid', 'dl'] });
        entries.push({ txid, deadlineMs: dl });
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey && entries.length < limit);
    return entries;
  }
}
