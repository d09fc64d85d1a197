// TxnRecordStore on the transaction table. The decision is one conditional update (pending -> decided);
// the `byDeadline` index, partitioned by the deadline's minute, is the recovery sweeper's walk.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  Entity,
  type FormattedItem,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  Table,
  UpdateItemCommand,
  item,
  list,
  map,
  number,
  string,
} from 'dynamodb-toolbox';
import type { TxnRecord, TxnRecordStore, TxnStatus } from '../ports';
import { txnLimits, txnSchema } from '../../schemas/topology';
import { awsCall, isConditionalCheckFailure, translateAwsError } from './aws-errors';

const minuteMs = 60_000;

function txnTable(name: string, documentClient: DynamoDBDocumentClient) {
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
    documentClient,
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
      db: number(),
      keys: list(map({ table: string(), namespace: string(), key: string(), kind: string().enum('put', 'delete') })),
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
    ...(stored.reason ? { reason: stored.reason } : {}),
    ...(stored.conflictKey ? { conflictKey: stored.conflictKey } : {}),
  };
}

export class DynamoTxnRecordStore implements TxnRecordStore {
  private readonly table: ReturnType<typeof txnTable>;
  private readonly records: RecordEntity;

  constructor(documentClient: DynamoDBDocumentClient, tableName: string) {
    this.table = txnTable(tableName, documentClient);
    this.records = recordEntity(this.table);
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
          db: Math.floor(record.deadlineMs / minuteMs),
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
    details: { reason?: string; conflictKey?: string } = {},
  ): Promise<TxnRecord | undefined> {
    try {
      const { Attributes } = await this.records
        .build(UpdateItemCommand)
        .item({
          txid,
          status,
          ...(details.reason ? { reason: details.reason } : {}),
          ...(details.conflictKey ? { conflictKey: details.conflictKey } : {}),
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
    const found: TxnRecord[] = [];
    for (let bucket = Math.floor(fromMs / minuteMs); bucket <= Math.floor((toMs - 1) / minuteMs) && found.length < limit; bucket += 1) {
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await awsCall('transactions due', () =>
          this.table
            .build(QueryCommand)
            .entities(this.records)
            .query({ index: txnSchema.deadlineIndex.name, partition: bucket, range: { between: [fromMs, toMs - 1] } })
            .options({ limit: limit - found.length, ...(startKey ? { exclusiveStartKey: startKey } : {}) })
            .send(),
        );
        found.push(...(page.Items ?? []).map(toRecord));
        startKey = page.LastEvaluatedKey;
      } while (startKey && found.length < limit);
    }
    return found;
  }
}
