// The control table as dynamodb-toolbox sees it: one table, one partition per record kind. Each record
// kind has its own adapter (ring, API keys, shard health, namespace settings, job state) on this table.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Table } from 'dynamodb-toolbox';
import { controlSchema } from '../../schemas/topology';

export function controlTable(name: string, documentClient: DynamoDBDocumentClient) {
  return new Table({ name, partitionKey: controlSchema.partitionKey, sortKey: controlSchema.sortKey, documentClient });
}

export type ControlTable = ReturnType<typeof controlTable>;

/** What every control-table entity shares: typed keys, no entity attribute or timestamps of the library's. */
export const controlEntityOptions = { entityAttribute: false, timestamps: false } as const;
