// Creates the tables and bucket of one stage on the local engines, from the same topology CDK deploys.
// Idempotent: what exists is left as it is, so data survives restarts.
import {
  type CreateTableCommandInput,
  CreateTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  ListTablesCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, HeadBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { controlSchema, hintsSchema, type Names, shardSchema, txnSchema } from '../../schemas/topology';

type GlobalSecondaryIndexInput = NonNullable<CreateTableCommandInput['GlobalSecondaryIndexes']>[number];

/** A global index keyed (HASH, RANGE) on two attributes, as topology describes it. */
function globalIndexInput(
  index: { name: string; partitionKey: string; sortKey: string },
  projection: GlobalSecondaryIndexInput['Projection'],
): GlobalSecondaryIndexInput {
  return {
    IndexName: index.name,
    KeySchema: [
      { AttributeName: index.partitionKey, KeyType: 'HASH' },
      { AttributeName: index.sortKey, KeyType: 'RANGE' },
    ],
    Projection: projection,
  };
}

export function shardTableInput(tableName: string): CreateTableCommandInput {
  const { tokenIndex, keyIndex } = shardSchema;
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: shardSchema.partitionKey, AttributeType: 'S' },
      { AttributeName: tokenIndex.partitionKey, AttributeType: 'N' },
      { AttributeName: tokenIndex.sortKey, AttributeType: 'N' },
      { AttributeName: keyIndex.partitionKey, AttributeType: 'S' },
      { AttributeName: keyIndex.sortKey, AttributeType: 'S' },
    ],
    KeySchema: [{ AttributeName: shardSchema.partitionKey, KeyType: 'HASH' }],
    GlobalSecondaryIndexes: [tokenIndex, keyIndex].map((index) =>
      globalIndexInput(index, { ProjectionType: index.projection, NonKeyAttributes: [...index.nonKeyAttributes] }),
    ),
    StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
  };
}

/** A table keyed by two strings and nothing else: the control table and the hints table. */
function stringKeyPairTableInput(tableName: string, keys: { partitionKey: string; sortKey: string }): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: keys.partitionKey, AttributeType: 'S' },
      { AttributeName: keys.sortKey, AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: keys.partitionKey, KeyType: 'HASH' },
      { AttributeName: keys.sortKey, KeyType: 'RANGE' },
    ],
  };
}

export function controlTableInput(tableName: string): CreateTableCommandInput {
  return stringKeyPairTableInput(tableName, controlSchema);
}

export function hintsTableInput(tableName: string): CreateTableCommandInput {
  return stringKeyPairTableInput(tableName, hintsSchema);
}

export function txnTableInput(tableName: string): CreateTableCommandInput {
  const { deadlineIndex } = txnSchema;
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: txnSchema.partitionKey, AttributeType: 'S' },
      { AttributeName: deadlineIndex.partitionKey, AttributeType: 'N' },
      { AttributeName: deadlineIndex.sortKey, AttributeType: 'N' },
    ],
    KeySchema: [{ AttributeName: txnSchema.partitionKey, KeyType: 'HASH' }],
    GlobalSecondaryIndexes: [globalIndexInput(deadlineIndex, { ProjectionType: 'ALL' })],
  };
}

async function existingTables(dynamodb: DynamoDBClient): Promise<Set<string>> {
  const names = new Set<string>();
  let start: string | undefined;
  do {
    const page = await dynamodb.send(new ListTablesCommand({ ExclusiveStartTableName: start }));
    for (const name of page.TableNames ?? []) names.add(name);
    start = page.LastEvaluatedTableName;
  } while (start);
  return names;
}

async function enableTtl(dynamodb: DynamoDBClient, tableName: string): Promise<void> {
  const current = await dynamodb.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
  if (current.TimeToLiveDescription?.TimeToLiveStatus === 'ENABLED') return;
  await dynamodb.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { Enabled: true, AttributeName: shardSchema.ttlAttribute },
    }),
  );
}

/** Creates what is missing; returns the names of what it created. */
export async function provision(options: {
  dynamodb: DynamoDBClient;
  s3: S3Client;
  names: Names;
  shardCount: number;
}): Promise<string[]> {
  const { dynamodb, s3, names, shardCount } = options;
  const created: string[] = [];
  const existing = await existingTables(dynamodb);
  const wanted = [
    controlTableInput(names.controlTable),
    hintsTableInput(names.hintsTable),
    txnTableInput(names.txnTable),
    ...Array.from({ length: shardCount }, (_, id) => shardTableInput(names.shardTable(id))),
  ];
  for (const input of wanted) {
    if (existing.has(input.TableName!)) continue;
    await dynamodb.send(new CreateTableCommand(input));
    created.push(input.TableName!);
  }
  await Promise.all(Array.from({ length: shardCount }, (_, id) => enableTtl(dynamodb, names.shardTable(id))));
  try {
    await s3.send(new HeadBucketCommand({ Bucket: names.blobBucket }));
  } catch {
    await s3.send(new CreateBucketCommand({ Bucket: names.blobBucket }));
    created.push(names.blobBucket);
  }
  return created;
}
