// A rebalance's bulk range operations and its job record on DynamoDB Local: a range read in pages from the
// token index (wrapping past the top of the token space, resumed from a cursor, in bounded queries), the backfill's batch
// writes, copies that never move a key back and relist an incoming owner's copies, the cleanup, and revision-checked job saves.
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { localCredentials, localRegion } from '../../cdk/local/engines/aws';
import { controlTableInput, shardTableInput } from '../../cdk/local/provision';
import { DynamoRangeStore } from '../../lambdas/adapters/dynamodb-range-store';
import { DynamoRebalanceJobStore } from '../../lambdas/adapters/dynamodb-rebalance-job-store';
import { tokenIndexKeysPerQuery } from '../../lambdas/adapters/dynamodb-shard-indexes';
import { DynamoShardStore } from '../../lambdas/adapters/dynamodb-shard-store';
import { listingBucketOf, tokenBucket, tokenOf } from '../../lambdas/core/ring';
import type { RangeCursor, RebalanceJob, StoredItem, TokenSpan } from '../../lambdas/ports';

let documentClient: DynamoDBDocumentClient;
let ranges: DynamoRangeStore;
let shards: DynamoShardStore;
const stamp = Date.now();
const source = `it-rebalance-source-${stamp}`;
const target = `it-rebalance-target-${stamp}`;

const nowSeconds = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  const client = new DynamoDBClient({
    endpoint: process.env.RINGSTORE_IT_DYNAMODB,
    region: localRegion,
    credentials: { ...localCredentials },
  });
  documentClient = DynamoDBDocumentClient.from(client);
  for (const table of [source, target]) await client.send(new CreateTableCommand(shardTableInput(table)));
  await client.send(new CreateTableCommand(controlTableInput(`it-rebalance-control-${stamp}`)));
  ranges = new DynamoRangeStore(documentClient);
  shards = new DynamoShardStore(documentClient);
});

const itemOf = (key: string, version: number, overrides: Partial<StoredItem> = {}): StoredItem => ({
  namespace: 'ns',
  key,
  token: tokenOf('ns', key),
  version,
  contentType: 'text/plain',
  size: 2,
  sha256: 'cd'.repeat(32),
  tombstone: false,
  value: new TextEncoder().encode(`${key}@${version}`),
  modifiedAtMs: 1,
  ...overrides,
});

/** Every item of the range, page after page from the cursor each page returns. */
async function readAll(table: string, range: TokenSpan, limit: number): Promise<{ keys: string[]; pages: number }> {
  const keys: string[] = [];
  let after: RangeCursor | undefined;
  let pages = 0;
  do {
    const page = await ranges.itemsInRange(table, range, { limit, ...(after ? { after } : {}) });
    keys.push(...page.items.map((item) => item.key));
    after = page.next;
    pages += 1;
  } while (after);
  return { keys, pages };
}

const inRange = (range: TokenSpan, token: number) =>
  range.start < range.end ? token > range.start && token <= range.end : token > range.start || token <= range.end;

describe('the range store', () => {
  const keys = Array.from({ length: 120 }, (_, index) => `key-${index}`);

  beforeAll(async () => {
    for (const key of keys) await shards.applyReplica(source, itemOf(key, 3), { nowSeconds: nowSeconds(), listed: true });
  });

  it.each([
    ['a range inside the token space', { start: 2 ** 30, end: 3 * 2 ** 30 }],
    ['a range that wraps past the top of the token space', { start: 3 * 2 ** 30, end: 2 ** 30 }],
  ])('reads %s in token order, in pages resumed from their cursor, each key once', async (_name, range) => {
    const expected = keys
      .filter((key) => inRange(range, tokenOf('ns', key)))
      .sort((a, b) => {
        const order = (key: string) => (tokenOf('ns', key) - range.start - 1 + 2 ** 32) % 2 ** 32;
        return order(a) - order(b);
      });
    expect(expected.length).toBeGreaterThan(20);
    const { keys: read, pages } = await readAll(source, range, 7);
    expect(read).toEqual(expected);
    expect(pages).toBe(Math.ceil(expected.length / 7) + (expected.length % 7 === 0 ? 1 : 0));
    const page = await ranges.itemsInRange(source, range, { limit: 1 });
    expect(page.items[0]).toMatchObject({ namespace: 'ns', version: 3, value: new TextEncoder().encode(`${expected[0]}@3`) });
  });

  it('reads a token bucket holding more keys than one index query may read, in queries of at most that many', async () => {
    const crowded = `it-rebalance-crowded-${stamp}`;
    await new DynamoDBClient({
      endpoint: process.env.RINGSTORE_IT_DYNAMODB,
      region: localRegion,
      credentials: { ...localCredentials },
    }).send(new CreateTableCommand(shardTableInput(crowded)));
    // Keys whose tokens share one bucket, more than twice what one query reads.
    const bucket = 77;
    const inBucket: StoredItem[] = [];
    for (let n = 0; inBucket.length < 2 * tokenIndexKeysPerQuery + 30; n += 1) {
      const key = `crowded-${n}`;
      if (tokenBucket(tokenOf('ns', key)) === bucket) inBucket.push(itemOf(key, 2));
    }
    await ranges.backfillItems(crowded, inBucket, { listed: true });
    const limits: Array<number | undefined> = [];
    const counting = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint: process.env.RINGSTORE_IT_DYNAMODB, region: localRegion, credentials: { ...localCredentials } }),
    );
    counting.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'QueryCommand') limits.push((args.input as { Limit?: number }).Limit);
        return next(args);
      },
      { step: 'initialize' },
    );
    const span: TokenSpan = { start: bucket * 2 ** 24 - 1, end: (bucket + 1) * 2 ** 24 - 1 };
    const expected = inBucket.map((item) => item.key).sort((a, b) => tokenOf('ns', a) - tokenOf('ns', b));

    const page = await new DynamoRangeStore(counting).itemsInRange(crowded, span, { limit: 1_000 });
    expect(page.items.map((item) => item.key)).toEqual(expected);
    expect(page.next).toBeUndefined();
    const versions = await new DynamoShardStore(counting).versionsInRange(crowded, span);
    expect(versions.map((entry) => entry.key)).toEqual(expected);
    expect(versions.every((entry) => entry.version === 2)).toBe(true);

    expect(limits.length).toBeGreaterThanOrEqual(2 * Math.ceil(expected.length / tokenIndexKeysPerQuery));
    expect(limits.every((limit) => limit !== undefined && limit <= tokenIndexKeysPerQuery)).toBe(true);
    counting.destroy();
  });

  it('copies only where the target is older, and lists the copies of an incoming owner, also those already at the version', async () => {
    const [older, same, newer, absent] = ['copy-a', 'copy-b', 'copy-c', 'copy-d'];
    await shards.applyReplica(target, itemOf(older, 1), { nowSeconds: nowSeconds(), listed: false });
    await shards.applyReplica(target, itemOf(same, 2), { nowSeconds: nowSeconds(), listed: false });
    await shards.applyReplica(target, itemOf(newer, 9), { nowSeconds: nowSeconds(), listed: false });
    const written = await ranges.copyItems(target, [itemOf(older, 2), itemOf(same, 2), itemOf(newer, 2), itemOf(absent, 2)], {
      nowSeconds: nowSeconds(),
      listed: true,
    });
    expect(written).toBe(3);
    const versions = await Promise.all([older, same, newer, absent].map((key) => shards.get(target, 'ns', key, { consistent: true })));
    expect(versions.map((item) => item?.version)).toEqual([2, 2, 9, 2]);
    // The incoming owner's listing shows the copied ones, the one at the same version relisted; not the newer replica copy.
    const listed: string[] = [];
    for (const key of [older, same, newer, absent]) {
      const page = await shards.list(target, {
        namespace: 'ns',
        bucket: listingBucketOf(tokenOf('ns', key)),
        prefix: key,
        limit: 10,
        nowSeconds: nowSeconds(),
      });
      listed.push(...page.items.map((item) => item.key));
    }
    expect(listed.sort()).toEqual([absent, older, same].sort());
    // Copied again: nothing is newer, nothing is written.
    expect(await ranges.copyItems(target, [itemOf(older, 2), itemOf(same, 2)], { nowSeconds: nowSeconds(), listed: true })).toBe(0);
  });

  it('backfills items as they are, in batches, listed only where asked and only the live ones', async () => {
    const live = Array.from({ length: 60 }, (_, index) => itemOf(`backfill-${index}`, 4));
    const deleted = itemOf('backfill-deleted', 5, { tombstone: true, size: 0, value: new Uint8Array() });
    const written = await ranges.backfillItems(target, [...live, deleted], { listed: true });
    expect(written).toBe(61);
    const stored = await Promise.all([...live, deleted].map(({ key }) => shards.get(target, 'ns', key, { consistent: true })));
    expect(stored.map((item) => item?.version)).toEqual([...live.map(() => 4), 5]);
    expect(stored[0]!.value).toEqual(new TextEncoder().encode('backfill-0@4'));
    expect(stored[60]!.tombstone).toBe(true);
    const listedKeys = async (key: string) =>
      (
        await shards.list(target, {
          namespace: 'ns',
          bucket: listingBucketOf(tokenOf('ns', key)),
          prefix: key,
          limit: 10,
          nowSeconds: nowSeconds(),
        })
      ).items.map((item) => item.key);
    expect(await listedKeys('backfill-7')).toEqual(['backfill-7']);
    expect(await listedKeys('backfill-deleted')).toEqual([]);
    // Unlisted, as a replica holds it: written, and the listing no longer shows it.
    await ranges.backfillItems(target, [itemOf('backfill-7', 4)], { listed: false });
    expect(await listedKeys('backfill-7')).toEqual([]);
  });

  it('removes copies in batches, more than one batch write holds', async () => {
    const doomed = Array.from({ length: 60 }, (_, index) => ({ namespace: 'ns', key: `doomed-${index}` }));
    for (const { key } of doomed) await shards.applyReplica(target, itemOf(key, 1), { nowSeconds: nowSeconds(), listed: false });
    await ranges.removeCopies(target, doomed);
    const left = await Promise.all(doomed.map(({ key }) => shards.get(target, 'ns', key, { consistent: true })));
    expect(left.filter(Boolean)).toEqual([]);
  });
});

describe('the rebalance job record', () => {
  const job = (revision: number, status: RebalanceJob['status'] = 'running'): RebalanceJob => ({
    id: 'r1',
    change: { join: [4], leave: [] },
    status,
    rateKeysPerSecond: 100,
    ranges: [{ start: 1, end: 2, from: [0, 1], to: [4, 0], stage: 'planned', keysCopied: 0 }],
    startedAtMs: 1,
    updatedAtMs: 1,
    revision,
  });

  it('saves revision after revision, and refuses a save from a stale read', async () => {
    const store = new DynamoRebalanceJobStore(documentClient, `it-rebalance-control-${stamp}`);
    expect(await store.current()).toBeUndefined();
    expect(await store.save(job(1))).toBe(true);
    expect(await store.save(job(1))).toBe(false);
    expect(await store.save(job(2, 'paused'))).toBe(true);
    expect(await store.save(job(2, 'running'))).toBe(false);
    expect(await store.current()).toEqual(job(2, 'paused'));
  });
});
