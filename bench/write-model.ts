// What a shard table's shape costs a write on DynamoDB Local, apart from any Ringstore code:
// PutItem on a plain table, on one with the shard GSIs, on the real shard shape (GSIs + stream), the
// UpdateItem form Ringstore uses, and whether DynamoDB Local runs writes to different tables in
// parallel (a strong write's replica copies). `npx tsx bench/write-model.ts` (about 1 min; engines only).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, symlinkSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type AttributeValue, CreateTableCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { startEngines } from '../cdk/local/engines';
import { shardTableInput } from '../cdk/local/provision';
import { rawClient } from './cases';
import { median, measure, type Operation } from './measure';
import { keyCount, valueBytes } from './workload';

const rounds = 5;
const opsPerRound = 100;
const warmupOps = 300;

async function main(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), 'ringstore-write-model-'));
  symlinkSync(process.env.RINGSTORE_VENDOR_DIR ?? resolve(__dirname, '..', '.ringstore', 'vendor'), join(home, 'vendor'), 'dir');
  const engines = await startEngines({ dataDir: join(home, 'data'), vendorDir: join(home, 'vendor') });
  const client = rawClient(engines.dynamodbEndpoint);
  try {
    await client.send(
      new CreateTableCommand({
        TableName: 'plain',
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      }),
    );
    for (const table of ['shard', 'replica-a', 'replica-b']) await client.send(new CreateTableCommand(shardTableInput(table)));
    const { StreamSpecification: _stream, ...withoutStream } = shardTableInput('indexed');
    await client.send(new CreateTableCommand(withoutStream));

    const value = randomBytes(valueBytes);
    const fields = (i: number): Record<string, AttributeValue> => ({
      ns: { S: 'local' },
      k: { S: `k${i % keyCount}` },
      tok: { N: String(1000 + (i % keyCount)) },
      tb: { N: String(i % 7) },
      ct: { S: 'application/octet-stream' },
      size: { N: String(valueBytes) },
      sha: { S: 'f'.repeat(64) },
      tomb: { BOOL: false },
      val: { B: value },
    });
    const put =
      (table: string): Operation =>
      async (i) => {
        await client.send(
          new PutItemCommand({ TableName: table, Item: { pk: { S: `local#k${i % keyCount}` }, v: { N: '1' }, ...fields(i) } }),
        );
      };
    const update =
      (table: string, returnValues: 'NONE' | 'ALL_OLD'): Operation =>
      async (i) => {
        const values = fields(i);
        const names = Object.keys(values);
        await client.send(
          new UpdateItemCommand({
            TableName: table,
            Key: { pk: { S: `local#k${i % keyCount}` } },
            UpdateExpression: `SET ${names.map((n) => `#${n} = :${n}`).join(', ')} ADD #v :one`,
            ExpressionAttributeNames: Object.fromEntries([...names, 'v'].map((n) => [`#${n}`, n])),
            ExpressionAttributeValues: { ...Object.fromEntries(names.map((n) => [`:${n}`, values[n]!])), ':one': { N: '1' } },
            ReturnValues: returnValues,
          }),
        );
      };
    const both =
      (...operations: Operation[]): Operation =>
      async (i) => {
        await Promise.all(operations.map((operation) => operation(i)));
      };
    const then =
      (...operations: Operation[]): Operation =>
      async (i) => {
        for (const operation of operations) await operation(i);
      };
    const cases: Array<[string, Operation]> = [
      ['PutItem, plain table', put('plain')],
      ['PutItem, table with the 2 shard GSIs', put('indexed')],
      ['PutItem, shard table (GSIs + stream)', put('shard')],
      ['UpdateItem ADD v, plain table, NONE', update('plain', 'NONE')],
      ['UpdateItem ADD v, plain table, ALL_OLD', update('plain', 'ALL_OLD')],
      ['UpdateItem ADD v, shard table, ALL_OLD', update('shard', 'ALL_OLD')],
      // A strong write's shape: are two writes to two tables, sent together, as fast as one?
      ['PutItem on 2 shard tables in parallel', both(put('replica-a'), put('replica-b'))],
      ['PutItem on 2 shard tables, one after the other', then(put('replica-a'), put('replica-b'))],
      ['UpdateItem, then 2 PutItems in parallel', then(update('shard', 'ALL_OLD'), both(put('replica-a'), put('replica-b')))],
    ];
    for (const [, op] of cases) await measure(op, { ops: warmupOps, concurrency: 4 });
    const p50s = new Map<string, number[]>(cases.map(([name]) => [name, []]));
    for (let round = 0; round < rounds; round += 1) {
      for (const [name, op] of round % 2 ? [...cases].reverse() : cases) {
        p50s.get(name)!.push((await measure(op, { ops: opsPerRound, concurrency: 1, firstIndex: round * 1000 })).p50Ms);
      }
    }
    console.log(`p50 ms at concurrency 1, ${valueBytes} B values, median of ${rounds} rounds of ${opsPerRound}:`);
    for (const [name, values] of p50s)
      console.log(`  ${name.padEnd(42)} ${median(values).toFixed(2)}   (rounds ${values.map((v) => v.toFixed(2)).join(' ')})`);
  } finally {
    client.destroy();
    await engines.stop();
    await rm(home, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
