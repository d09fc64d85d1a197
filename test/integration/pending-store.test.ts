// The backup region's pending table on DynamoDB Local: entries, and the writes of transactions counted
// beside them (partitions of their own, which a scan of the entries must not return).
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { localCredentials, localRegion } from '../../cdk/local/engines/aws';
import { pendingTableInput } from '../../cdk/local/provision';
import { DynamoPendingStore } from '../../lambdas/adapters/dynamodb-pending-store';
import { keyHashOf } from '../../lambdas/core/dr-messages';
import type { PendingEntry } from '../../lambdas/ports';

let store: DynamoPendingStore;

beforeAll(async () => {
  const client = new DynamoDBClient({
    endpoint: process.env.RINGSTORE_IT_DYNAMODB,
    region: localRegion,
    credentials: { ...localCredentials },
  });
  const tableName = `it-pending-${Date.now()}`;
  await client.send(new CreateTableCommand(pendingTableInput(tableName)));
  store = new DynamoPendingStore(DynamoDBDocumentClient.from(client), tableName);
});

const entryOf = (key: string, version: number, txn?: { txid: string; writes: number }): PendingEntry => ({
  namespace: 'ns',
  key,
  version,
  keyHash: keyHashOf('ns', key),
  state: 'pending',
  receivedAtMs: 2,
  writtenAtMs: 1,
  size: 3,
  sha256: 'ab'.repeat(32),
  contentType: 'text/plain',
  deleted: false,
  ...(txn ? { txid: txn.txid, txnWrites: txn.writes } : {}),
});

describe('the pending table', () => {
  it("keeps a transaction's writes apart from the entries, and forgets them once applied", async () => {
    const txn = { txid: 'tx-1', writes: 3 };
    const entries = ['a', 'b', 'c'].map((key) => entryOf(key, 4, txn));
    for (const entry of entries) {
      await store.record(entry);
      await store.recordTransactionWrite(txn.txid, { keyHash: entry.keyHash, version: entry.version });
      // A duplicate message counts once.
      await store.recordTransactionWrite(txn.txid, { keyHash: entry.keyHash, version: entry.version });
    }

    const writes = await store.transactionWrites(txn.txid);
    const scanned = await store.scan(100);
    await store.clearTransaction(txn.txid);

    expect(writes.map((write) => write.keyHash).sort()).toEqual(entries.map((entry) => entry.keyHash).sort());
    expect(scanned.entries.map((entry) => entry.key).sort()).toEqual(['a', 'b', 'c']);
    expect(await store.find(entries[0]!.keyHash, 4)).toMatchObject({ txid: 'tx-1', txnWrites: 3 });
    expect(await store.transactionWrites(txn.txid)).toEqual([]);
  });

  it('pages a scan past partitions that hold no entries', async () => {
    for (let index = 0; index < 5; index += 1) {
      await store.recordTransactionWrite(`tx-page-${index}`, { keyHash: keyHashOf('ns', `p${index}`), version: 1 });
    }
    await store.record(entryOf('paged', 1));

    const keys: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.scan(2, cursor);
      keys.push(...page.entries.map((entry) => entry.key));
      cursor = page.cursor;
    } while (cursor);

    expect(keys).toContain('paged');
    expect(keys.every((key) => !key.startsWith('p') || key === 'paged')).toBe(true);
  });

  it('scans only the lost entries, and removes a lost entry but never a pending one (reconciliation)', async () => {
    const lost = [entryOf('lost-1', 3), entryOf('lost-2', 5)];
    const pending = entryOf('still-pending', 2);
    for (const entry of [...lost, pending]) await store.record(entry);
    for (const entry of lost) await store.markLost(entry);

    const keys: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.scanLost(2, cursor);
      expect(page.entries.every((entry) => entry.state === 'lost')).toBe(true);
      keys.push(...page.entries.map((entry) => entry.key));
      cursor = page.cursor;
    } while (cursor);
    const pendingRemoved = await store.removeLost(pending.keyHash, pending.version);
    const lostRemoved = await store.removeLost(lost[0]!.keyHash, lost[0]!.version);
    const removedTwice = await store.removeLost(lost[0]!.keyHash, lost[0]!.version);

    expect(keys.sort()).toEqual(['lost-1', 'lost-2']);
    expect([pendingRemoved, lostRemoved, removedTwice]).toEqual([false, true, false]);
    expect(await store.find(pending.keyHash, pending.version)).toMatchObject({ state: 'pending' });
    expect(await store.find(lost[0]!.keyHash, lost[0]!.version)).toBeUndefined();
    expect(await store.find(lost[1]!.keyHash, lost[1]!.version)).toMatchObject({ state: 'lost', version: 5 });
  });
});
