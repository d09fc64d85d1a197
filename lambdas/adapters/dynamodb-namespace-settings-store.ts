// Per-namespace settings in the control table (the default consistency of reads and writes, the DR mode,
// the request rate and the storage quota).
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Entity, GetItemCommand, PutItemCommand, item, map, number, string } from 'dynamodb-toolbox';
import type { NamespaceSettings, NamespaceSettingsStore } from '../ports';
import { awsCall } from './aws-errors';
import { controlEntityOptions, controlTable } from './dynamodb-control-table';

const namespacePartition = 'namespace';

function namespaceEntity(tableName: string, documentClient: DynamoDBDocumentClient) {
  return new Entity({
    name: 'namespaceSettings',
    table: controlTable(tableName, documentClient),
    ...controlEntityOptions,
    schema: item({
      pk: string().key(),
      sk: string().key(),
      readConsistency: string().enum('eventual', 'strong'),
      writeConsistency: string().enum('eventual', 'strong'),
      drMode: string().enum('key-sync', 'async').optional(),
      rate: map({ requestsPerSecond: number(), burst: number() }).optional(),
      storage: map({ keysMax: number().optional(), bytesMax: number().optional() }).optional(),
    }),
  });
}

export class DynamoNamespaceSettingsStore implements NamespaceSettingsStore {
  private readonly namespaces: ReturnType<typeof namespaceEntity>;

  constructor(documentClient: DynamoDBDocumentClient, tableName: string) {
    this.namespaces = namespaceEntity(tableName, documentClient);
  }

  async settingsOf(namespace: string): Promise<NamespaceSettings | undefined> {
    const { Item } = await awsCall('namespace settings read', () =>
      this.namespaces.build(GetItemCommand).key({ pk: namespacePartition, sk: namespace }).send(),
    );
    if (!Item) return undefined;
    const { readConsistency, writeConsistency, drMode, rate, storage } = Item;
    return {
      namespace,
      readConsistency,
      writeConsistency,
      ...(drMode ? { drMode } : {}),
      ...(rate ? { rate } : {}),
      ...(storage ? { storage } : {}),
    };
  }

  async saveSettings(settings: NamespaceSettings): Promise<void> {
    const { namespace, readConsistency, writeConsistency, drMode, rate, storage } = settings;
    await awsCall('namespace settings write', () =>
      this.namespaces
        .build(PutItemCommand)
        .item({
          pk: namespacePartition,
          sk: namespace,
          readConsistency,
          writeConsistency,
          ...(drMode ? { drMode } : {}),
          ...(rate ? { rate } : {}),
          ...(storage ? { storage } : {}),
        })
        .send(),
    );
  }
}
