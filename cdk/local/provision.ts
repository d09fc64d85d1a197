// Creates the tables and bucket of one stage on the local engines, from the same topology CDK deploys.
// Idempotent: what exists is left as it is, so data survives restarts.
import {
  type CreateTableCommandInput,
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  UpdateTableCommand,
  type DynamoDBClient,
  ListTablesCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, HeadBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  controlSchema,
  feedSchema,
  hintsSchema,
  type KeyAttribute,
  type Names,
  pendingSchema,
  shardSchema,
  txnSchema,
} from '../../schemas/topology';

type GlobalSecondaryIndexInput = NonNullable<CreateTableCommandInput['GlobalSecondaryIndexes']>[number];
type AttributeDefinition = NonNullable<CreateTableCommandInput['AttributeDefinitions']>[number];

/** DynamoDB's wire name for each of the topology's key attribute types. */
const attributeTypes = { string: 'S', number: 'N', binary: 'B' } as const;

/** The definitions of every key attribute a table and its indexes use, each once. */
function attributeDefinitions(keys: readonly KeyAttribute[]): AttributeDefinition[] {
  const byName = new Map(keys.map((key) => [key.name, { AttributeName: key.name, AttributeType: attributeTypes[key.type] }]));
  return [...byName.values()];
}

/** A global index keyed (HASH, RANGE) on two attributes, as topology describes it. */
function globalIndexInput(
  index: { name: string; partitionKey: KeyAttribute; sortKey: KeyAttribute },
  projection: GlobalSecondaryIndexInput['Projection'],
): GlobalSecondaryIndexInput {
  return {
    IndexName: index.name,
    KeySchema: [
      { AttributeName: index.partitionKey.name, KeyType: 'HASH' },
      { AttributeName: index.sortKey.name, KeyType: 'RANGE' },
    ],
    Projection: projection,
  };
}

export function shardTableInput(tableName: string): CreateTableCommandInput {
  const { tokenIndex, keyIndex } = shardSchema;
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: attributeDefinitions([
      shardSchema.partitionKey,
      tokenIndex.partitionKey,
      tokenIndex.sortKey,
      keyIndex.partitionKey,
      keyIndex.sortKey,
    ]),
    KeySchema: [{ AttributeName: shardSchema.partitionKey.name, KeyType: 'HASH' }],
    GlobalSecondaryIndexes: [tokenIndex, keyIndex].map((index) =>
      globalIndexInput(index, { ProjectionType: index.projection, NonKeyAttributes: [...index.nonKeyAttributes] }),
    ),
    StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
  };
}

/** A table keyed by a partition and a sort key and nothing else: the control table and the hints table. */
function keyPairTableInput(tableName: string, keys: { partitionKey: KeyAttribute; sortKey: KeyAttribute }): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: attributeDefinitions([keys.partitionKey, keys.sortKey]),
    KeySchema: [
      { AttributeName: keys.partitionKey.name, KeyType: 'HASH' },
      { AttributeName: keys.sortKey.name, KeyType: 'RANGE' },
    ],
  };
}

export function controlTableInput(tableName: string): CreateTableCommandInput {
  return keyPairTableInput(tableName, controlSchema);
}

export function hintsTableInput(tableName: string): CreateTableCommandInput {
  return keyPairTableInput(tableName, hintsSchema);
}

/** The change feed (docs/watch.md). DynamoDB Local keeps its TTL attribute but never removes expired items. */
export function feedTableInput(tableName: string): CreateTableCommandInput {
  return keyPairTableInput(tableName, feedSchema);
}

/** The backup region's pending table (docs/dr.md). */
export function pendingTableInput(tableName: string): CreateTableCommandInput {
  return keyPairTableInput(tableName, pendingSchema);
}

export function txnTableInput(tableName: string): CreateTableCommandInput {
  const { deadlineIndex } = txnSchema;
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: attributeDefinitions([txnSchema.partitionKey, deadlineIndex.partitionKey, deadlineIndex.sortKey]),
    KeySchema: [{ AttributeName: txnSchema.partitionKey.name, KeyType: 'HASH' }],
    GlobalSecondaryIndexes: [globalIndexInput(deadlineIndex, { ProjectionType: deadlineIndex.projection })],
    // Decisions feed the applier (eventual transactions are applied from this stream).
    StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
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

/** An index as `name(hash key, range key)`, comparable between a table's description and its creation input. */
const indexLayout = (index: { IndexName?: string; KeySchema?: Array<{ AttributeName?: string }> }) =>
  `${index.IndexName ?? ''}(${(index.KeySchema ?? []).map((key) => key.AttributeName ?? '').join(', ')})`;

/**
 * A table kept from an earlier run must have the indexes this version queries: an older layout (the
 * listing index keyed by namespace, before it was write-sharded) would fail every listing with a
 * DynamoDB validation error. Refused at start with what to do, instead.
 */
async function assertSameLayout(dynamodb: DynamoDBClient, input: CreateTableCommandInput): Promise<void> {
  const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: input.TableName }));
  const have = (Table?.GlobalSecondaryIndexes ?? []).map(indexLayout).sort();
  const want = (input.GlobalSecondaryIndexes ?? []).map(indexLayout).sort();
  if (have.join(' ') === want.join(' ')) {
    // A stream this version reads and an earlier one did not create (the transaction table's) is added.
    if (input.StreamSpecification?.StreamEnabled && !Table?.StreamSpecification?.StreamEnabled) {
      await dynamodb.send(new UpdateTableCommand({ TableName: input.TableName, StreamSpecification: input.StreamSpecification }));
    }
    return;
  }
  throw new Error(
    `local table ${input.TableName} was created by an earlier version of Ringstore (indexes ${have.join(', ') || 'none'}; ` +
      `this version needs ${want.join(', ') || 'none'}). Its data cannot be read by this version: remove the local data ` +
      `(the data/ folder of the local cloud's home, .ringstore/data for npm start) and start again.`,
  );
}

/** Creates what is missing; returns the names of what it created. */
export async function provision(options: {
  dynamodb: DynamoDBClient;
  s3: S3Client;
  names: Names;
  shardCount: number;
  /** A DR backup region also has the pending table. */
  drBackup?: boolean;
}): Promise<string[]> {
  const { dynamodb, s3, names, shardCount } = options;
  const created: string[] = [];
  const existing = await existingTables(dynamodb);
  const wanted = [
    controlTableInput(names.controlTable),
    hintsTableInput(names.hintsTable),
    txnTableInput(names.txnTable),
    feedTableInput(names.feedTable),
    ...(options.drBackup ? [pendingTableInput(names.pendingTable)] : []),
    ...Array.from({ length: shardCount }, (_, id) => shardTableInput(names.shardTable(id))),
  ];
  for (const input of wanted) {
    if (existing.has(input.TableName!)) {
      await assertSameLayout(dynamodb, input);
      continue;
    }
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
