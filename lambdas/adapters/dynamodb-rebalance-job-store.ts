// The rebalance's job record in the control table (docs/rebalancing.md): one item, the current (or last)
// rebalance, saved revision by revision so that a save from a stale read is refused.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Entity, GetItemCommand, PutItemCommand, item, number, string } from 'dynamodb-toolbox';
import type { RebalanceJob, RebalanceJobStore } from '../ports';
import { awsCall, conditionalWrite } from './aws-errors';
import { controlEntityOptions, controlTable } from './dynamodb-control-table';

const jobKey = { pk: 'rebalance', sk: 'current' } as const;

function jobEntity(tableName: string, documentClient: DynamoDBDocumentClient) {
  return new Entity({
    name: 'rebalance',
    table: controlTable(tableName, documentClient),
    ...controlEntityOptions,
    // The job is kept as JSON text: it is shown and resumed from, never queried. Its ranges (a few hundred
    // at most: the vnodes that change hands) stay far below the item size limit.
    schema: item({ pk: string().key(), sk: string().key(), revision: number(), job: string() }),
  });
}

export class DynamoRebalanceJobStore implements RebalanceJobStore {
  private readonly jobs: ReturnType<typeof jobEntity>;

  constructor(documentClient: DynamoDBDocumentClient, tableName: string) {
    this.jobs = jobEntity(tableName, documentClient);
  }

  async current(): Promise<RebalanceJob | undefined> {
    const { Item } = await awsCall('rebalance job read', () =>
      this.jobs.build(GetItemCommand).key(jobKey).options({ consistent: true }).send(),
    );
    return Item ? (JSON.parse(Item.job) as RebalanceJob) : undefined;
  }

  async save(job: RebalanceJob): Promise<boolean> {
    return conditionalWrite(`rebalance job write at revision ${job.revision}`, () =>
      this.jobs
        .build(PutItemCommand)
        .item({ ...jobKey, revision: job.revision, job: JSON.stringify(job) })
        .options({
          condition: job.revision === 1 ? { attr: 'pk', exists: false } : { attr: 'revision', eq: job.revision - 1 },
        })
        .send(),
    );
  }
}
