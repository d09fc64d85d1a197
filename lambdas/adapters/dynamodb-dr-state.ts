// The backup region's DR records in its control table (docs/dr.md): the DR state (one item, fenced by its
// epoch), which the primary also reads as its lease to acknowledge writes, and the promotions' reports;
// and the primary's initial-sync progress in its own control table.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Entity, GetItemCommand, PutItemCommand, QueryCommand, item, number, string } from 'dynamodb-toolbox';
import type { DrState, DrStateStore, DrSyncState, DrSyncStateStore, PromotionLog, PromotionReport } from '../ports';
import { awsCall, conditionalWrite } from './aws-errors';
import { controlEntityOptions, controlTable } from './dynamodb-control-table';
import { drControlPartitions } from '../../schemas/topology';

const stateKey = { pk: drControlPartitions.state, sk: 'state' } as const;
const promotionPartition = drControlPartitions.promotions;

function stateEntity(tableName: string, documentClient: DynamoDBDocumentClient) {
  return new Entity({
    name: 'drState',
    table: controlTable(tableName, documentClient),
    ...controlEntityOptions,
    schema: item({
      pk: string().key(),
      sk: string().key(),
      state: string().enum('backup', 'promoting', 'promoted'),
      epoch: number(),
      updatedAtMs: number(),
      promotionId: string().optional(),
      fencedAtMs: number().optional(),
      promotedAtMs: number().optional(),
    }),
  });
}

export class DynamoDrStateStore implements DrStateStore {
  private readonly states: ReturnType<typeof stateEntity>;

  constructor(documentClient: DynamoDBDocumentClient, tableName: string) {
    this.states = stateEntity(tableName, documentClient);
  }

  async read(): Promise<DrState | undefined> {
    const { Item } = await awsCall('DR state read', () =>
      this.states.build(GetItemCommand).key(stateKey).options({ consistent: true }).send(),
    );
    if (!Item) return undefined;
    const { pk: _pk, sk: _sk, ...state } = Item;
    return state;
  }

  async save(next: DrState, expectEpoch: number): Promise<boolean> {
    return conditionalWrite(`DR state ${next.state} at epoch ${next.epoch}`, () =>
      this.states
        .build(PutItemCommand)
        .item({ ...stateKey, ...next })
        // Epoch 0 is the state never written: only its absence matches it.
        .options({ condition: expectEpoch === 0 ? { attr: 'pk', exists: false } : { attr: 'epoch', eq: expectEpoch } })
        .send(),
    );
  }
}

function promotionEntity(tableName: string, documentClient: DynamoDBDocumentClient) {
  return new Entity({
    name: 'drPromotion',
    table: controlTable(tableName, documentClient),
    ...controlEntityOptions,
    schema: item({ pk: string().key(), sk: string().key(), id: string(), report: string() }),
  });
}

/** One item per promotion, sorted by its start; the report kept as JSON text (the lost keys' list is bounded). */
export class DynamoPromotionLog implements PromotionLog {
  private readonly table: ReturnType<typeof controlTable>;
  private readonly promotions: ReturnType<typeof promotionEntity>;

  constructor(documentClient: DynamoDBDocumentClient, tableName: string) {
    this.table = controlTable(tableName, documentClient);
    this.promotions = promotionEntity(tableName, documentClient);
  }

  async save(report: PromotionReport): Promise<void> {
    const sk = `${String(report.startedAtMs).padStart(15, '0')}#${report.id}`;
    await awsCall(`promotion report ${report.id}`, () =>
      this.promotions
        .build(PutItemCommand)
        .item({ pk: promotionPartition, sk, id: report.id, report: JSON.stringify(report) })
        .send(),
    );
  }

  async latest(): Promise<PromotionReport | undefined> {
    const { Items = [] } = await awsCall('promotion report read', () =>
      this.table
        .build(QueryCommand)
        .entities(this.promotions)
        .query({ partition: promotionPartition })
        .options({ reverse: true, limit: 1, consistent: true })
        .send(),
    );
    const [newest] = Items;
    return newest ? (JSON.parse(newest.report) as PromotionReport) : undefined;
  }
}

const syncKey = { pk: drControlPartitions.state, sk: 'sync' } as const;

function syncEntity(tableName: string, documentClient: DynamoDBDocumentClient) {
  return new Entity({
    name: 'drSync',
    table: controlTable(tableName, documentClient),
    ...controlEntityOptions,
    schema: item({
      pk: string().key(),
      sk: string().key(),
      status: string().enum('running', 'completed'),
      nextRange: number(),
      ranges: number(),
      keys: number(),
      startedAtMs: number(),
      updatedAtMs: number(),
    }),
  });
}

/** The primary's initial sync: one control-table item, rewritten after every slice of ranges. */
export class DynamoDrSyncStateStore implements DrSyncStateStore {
  private readonly state: ReturnType<typeof syncEntity>;

  constructor(documentClient: DynamoDBDocumentClient, tableName: string) {
    this.state = syncEntity(tableName, documentClient);
  }

  async readSync(): Promise<DrSyncState | undefined> {
    const { Item } = await awsCall('DR sync state read', () =>
      this.state.build(GetItemCommand).key(syncKey).options({ consistent: true }).send(),
    );
    if (!Item) return undefined;
    const { pk: _pk, sk: _sk, ...state } = Item;
    return state;
  }

  async saveSync(state: DrSyncState): Promise<void> {
    await awsCall('DR sync state write', () =>
      this.state
        .build(PutItemCommand)
        .item({ ...syncKey, ...state })
        .send(),
    );
  }
}
