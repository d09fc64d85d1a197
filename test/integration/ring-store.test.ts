// The ring record on DynamoDB Local: a failover's fields survive the round trip, and each change is one
// conditional write on the epoch it read (two racing publications: exactly one lands). The shard store's
// listAsOwner puts only live copies into the listing index; applyReplica marks a copy as one, and an owner write (a
// rolled-forward transaction's) keeps its writer; heldVersion reads the copy's version an owner write leaves behind.
// Scratch tables: the shared cloud's ring is never touched.
import { CreateTableCommand, DeleteTableCommand, DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { localCredentials, localRegion } from '../../cdk/local/engines/aws';
import { partitionKeyOf } from '../../lambdas/adapters/dynamodb-item-codec';
import { DynamoRingStore } from '../../lambdas/adapters/dynamodb-ring-store';
import { DynamoShardStore } from '../../lambdas/adapters/dynamodb-shard-store';
import { fencedRing, handedOverRing, rangesToHandOver } from '../../lambdas/core/failover';
import { initialRingState, tokenOf } from '../../lambdas/core/ring';
import type { StoredItem } from '../../lambdas/ports';
import { namesFor, shardSchema } from '../../schemas/topology';

const raw = new DynamoDBClient({ endpoint: process.env.RINGSTORE_IT_DYNAMODB, region: localRegion, credentials: { ...localCredentials } });
const client = DynamoDBDocumentClient.from(raw, { marshallOptions: { removeUndefinedValues: true } });
const controlTable = `ringstore-it-ring-${process.pid}`;
const initial = initialRingState({ shardCount: 4, replicationFactor: 3, vnodesPerShard: 4, tableName: (id) => `shard-${id}` });

beforeAll(async () => {
  if (!process.env.RINGSTORE_IT_DYNAMODB) throw new Error('RINGSTORE_IT_DYNAMODB is not set: run through the integration global setup');
  await raw.send(
    new CreateTableCommand({
      TableName: controlTable,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
    }),
  );
});

afterAll(async () => {
  await raw.send(new DeleteTableCommand({ TableName: controlTable }));
  raw.destroy();
});

describe('the ring record', () => {
  const rings = new DynamoRingStore(client, controlTable);

  it('publishes the next epoch only over the one it follows; fenced ranges (with their epochs) and moved owners round-trip', async () => {
    await rings.ensureRing(initial);
    const fenced = fencedRing(initial, 1);
    const [first, second] = await Promise.all([rings.publishRing(fenced), rings.publishRing(fencedRing(initial, 2))]);
    expect([first, second].filter(Boolean)).toHaveLength(1);
    const winner = first ? fenced : fencedRing(initial, 2);
    expect(await rings.readRing()).toEqual(winner);
    // The epoch each fence was placed at, which a failover's publication checks, comes back with it.
    expect((await rings.readRing())?.fencedAt).toEqual(winner.fenced!.map((end) => ({ end, epoch: winner.epoch })));
    const failed = first ? 1 : 2;
    const handed = handedOverRing(
      winner,
      rangesToHandOver(winner, failed).map(({ range, candidates }) => ({ end: range.end, owner: candidates[0]! })),
    );
    expect(await rings.publishRing(handed)).toBe(true);
    const read = await rings.readRing();
    expect(read).toEqual({ ...handed, fenced: undefined });
    expect(read?.owners?.length).toBeGreaterThan(0);
    // A stale publisher (still at the fenced epoch) changes nothing.
    expect(await rings.publishRing(handedOverRing(winner, []))).toBe(false);
    expect((await rings.readRing())?.epoch).toBe(handed.epoch);
  });
});

describe('listAsOwner', () => {
  const shards = new DynamoShardStore(client);
  const table = namesFor().shardTable(3);
  const namespace = `relist${process.pid}`;
  const item = (key: string, tombstone: boolean): StoredItem => ({
    namespace,
    key,
    token: tokenOf(namespace, key),
    version: 1,
    contentType: tombstone ? '' : 'text/plain',
    size: tombstone ? 0 : 1,
    sha256: '',
    tombstone,
    ...(tombstone ? {} : { value: new Uint8Array([1]) }),
  });

  it('lists the live replica copies once, and neither tombstones nor absent keys', async () => {
    const live = Array.from({ length: 12 }, (_, index) => item(`live-${index}`, false));
    const dead = item('dead', true);
    for (const copy of [...live, dead]) await shards.applyReplica(table, copy, { nowSeconds: 1, listed: false });
    const entries = [...live, dead, item('absent', false)].map(({ key, token, version, tombstone }) => ({
      namespace,
      key,
      token,
      version,
      tombstone: key === 'absent' ? false : tombstone,
    }));
    const listedKeys = async () => {
      const keys: string[] = [];
      for (let bucket = 0; bucket < shardSchema.keyIndex.buckets; bucket += 1) {
        const page = await shards.list(table, { namespace, bucket, prefix: '', limit: 100, nowSeconds: 1 });
        keys.push(...page.items.map((summary) => summary.key));
      }
      return keys.sort();
    };
    expect(await listedKeys()).toEqual([]);
    expect(await shards.listAsOwner(table, entries)).toBe(live.length);
    expect(await listedKeys()).toEqual(live.map((copy) => copy.key).sort());
    expect(await shards.listAsOwner(table, entries)).toBe(0);
    expect(await shards.get(table, namespace, 'absent', { consistent: true })).toBeUndefined();
  });
});

describe('applyReplica', () => {
  const shards = new DynamoShardStore(client);
  const table = namesFor().shardTable(2);
  const namespace = `ownerwrite${process.pid}`;
  const written = (key: string): StoredItem => ({
    namespace,
    key,
    token: tokenOf(namespace, key),
    version: 3,
    contentType: 'text/plain',
    size: 1,
    sha256: '',
    tombstone: false,
    value: new Uint8Array([7]),
    writtenBy: { txid: 'txn-1', writes: 2 },
  });
  const copyMarkOf = async (key: string) => {
    const { Item } = await raw.send(
      new GetItemCommand({ TableName: table, Key: { pk: { S: partitionKeyOf(namespace, key) } }, ConsistentRead: true }),
    );
    return Item?.cpv?.N;
  };

  it('stores a copy with the copy mark and no writer, and an owner write (a rolled-forward transaction) with its writer and no mark', async () => {
    expect(await shards.applyReplica(table, written('copied'), { nowSeconds: 1, listed: false })).toBe(true);
    expect(await copyMarkOf('copied')).toBe('3');
    expect((await shards.get(table, namespace, 'copied', { consistent: true }))?.writtenBy).toBeUndefined();

    expect(await shards.applyReplica(table, written('owned'), { nowSeconds: 1, listed: true, ownerWrite: true })).toBe(true);
    expect(await copyMarkOf('owned')).toBeUndefined();
    expect((await shards.get(table, namespace, 'owned', { consistent: true }))?.writtenBy).toEqual({ txid: 'txn-1', writes: 2 });
  });

  it('heldVersion gives the version, the last copy’s version and the modified time; an owner write keeps the copy’s', async () => {
    expect(await shards.heldVersion(table, namespace, 'never')).toBeUndefined();
    await shards.applyReplica(table, { ...written('held'), modifiedAtMs: 1_000 }, { nowSeconds: 1, listed: false });
    expect(await shards.heldVersion(table, namespace, 'held')).toEqual({ version: 3, copiedVersion: 3, modifiedAtMs: 1_000 });
    const content = { contentType: 'text/plain', size: 1, sha256: '', value: new Uint8Array([8]) };
    const token = tokenOf(namespace, 'held');
    const write = { namespace, key: 'held', token, content, precondition: { kind: 'none' as const }, nowSeconds: 1, modifiedAtMs: 2_000 };
    expect(await shards.write(table, write)).toMatchObject({ outcome: 'written', version: 4 });
    expect(await shards.heldVersion(table, namespace, 'held')).toEqual({ version: 4, copiedVersion: 3, modifiedAtMs: 2_000 });
    // An item an owner write began carries no copy's version.
    await shards.write(table, { ...write, key: 'fresh', token: tokenOf(namespace, 'fresh') });
    expect(await shards.heldVersion(table, namespace, 'fresh')).toEqual({ version: 1, modifiedAtMs: 2_000 });
  });
});
