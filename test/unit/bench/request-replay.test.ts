// The raw replay of Ringstore's own requests (bench/request-replay.ts): what each request becomes, and the overlap kept.
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type CapturedCall, commandCounts, replayInputOf, replayOnce } from '../../../bench/request-replay';

const call = (command: string, input: Record<string, unknown>, sentAt = 0, answeredAt = 1): CapturedCall => ({
  command,
  input,
  sentAt,
  answeredAt,
});

describe('replayInputOf', () => {
  it('moves a conditional write to the replay key, with a condition that always holds and no placeholder left unused', () => {
    const update = call('UpdateItemCommand', {
      TableName: 'shard-0',
      Key: { pk: { S: 'ns#disk/1' } },
      UpdateExpression: 'SET #v = :next',
      ConditionExpression: '#v = :seen AND attribute_not_exists(#intent)',
      ExpressionAttributeNames: { '#v': 'v', '#intent': 'in' },
      ExpressionAttributeValues: { ':next': { N: '2' }, ':seen': { N: '1' } },
    });

    expect(replayInputOf(update)).toEqual({
      TableName: 'shard-0',
      Key: { pk: { S: 'ns#disk/1~replay' } },
      UpdateExpression: 'SET #v = :next',
      ConditionExpression: 'attribute_not_exists(#replayNever)',
      ExpressionAttributeNames: { '#v': 'v', '#replayNever': 'replay_never' },
      ExpressionAttributeValues: { ':next': { N: '2' } },
    });
  });

  it('rewrites every action of a transaction, keeps its condition checks valid, and drops its idempotency token', () => {
    const transaction = call('TransactWriteItemsCommand', {
      ClientRequestToken: 'txid-1',
      TransactItems: [
        {
          Put: {
            TableName: 'shard-0',
            Item: { pk: { S: 'ns#b/1' }, k: { S: 'b/1' }, v: { N: '3' } },
            ConditionExpression: 'v = :v',
            ExpressionAttributeValues: { ':v': { N: '2' } },
          },
        },
        {
          ConditionCheck: {
            TableName: 'shard-0',
            Key: { pk: { S: 'ns#fence' } },
            ConditionExpression: 'e <= :e',
            ExpressionAttributeValues: { ':e': { N: '1' } },
          },
        },
      ],
    });

    expect(replayInputOf(transaction)).toEqual({
      TransactItems: [
        {
          Put: {
            TableName: 'shard-0',
            Item: { pk: { S: 'ns#b/1~replay' }, k: { S: 'b/1~replay' }, v: { N: '3' } },
            ConditionExpression: 'attribute_not_exists(#replayNever)',
            ExpressionAttributeNames: { '#replayNever': 'replay_never' },
          },
        },
        {
          ConditionCheck: {
            TableName: 'shard-0',
            Key: { pk: { S: 'ns#fence~replay' } },
            ConditionExpression: 'attribute_not_exists(#replayNever)',
            ExpressionAttributeNames: { '#replayNever': 'replay_never' },
          },
        },
      ],
    });
  });

  it('sends a read as it was, on the keys Ringstore read', () => {
    const read = call('BatchGetItemCommand', { RequestItems: { 'shard-1': { Keys: [{ pk: { S: 'ns#b/2' } }], ConsistentRead: true } } });
    expect(replayInputOf(read)).toBe(read.input);
  });
});

describe('replayOnce', () => {
  it('sends what ran one after another one after another, and what overlapped together', async () => {
    // Captured: a read; then two copies sent together once it was answered; then a last write after both.
    const calls = [
      call('GetItemCommand', { TableName: 'a' }, 0, 10),
      call('PutItemCommand', { TableName: 'b' }, 11, 30),
      call('PutItemCommand', { TableName: 'c' }, 12, 20),
      call('UpdateItemCommand', { TableName: 'd' }, 31, 40),
    ];
    const log: string[] = [];
    const client = {
      send: async (command: { input: { TableName: string } }) => {
        log.push(`send ${command.input.TableName}`);
        await new Promise((resolve) => setTimeout(resolve, command.input.TableName === 'b' ? 20 : 5));
        log.push(`answer ${command.input.TableName}`);
        return {};
      },
    } as unknown as DynamoDBClient;

    await replayOnce(client, calls, 1_000);

    expect(log).toEqual(['send a', 'answer a', 'send b', 'send c', 'answer c', 'answer b', 'send d', 'answer d']);
    expect(commandCounts(calls)).toEqual({ GetItem: 1, PutItem: 2, UpdateItem: 1 });
  });
});
