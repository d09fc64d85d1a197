// The failover records of the control table: one item per failover (pk `failover`, sk the request time
// and id, so a query newest first lists the recent ones), its report kept as JSON text.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Entity, PutItemCommand, QueryCommand, item, number, string } from 'dynamodb-toolbox';
import type { FailoverLog, FailoverRecord, FailoverStatus } from '../ports';
import { awsCall } from './aws-errors';
import { controlEntityOptions, controlTable } from './dynamodb-control-table';

const partition = 'failover';
const statuses = ['running', 'notDown', 'notReady', 'completed', 'lost', 'aborted'] as const satisfies readonly FailoverStatus[];

function failoverEntity(tableName: string, documentClient: DynamoDBDocumentClient) {
  return new Entity({
    name: 'failover',
    table: controlTable(tableName, documentClient),
    ...controlEntityOptions,
    schema: item({
      pk: string().key(),
      sk: string().key(),
      id: string(),
      shard: number(),
      reason: string(),
      requestedAtMs: number(),
      action: string().enum('failOver', 'moveBack').optional(),
      status: string().enum(...statuses),
      updatedAtMs: number(),
      report: string().optional(),
    }),
  });
}

/** Sorts by request time: a zero-padded epoch ms, then the id. */
function sortKeyOf(record: Pick<FailoverRecord, 'requestedAtMs' | 'id'>): string {
  return `${String(record.requestedAtMs).padStart(15, '0')}#${record.id}`;
}

export class DynamoFailoverLog implements FailoverLog {
  private readonly records: ReturnType<typeof failoverEntity>;
  private readonly table: ReturnType<typeof controlTable>;

  constructor(documentClient: DynamoDBDocumentClient, tableName: string) {
    this.table = controlTable(tableName, documentClient);
    this.records = failoverEntity(tableName, documentClient);
  }

  async save(record: FailoverRecord): Promise<void> {
    const { report, ...fields } = record;
    await awsCall(`failover record ${record.id}`, () =>
      this.records
        .build(PutItemCommand)
        .item({ pk: partition, sk: sortKeyOf(record), ...fields, ...(report === undefined ? {} : { report: JSON.stringify(report) }) })
        .send(),
    );
  }

  async recent(limit: number): Promise<FailoverRecord[]> {
    const { Items = [] } = await awsCall('failover records read', () =>
      this.table.build(QueryCommand).entities(this.records).query({ partition }).options({ reverse: true, limit, consistent: true }).send(),
    );
    return Items.map(({ pk: _pk, sk: _sk, report, ...fields }) => ({
      ...fields,
      ...(report === undefined ? {} : { report: JSON.parse(report) as unknown }),
    }));
  }
}
