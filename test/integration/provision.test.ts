// Local provisioning against DynamoDB Local: tables kept from an earlier run are checked against the
// layout this version queries, and an older layout is refused at start with what to do.
import { CreateTableCommand, DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { localCredentials, localRegion } from '../../cdk/local/engines/aws';
import { provision, shardTableInput } from '../../cdk/local/provision';
import { namesFor } from '../../schemas/topology';

const dynamodb = () =>
  new DynamoDBClient({ endpoint: process.env.RINGSTORE_IT_DYNAMODB, region: localRegion, credentials: { ...localCredentials } });

describe('local provisioning of tables kept from an earlier run', () => {
  const names = namesFor(`layout${process.pid % 10_000}`);
  const client = dynamodb();
  // Never reached: the layout check fails before the bucket is looked at.
  const s3 = new S3Client({ region: localRegion, endpoint: 'http://127.0.0.1:9', credentials: { ...localCredentials } });

  afterAll(async () => {
    for (const table of [names.controlTable, names.hintsTable, names.txnTable, names.shardTable(0)]) {
      await client.send(new DeleteTableCommand({ TableName: table })).catch(() => undefined);
    }
    client.destroy();
    s3.destroy();
  });

  it('refuses a shard table whose listing index has the old key (the namespace), naming the table and the remedy', async () => {
    const current = shardTableInput(names.shardTable(0));
    // The layout before the listing index was write-sharded: byKey keyed by (ns, k).
    await client.send(
      new CreateTableCommand({
        ...current,
        AttributeDefinitions: [
          ...current.AttributeDefinitions!.filter((a) => a.AttributeName !== 'lp'),
          { AttributeName: 'ns', AttributeType: 'S' },
        ],
        GlobalSecondaryIndexes: current.GlobalSecondaryIndexes!.map((index) =>
          index.IndexName === 'byKey'
            ? {
                ...index,
                KeySchema: [
                  { AttributeName: 'ns', KeyType: 'HASH' },
                  { AttributeName: 'k', KeyType: 'RANGE' },
                ],
              }
            : index,
        ),
      }),
    );

    await expect(provision({ dynamodb: client, s3, names, shardCount: 1 })).rejects.toThrow(
      new RegExp(`${names.shardTable(0)} was created by an earlier version .*byKey\\(ns, k\\).*byKey\\(lp, k\\).*remove the local data`),
    );
  });
});
