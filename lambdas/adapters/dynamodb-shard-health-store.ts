// Shard health records in the control table: one item per shard that was ever marked, with conditional
// transitions (available -> unavailable -> recovering -> available) so racing writers agree.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type Condition, Entity, PutItemCommand, QueryCommand, item, number, string } from 'dynamodb-toolbox';
import type { ShardHealth, ShardHealthStatus, ShardHealthStore } from '../ports';
import { awsCall, conditionalWrite } from './aws-errors';
import { controlEntityOptions, controlTable } from './dynamodb-control-table';

const healthPartition = 'shardHealth';

/** Longest reason kept with an unavailable mark: an SDK message can be long, the status page needs a line. */
const reasonCharsMax = 500;

function healthEntity(tableName: string, documentClient: DynamoDBDocumentClient) {
  return new Entity({
    name: 'shardHealth',
    table: controlTable(tableName, documentClient),
    ...controlEntityOptions,
    schema: item({
      pk: string().key(),
      sk: string().key(),
      status: string().enum('available', 'unavailable', 'recovering'),
      sinceMs: number(),
      reason: string().optional(),
    }),
  });
}

type HealthEntity = ReturnType<typeof healthEntity>;

type StatusCondition = { attr: 'status'; eq: ShardHealthStatus } | { attr: 'status'; ne: ShardHealthStatus };

export class DynamoShardHealthStore implements ShardHealthStore {
  private readonly records: HealthEntity;

  constructor(documentClient: DynamoDBDocumentClient, tableName: string) {
    this.records = healthEntity(tableName, documentClient);
  }

  async all(): Promise<Map<string, ShardHealth>> {
    const { Items = [] } = await awsCall('shard health read', () =>
      this.records.table
        .build(QueryCommand)
        .entities(this.records)
        .query({ partition: healthPartition })
        .options({ consistent: true })
        .send(),
    );
    return new Map(
      Items.map((stored) => [
        stored.sk,
        { table: stored.sk, status: stored.status, sinceMs: stored.sinceMs, ...(stored.reason ? { reason: stored.reason } : {}) },
      ]),
    );
  }

  async markUnavailable(table: string, reason: string, nowMs: number): Promise<void> {
    // Only a change of status is written, so a burst of failed writes costs one control-table write.
    await this.transition(
      table,
      { status: 'unavailable', sinceMs: nowMs, reason: reason.slice(0, reasonCharsMax) },
      {
        attr: 'status',
        ne: 'unavailable',
      },
    );
  }

  beginRecovery(table: string, nowMs: number): Promise<boolean> {
    return this.transition(table, { status: 'recovering', sinceMs: nowMs }, { attr: 'status', eq: 'unavailable' });
  }

  completeRecovery(table: string, nowMs: number): Promise<boolean> {
    return this.transition(table, { status: 'available', sinceMs: nowMs }, { attr: 'status', eq: 'recovering' });
  }

  private transition(table: string, next: Omit<ShardHealth, 'table'>, condition: StatusCondition): Promise<boolean> {
    // A shard without a record is available: `ne` conditions also hold for a missing record.
    const guard: Condition<HealthEntity> = 'ne' in condition ? { or: [{ attr: 'pk', exists: false }, condition] } : condition;
    return conditionalWrite(`shard health update of ${table}`, () =>
      this.records
        .build(PutItemCommand)
        .item({ pk: healthPartition, sk: table, ...next })
        .options({ condition: guard })
        .send(),
    );
  }
}
