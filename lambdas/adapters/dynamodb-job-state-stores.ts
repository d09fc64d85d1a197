// Where the scheduled jobs resume: the maintenance job's next token range (and its last report, for the
// status page) and the transaction sweeper's deadline watermark, one control-table item each.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Entity, GetItemCommand, PutItemCommand, item, number, string } from 'dynamodb-toolbox';
import type { MaintenanceState, MaintenanceStateStore, SweeperState, SweeperStateStore } from '../ports';
import { awsCall } from './aws-errors';
import { controlEntityOptions, controlTable } from './dynamodb-control-table';

const maintenanceKey = { pk: 'maintenance', sk: 'state' } as const;
const sweeperKey = { pk: 'txnSweeper', sk: 'state' } as const;

function maintenanceEntity(tableName: string, documentClient: DynamoDBDocumentClient) {
  return new Entity({
    name: 'maintenance',
    table: controlTable(tableName, documentClient),
    ...controlEntityOptions,
    // The report is kept as JSON text: it is shown, never queried.
    schema: item({
      pk: string().key(),
      sk: string().key(),
      nextRange: number(),
      antiEntropyAtMs: number().optional(),
      lastReport: string(),
    }),
  });
}

function sweeperEntity(tableName: string, documentClient: DynamoDBDocumentClient) {
  return new Entity({
    name: 'txnSweeper',
    table: controlTable(tableName, documentClient),
    ...controlEntityOptions,
    schema: item({ pk: string().key(), sk: string().key(), sweptUntilMs: number() }),
  });
}

export class DynamoMaintenanceStateStore implements MaintenanceStateStore {
  private readonly state: ReturnType<typeof maintenanceEntity>;

  constructor(documentClient: DynamoDBDocumentClient, tableName: string) {
    this.state = maintenanceEntity(tableName, documentClient);
  }

  async readMaintenanceState(): Promise<MaintenanceState | undefined> {
    const { Item } = await awsCall('maintenance state read', () => this.state.build(GetItemCommand).key(maintenanceKey).send());
    if (!Item) return undefined;
    const { nextRange, antiEntropyAtMs, lastReport } = Item;
    return { nextRange, ...(antiEntropyAtMs === undefined ? {} : { antiEntropyAtMs }), lastReport: JSON.parse(lastReport) as unknown };
  }

  async saveMaintenanceState(state: MaintenanceState): Promise<void> {
    const { nextRange, antiEntropyAtMs, lastReport } = state;
    const stored = {
      ...maintenanceKey,
      nextRange,
      ...(antiEntropyAtMs === undefined ? {} : { antiEntropyAtMs }),
      lastReport: JSON.stringify(lastReport),
    };
    await awsCall('maintenance state write', () => this.state.build(PutItemCommand).item(stored).send());
  }
}

export class DynamoSweeperStateStore implements SweeperStateStore {
  private readonly state: ReturnType<typeof sweeperEntity>;

  constructor(documentClient: DynamoDBDocumentClient, tableName: string) {
    this.state = sweeperEntity(tableName, documentClient);
  }

  async readSweeperState(): Promise<SweeperState | undefined> {
    const { Item } = await awsCall('sweeper state read', () => this.state.build(GetItemCommand).key(sweeperKey).send());
    return Item ? { sweptUntilMs: Item.sweptUntilMs } : undefined;
  }

  async saveSweeperState(state: SweeperState): Promise<void> {
    await awsCall('sweeper state write', () =>
      this.state
        .build(PutItemCommand)
        .item({ ...sweeperKey, ...state })
        .send(),
    );
  }
}
