// An eventual transaction is answered at its decision and its intents are applied afterwards, from the
// transaction table's stream (the applier); a strong one is applied (and replicated) before its answer.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { localCredentials, localRegion } from '../../cdk/local/engines/aws';
import { DynamoShardStore } from '../../lambdas/adapters/dynamodb-shard-store';
import { tokenOf } from '../../lambdas/core/ring';
import { call, freshNamespace, kvPath, sleep } from './support';

let namespace: string;
let apiKey: string;
let ring: { shards: Array<{ id: number; table: string }>; ranges: Array<{ start: number; end: number; owner: number }> };
let shards: DynamoShardStore;

beforeAll(async () => {
  ({ namespace, key: apiKey } = await freshNamespace('applier'));
  ring = (await (await call('/v1/ring', { key: apiKey })).json()) as typeof ring;
  shards = new DynamoShardStore(
    DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint: process.env.RINGSTORE_IT_DYNAMODB, region: localRegion, credentials: { ...localCredentials } }),
    ),
  );
});

const ownerTableOf = (key: string) => {
  const token = tokenOf(namespace, key);
  const range = ring.ranges.find((r) => (r.start < r.end ? token > r.start && token <= r.end : token > r.start || token <= r.end))!;
  return ring.shards.find((shard) => shard.id === range.owner)!.table;
};

/** Keys owned by `count` different shards. */
const keysOnShards = (label: string, count: number) => {
  const keys: string[] = [];
  for (let i = 0; keys.length < count; i += 1) {
    const key = `${label}-${i}`;
    if (!keys.some((other) => ownerTableOf(other) === ownerTableOf(key))) keys.push(key);
  }
  return keys;
};

const transact = async (keys: string[], consistency: 'eventual' | 'strong') => {
  const response = await call(`/v1/txn?consistency=${consistency}`, {
    method: 'POST',
    key: apiKey,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ops: keys.map((key) => ({ op: 'put', key, value: `v-${key}` })) }),
  });
  expect(response.status).toBe(200);
};

const intentOf = async (key: string) => (await shards.get(ownerTableOf(key), namespace, key, { consistent: true }))?.intent?.txid;

describe('applying a committed multi-shard transaction', () => {
  it('applies an eventual transaction after its answer, from the stream, with no read needed', async () => {
    const keys = keysOnShards('eventual', 3);

    await transact(keys, 'eventual');
    const deadline = Date.now() + 10_000;
    let left = keys.length;
    while (Date.now() < deadline) {
      left = (await Promise.all(keys.map(intentOf))).filter(Boolean).length;
      if (left === 0) break;
      await sleep(50);
    }

    expect(left).toBe(0);
    for (const key of keys) {
      const item = await shards.get(ownerTableOf(key), namespace, key, { consistent: true });
      expect({ key, version: item?.version, value: Buffer.from(item?.value ?? []).toString() }).toEqual({
        key,
        version: 1,
        value: `v-${key}`,
      });
    }
  });

  it('answers a strong read right after an eventual commit with the new value (the read rolls the intent forward if needed)', async () => {
    const keys = keysOnShards('readback', 3);

    await transact(keys, 'eventual');
    const reads = await Promise.all(keys.map((key) => call(`${kvPath(key)}?consistency=strong`, { key: apiKey })));

    expect(await Promise.all(reads.map((read) => read.text()))).toEqual(keys.map((key) => `v-${key}`));
  });

  it('applies a strong transaction before it answers', async () => {
    const keys = keysOnShards('strong', 3);

    await transact(keys, 'strong');

    expect(await Promise.all(keys.map(intentOf))).toEqual([undefined, undefined, undefined]);
  });
});

describe('the transaction that wrote a version', () => {
  const writerOf = async (key: string) => (await shards.get(ownerTableOf(key), namespace, key, { consistent: true }))?.writtenBy;
  const transactReturningTxid = async (keys: string[]) => {
    const response = await call('/v1/txn?consistency=strong', {
      method: 'POST',
      key: apiKey,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ops: keys.map((key) => ({ op: 'put', key, value: `v-${key}` })) }),
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { txid: string }).txid;
  };

  it('is recorded on each key it wrote, by a multi-shard and by a one-shard commit, with its write count', async () => {
    const spread = keysOnShards('writer-multi', 3);
    const [single] = keysOnShards('writer-single', 1);

    const multi = await transactReturningTxid(spread);
    const one = await transactReturningTxid([single!]);

    expect(await Promise.all(spread.map(writerOf))).toEqual(spread.map(() => ({ txid: multi, writes: 3 })));
    expect(await writerOf(single!)).toEqual({ txid: one, writes: 1 });
  });

  it('no longer counts once a plain write replaces its version', async () => {
    const keys = keysOnShards('writer-replaced', 2);
    await transactReturningTxid(keys);

    const put = await call(kvPath(keys[0]!), { method: 'PUT', key: apiKey, headers: { 'content-type': 'text/plain' }, body: 'plain' });

    expect(put.status).toBe(200);
    expect(await writerOf(keys[0]!)).toBeUndefined();
    expect((await writerOf(keys[1]!))?.writes).toBe(2);
  });
});
