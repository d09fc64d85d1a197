// PendingStore on the backup region's pending table (docs/dr.md): one partition per key (its hash), one
// item per version the backup waits for, so a read's gate is one consistent query.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  DeleteItemCommand,
  Entity,
  type FormattedItem,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  Table,
  UpdateItemCommand,
  boolean,
  item,
  number,
  string,
} from 'dynamodb-toolbox';
import { noticeSortKeyOf } from '../core/dr-messages';
import type { PendingEntry, PendingStore, TransactionWrite } from '../ports';
import { pendingSchema } from '../../schemas/topology';
import { awsCall, conditionalWrite } from './aws-errors';

function pendingTable(name: string, documentClient: DynamoDBDocumentClient) {
  return new Table({ name, partitionKey: pendingSchema.partitionKey, sortKey: pendingSchema.sortKey, documentClient });
}

function pendingEntity(table: ReturnType<typeof pendingTable>) {
  return new Entity({
    name: 'pending',
    table,
    entityAttribute: false,
    timestamps: false,
    schema: item({
      kh: string().key(),
      v: number().key(),
      ns: string(),
      k: string(),
      st: string().enum('pending', 'lost'),
      tx: string().optional(),
      txw: number().optional(),
      wat: number(),
      rat: number(),
      size: number(),
      sha: string(),
      ct: string(),
      del: boolean(),
      exp: number().optional(),
      /** A notice's write id, or the one a key message carried. */
      wid: string().optional(),
    }),
  });
}

/**
 * The writes of one transaction, counted before the backup applies them as a unit: in the same table,
 * partition `tx#<txid>` (a key hash, the entries' partition, is hex: the two never meet), one item per
 * write. The sort key is a number: the first 48 bits of the key hash; two keys of one transaction
 * sharing them (odds about n²/2^49, 2e-9 for 1000 keys) would be counted once and the transaction
 * would wait until the promotion marks it lost, never be applied in part.
 */
function transactionWriteEntity(table: ReturnType<typeof pendingTable>) {
  return new Entity({
    name: 'transactionWrite',
    table,
    entityAttribute: false,
    timestamps: false,
    schema: item({ kh: string().key(), v: number().key(), wkh: string(), wv: number() }),
  });
}

const transactionPartitionOf = (txid: string) => `tx#${txid}`;
const writeSortKeyOf = (keyHash: string) => Number.parseInt(keyHash.slice(0, 12), 16);

/** Entries removed at once by one clear (a key rarely has more than one or two waiting). */
const clearPageSize = 100;

export class DynamoPendingStore implements PendingStore {
  private readonly table: ReturnType<typeof pendingTable>;
  private readonly entries: ReturnType<typeof pendingEntity>;
  private readonly transactionWriteItems: ReturnType<typeof transactionWriteEntity>;

  constructor(documentClient: DynamoDBDocumentClient, tableName: string) {
    this.table = pendingTable(tableName, documentClient);
    this.entries = pendingEntity(this.table);
    this.transactionWriteItems = transactionWriteEntity(this.table);
  }

  async record(entry: PendingEntry): Promise<void> {
    // A second message of this version (a duplicate, or the stream's copy of a key-sync write) finds it.
    await conditionalWrite(`pending entry of ${entry.key}`, () =>
      this.entries
        .build(PutItemCommand)
        .item({
          kh: entry.keyHash,
          v: entry.version,
          ns: entry.namespace,
          k: entry.key,
          st: entry.state,
          ...(entry.txid === undefined ? {} : { tx: entry.txid }),
          ...(entry.txnWrites === undefined ? {} : { txw: entry.txnWrites }),
          wat: entry.writtenAtMs,
          rat: entry.receivedAtMs,
          size: entry.size,
          sha: entry.sha256,
          ct: entry.contentType,
          del: entry.deleted,
          ...(entry.expiresAtSeconds === undefined ? {} : { exp: entry.expiresAtSeconds }),
          ...(entry.writeId === undefined ? {} : { wid: entry.writeId }),
        })
        .options({ condition: { attr: 'kh', exists: false } })
        .send(),
    );
  }

  async find(keyHash: string, version: number): Promise<PendingEntry | undefined> {
    const { Item } = await awsCall('pending entry read', () =>
      this.entries.build(GetItemCommand).key({ kh: keyHash, v: version }).options({ consistent: true }).send(),
    );
    return Item ? entryOf(Item) : undefined;
  }

  async entriesOf(keyHash: string): Promise<PendingEntry[]> {
    const { Items = [] } = await awsCall('pending entries read', () =>
      // Consistent: a read's gate must see every entry recorded before it started.
      this.table.build(QueryCommand).entities(this.entries).query({ partition: keyHash }).options({ consistent: true }).send(),
    );
    return Items.map(entryOf);
  }

  async scan(limit: number, cursor?: string): Promise<{ entries: PendingEntry[]; cursor?: string }> {
    // Entries only: a transaction's writes are counted in partitions of their own (no `st`).
    return this.scanWhere('pending entries scan', { attr: 'st', exists: true }, limit, cursor);
  }

  async scanNotices(limit: number, cursor?: string): Promise<{ entries: PendingEntry[]; cursor?: string }> {
    // A notice's sort key is negative (noticeSortKeyOf); a transaction's count partitions have no `st`.
    return this.scanWhere(
      'write notices scan',
      {
        and: [
          { attr: 'st', eq: 'pending' },
          { attr: 'v', lt: 0 },
        ],
      },
      limit,
      cursor,
    );
  }

  async removeNotice(keyHash: string, writeId: string): Promise<boolean> {
    return conditionalWrite('write notice removal', () =>
      this.entries
        .build(DeleteItemCommand)
        .key({ kh: keyHash, v: noticeSortKeyOf(writeId) })
        // Only while pending: a promotion marking it lost meanwhile wins.
        .options({ condition: { attr: 'st', eq: 'pending' } })
        .send(),
    );
  }

  /** One page of a consistent scan, filtered (DynamoDB applies the limit before the filter). */
  private async scanWhere(
    what: string,
    filter: { attr: 'st'; exists: true } | { attr: 'st'; eq: 'lost' } | { and: [{ attr: 'st'; eq: 'pending' }, { attr: 'v'; lt: number }] },
    limit: number,
    cursor?: string,
  ): Promise<{ entries: PendingEntry[]; cursor?: string }> {
    const exclusiveStartKey = cursor === undefined ? undefined : (JSON.parse(cursor) as Record<string, unknown>);
    const { Items = [], LastEvaluatedKey } = await awsCall(what, () =>
      this.table
        .build(ScanCommand)
        .entities(this.entries)
        .options({ limit, consistent: true, filters: { pending: filter }, ...(exclusiveStartKey ? { exclusiveStartKey } : {}) })
        .send(),
    );
    return { entries: Items.map(entryOf), ...(LastEvaluatedKey ? { cursor: JSON.stringify(LastEvaluatedKey) } : {}) };
  }

  async markLost(entry: Pick<PendingEntry, 'keyHash' | 'version'>): Promise<boolean> {
    return conditionalWrite('pending entry marked lost', () =>
      this.entries
        .build(UpdateItemCommand)
        .item({ kh: entry.keyHash, v: entry.version, st: 'lost' })
        // Only a still-pending entry: one removed meanwhile (its value applied) is not brought back.
        .options({ condition: { attr: 'st', eq: 'pending' } })
        .send(),
    );
  }

  async removeLost(keyHash: string, version: number): Promise<boolean> {
    return conditionalWrite('lost entry removal', () =>
      this.entries
        .build(DeleteItemCommand)
        .key({ kh: keyHash, v: version })
        // Only a lost entry: a pending one belongs to the appliers.
        .options({ condition: { attr: 'st', eq: 'lost' } })
        .send(),
    );
  }

  async scanLost(limit: number, cursor?: string): Promise<{ entries: PendingEntry[]; cursor?: string }> {
    return this.scanWhere('lost entries scan', { attr: 'st', eq: 'lost' }, limit, cursor);
  }

  async recordTransactionWrite(txid: string, write: TransactionWrite): Promise<void> {
    await awsCall('transaction write record', () =>
      this.transactionWriteItems
        .build(PutItemCommand)
        .item({ kh: transactionPartitionOf(txid), v: writeSortKeyOf(write.keyHash), wkh: write.keyHash, wv: write.version })
        .send(),
    );
  }

  async transactionWrites(txid: string): Promise<TransactionWrite[]> {
    const writes: TransactionWrite[] = [];
    let exclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await awsCall('transaction writes read', () =>
        this.table
          .build(QueryCommand)
          .entities(this.transactionWriteItems)
          .query({ partition: transactionPartitionOf(txid) })
          .options({ consistent: true, ...(exclusiveStartKey ? { exclusiveStartKey } : {}) })
          .send(),
      );
      for (const stored of page.Items ?? []) writes.push({ keyHash: stored.wkh, version: stored.wv });
      exclusiveStartKey = page.LastEvaluatedKey;
    } while (exclusiveStartKey);
    return writes;
  }

  async clearTransaction(txid: string): Promise<void> {
    const writes = await this.transactionWrites(txid);
    await Promise.all(
      writes.map((write) =>
        awsCall('transaction write removal', () =>
          this.transactionWriteItems
            .build(DeleteItemCommand)
            .key({ kh: transactionPartitionOf(txid), v: writeSortKeyOf(write.keyHash) })
            .send(),
        ),
      ),
    );
  }

  async clear(keyHash: string, upToVersion: number): Promise<PendingEntry[]> {
    const { Items = [] } = await awsCall('pending entries read', () =>
      this.table
        .build(QueryCommand)
        .entities(this.entries)
        // From version 0: a notice's entry (a negative sort key) stays until its own settling.
        .query({ partition: keyHash, range: { between: [0, upToVersion] } })
        .options({ consistent: true, limit: clearPageSize })
        .send(),
    );
    // A lost entry stays until a newer write supersedes it for reads (the report keeps listing it).
    const applied = Items.filter((entry) => entry.st === 'pending');
    const removed = await Promise.all(
      applied.map((entry) =>
        // Only while still pending: a promotion marking it lost meanwhile wins.
        conditionalWrite('pending entry removal', () =>
          this.entries
            .build(DeleteItemCommand)
            .key({ kh: entry.kh, v: entry.v })
            .options({ condition: { attr: 'st', eq: 'pending' } })
            .send(),
        ),
      ),
    );
    return applied.filter((_, index) => removed[index]).map(entryOf);
  }
}

function entryOf(stored: FormattedItem<ReturnType<typeof pendingEntity>>): PendingEntry {
  return {
    keyHash: stored.kh,
    version: stored.v,
    namespace: stored.ns,
    key: stored.k,
    state: stored.st,
    ...(stored.tx === undefined ? {} : { txid: stored.tx }),
    ...(stored.txw === undefined ? {} : { txnWrites: stored.txw }),
    writtenAtMs: stored.wat,
    receivedAtMs: stored.rat,
    size: stored.size,
    sha256: stored.sha,
    contentType: stored.ct,
    deleted: stored.del,
    ...(stored.exp === undefined ? {} : { expiresAtSeconds: stored.exp }),
    ...(stored.wid === undefined ? {} : { writeId: stored.wid }),
    ...(stored.v < 0 ? { notice: true as const } : {}),
  };
}
