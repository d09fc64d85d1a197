// The storage usage of each namespace with a storage quota: one counter item per namespace in the control
// table, changed only in the same transaction as the owner's write it counts (dynamodb-shard-store.ts).
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { DeleteItemCommand, Entity, GetItemCommand, PutItemCommand, item, number, string } from 'dynamodb-toolbox';
import { usageCounterPartitionPrefix } from '../../schemas/topology';
import type { NamespaceUsageStore, StorageCharge, StorageUsage } from '../ports';
import { awsCall } from './aws-errors';
import { controlEntityOptions, controlTable } from './dynamodb-control-table';

/**
 * A partition per namespace: every counted write of the namespace updates this one item, so it is the
 * namespace's write ceiling with a storage quota (about 500 writes a second: a transactional write costs
 * two units of the item's partition's 1,000), and must not share it with other namespaces.
 */
const usageKeyOf = (namespace: string) => ({ pk: `${usageCounterPartitionPrefix}${namespace}`, sk: 'usage' });

function usageEntity(tableName: string, documentClient: DynamoDBDocumentClient) {
  return new Entity({
    name: 'namespaceUsage',
    table: controlTable(tableName, documentClient),
    ...controlEntityOptions,
    schema: item({ pk: string().key(), sk: string().key(), keys: number(), bytes: number() }),
  });
}

/**
 * The counter's change as one TransactWriteItems entry (document client form): keys and bytes added,
 * only while each bound the change grows stays held. A charge that shrinks or keeps a count is never
 * refused by it, so a namespace over its quota (lowered by an admin) can always delete.
 */
export function usageChargeUpdate(tableName: string, namespace: string, charge: StorageCharge) {
  const { keysDelta, bytesDelta, quota } = charge;
  const conditions: string[] = [];
  const values: Record<string, number> = { ':keys': keysDelta, ':bytes': bytesDelta };
  if (keysDelta > 0 && quota.keysMax !== undefined) {
    conditions.push('(attribute_not_exists(#keys) OR #keys <= :keysLeft)');
    values[':keysLeft'] = quota.keysMax - keysDelta;
  }
  if (bytesDelta > 0 && quota.bytesMax !== undefined) {
    conditions.push('(attribute_not_exists(#bytes) OR #bytes <= :bytesLeft)');
    values[':bytesLeft'] = quota.bytesMax - bytesDelta;
  }
  return {
    TableName: tableName,
    Key: usageKeyOf(namespace),
    UpdateExpression: 'ADD #keys :keys, #bytes :bytes',
    ...(conditions.length === 0 ? {} : { ConditionExpression: conditions.join(' AND ') }),
    ExpressionAttributeNames: { '#keys': 'keys', '#bytes': 'bytes' },
    ExpressionAttributeValues: values,
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
}

/** Which bound a refused charge hit, from the counter as it stood (DynamoDB's wire format). */
export function exceededBoundOf(counter: Record<string, AttributeValue> | undefined, charge: StorageCharge): 'keys' | 'bytes' {
  const keys = Number(counter ? (unmarshall(counter).keys ?? 0) : 0);
  const { keysMax } = charge.quota;
  return charge.keysDelta > 0 && keysMax !== undefined && keys + charge.keysDelta > keysMax ? 'keys' : 'bytes';
}

export class DynamoNamespaceUsageStore implements NamespaceUsageStore {
  private readonly counters: ReturnType<typeof usageEntity>;

  constructor(documentClient: DynamoDBDocumentClient, tableName: string) {
    this.counters = usageEntity(tableName, documentClient);
  }

  async usageOf(namespace: string): Promise<StorageUsage | undefined> {
    const { Item } = await awsCall('namespace usage read', () =>
      this.counters.build(GetItemCommand).key(usageKeyOf(namespace)).options({ consistent: true }).send(),
    );
    return Item ? { keys: Item.keys, bytes: Item.bytes } : undefined;
  }

  async seed(namespace: string, usage: StorageUsage): Promise<void> {
    await awsCall('namespace usage seed', () =>
      this.counters
        .build(PutItemCommand)
        .item({ ...usageKeyOf(namespace), ...usage })
        .send(),
    );
  }

  async remove(namespace: string): Promise<void> {
    await awsCall('namespace usage removal', () => this.counters.build(DeleteItemCommand).key(usageKeyOf(namespace)).send());
  }
}
