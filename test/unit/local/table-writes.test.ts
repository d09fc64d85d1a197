// The local cloud's count of its own writes by table, which lets an idle stream poller wait for the next write.
import { DynamoDBClient, GetItemCommand, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, BatchWriteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { Readable } from 'node:stream';
import { TableWrites, tablesWrittenBy } from '../../../cdk/local/table-writes';

/** A client whose every request is answered `{}` (or a 400 when `failing`), without a network. */
function offlineClient(failing = false): DynamoDBClient {
  return new DynamoDBClient({
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:9',
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    maxAttempts: 1,
    requestHandler: {
      handle: async () => ({
        response: {
          statusCode: failing ? 400 : 200,
          headers: { 'content-type': 'application/x-amz-json-1.0' },
          body: Readable.from(
            failing ? '{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"no"}' : '{}',
          ),
        },
      }),
    },
  });
}

describe('TableWrites', () => {
  it('names every table a write names: one, a batch of several, a transaction of several', () => {
    expect(tablesWrittenBy({ TableName: 'a' })).toEqual(['a']);
    expect(tablesWrittenBy({ RequestItems: { a: [], b: [] } })).toEqual(['a', 'b']);
    expect(
      tablesWrittenBy({
        TransactItems: [{ Put: { TableName: 'a' } }, { ConditionCheck: { TableName: 'c' } }, { Update: { TableName: 'a' } }],
      }),
    ).toEqual(['a', 'c']);
  });

  it('counts the writes of a watched document client by table, failed ones too, and not its reads', async () => {
    const writes = new TableWrites();
    const client = offlineClient();
    const documents = DynamoDBDocumentClient.from(client);
    writes.watch(documents);

    await documents.send(new PutCommand({ TableName: 'shard-0', Item: { pk: 'k' } }));
    await documents.send(
      new UpdateCommand({ TableName: 'shard-0', Key: { pk: 'k' }, UpdateExpression: 'SET v = :v', ExpressionAttributeValues: { ':v': 1 } }),
    );
    await documents.send(new BatchWriteCommand({ RequestItems: { 'shard-1': [{ PutRequest: { Item: { pk: 'k' } } }] } }));
    await client.send(new GetItemCommand({ TableName: 'shard-2', Key: { pk: { S: 'k' } } }));
    const failing = offlineClient(true);
    writes.watch(failing);
    await expect(
      failing.send(new TransactWriteItemsCommand({ TransactItems: [{ Put: { TableName: 'txn', Item: { pk: { S: 'k' } } } }] })),
    ).rejects.toThrow('no');

    expect(['shard-0', 'shard-1', 'shard-2', 'txn'].map((table) => writes.generationOf(table))).toEqual([2, 1, 0, 1]);
  });

  it('tells a listener of the next write to its table once, and not after it was cancelled', async () => {
    const writes = new TableWrites();
    const client = offlineClient();
    writes.watch(client);
    const heard: string[] = [];
    writes.onNextWrite('shard-0', () => heard.push('first'));
    const cancel = writes.onNextWrite('shard-0', () => heard.push('cancelled'));
    writes.onNextWrite('shard-1', () => heard.push('other table'));
    cancel();

    const put = (table: string) =>
      client.send(new TransactWriteItemsCommand({ TransactItems: [{ Put: { TableName: table, Item: { pk: { S: 'k' } } } }] }));
    await put('shard-0');
    await put('shard-0');

    expect(heard).toEqual(['first']);
  });
});
