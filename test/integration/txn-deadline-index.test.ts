// The recovery sweeper's walk on DynamoDB Local: the `byDeadline` index is write-sharded (minute#bucket,
// keys only); dueBetween must still return every record of a window, oldest first, exactly `limit` at
// a time, and a walk that resumes where the last batch ended must see every record once.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { localCredentials, localRegion } from '../../cdk/local/engines/aws';
import { DynamoTxnRecordStore, deadlineBucketOf } from '../../lambdas/adapters/dynamodb-txn-store';
import type { TxnRecord } from '../../lambdas/ports';
import { namesFor, txnSchema } from '../../schemas/topology';
import { tokenOf } from '../../lambdas/core/ring';
import { sha256Hex } from '../../lambdas/core/digest';

const minuteMs = 60_000;
// Far in the future: the integration cloud's own sweeper (which walks up to now) never reaches them.
const windowStartMs = Date.UTC(2200, 0, 1) + (process.pid % 1_000) * 10 * minuteMs;

let records: DynamoTxnRecordStore;
let written: TxnRecord[];

beforeAll(async () => {
  if (!process.env.RINGSTORE_IT_DYNAMODB) throw new Error('RINGSTORE_IT_DYNAMODB is not set: run through the integration global setup');
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: process.env.RINGSTORE_IT_DYNAMODB, region: localRegion, credentials: { ...localCredentials } }),
    { marshallOptions: { removeUndefinedValues: true } },
  );
  records = new DynamoTxnRecordStore(client, namesFor().txnTable);
  // 120 records over three minutes, several sharing a deadline, spread over every bucket.
  written = Array.from({ length: 120 }, (_, i) => ({
    txid: `deadline-walk-${process.pid}-${String(i).padStart(3, '0')}`,
    status: 'pending' as const,
    createdAtMs: windowStartMs,
    deadlineMs: windowStartMs + Math.floor(i / 2) * 1_500,
    keys: [],
  }));
  for (const record of written) await records.begin(record);
});

const oldestFirst = (a: TxnRecord, b: TxnRecord) => a.deadlineMs - b.deadlineMs || (a.txid < b.txid ? -1 : 1);

describe('the byDeadline index (minute#bucket, keys only)', () => {
  it('spreads one minute of transactions over every bucket', () => {
    const buckets = new Set(written.map((record) => deadlineBucketOf(record.txid)));

    expect(buckets.size).toBe(txnSchema.deadlineIndex.buckets);
  });

  it('returns a window oldest first across buckets and minutes, whole records read from the table', async () => {
    const due = await records.dueBetween(windowStartMs, windowStartMs + 3 * minuteMs, 1_000);

    expect(due).toEqual([...written].sort(oldestFirst));
  });

  it('returns exactly the oldest `limit`, so a walk resuming at the last deadline sees every record', async () => {
    const first = await records.dueBetween(windowStartMs, windowStartMs + 3 * minuteMs, 25);
    expect(first).toEqual([...written].sort(oldestFirst).slice(0, 25));

    const seen = new Map<string, TxnRecord>();
    let fromMs = windowStartMs;
    for (let batch = 0; batch < 50; batch += 1) {
      const due = await records.dueBetween(fromMs, windowStartMs + 3 * minuteMs, 25);
      for (const record of due) seen.set(record.txid, record);
      // As the sweeper does: a full batch resumes at its last deadline (inclusive), a short one ends the walk.
      if (due.length < 25) break;
      fromMs = due[due.length - 1]!.deadlineMs;
    }

    expect([...seen.values()].sort(oldestFirst)).toEqual([...written].sort(oldestFirst));
  });

  it('sees a decision made after the record was indexed (the index holds keys only)', async () => {
    const [target] = [...written].sort(oldestFirst);
    await records.decide(target!.txid, 'aborted', { reason: 'test' });

    const [due] = await records.dueBetween(target!.deadlineMs, target!.deadlineMs + 1, 10);

    expect(due).toMatchObject({ txid: target!.txid, status: 'aborted', reason: 'test' });
  });
});

describe('a commit decision', () => {
  it('records the writes (version and content) that a failover applies when their owner fails', async () => {
    const txid = `decision-writes-${process.pid}`;
    const keys = [
      { table: 't0', namespace: 'ns', key: 'a', kind: 'put' as const },
      { table: 't1', namespace: 'ns', key: 'b', kind: 'delete' as const },
    ];
    await records.begin({ txid, status: 'pending', createdAtMs: windowStartMs, deadlineMs: windowStartMs + 5 * minuteMs, keys });
    const value = new Uint8Array([104, 105]);
    const writes = [
      {
        namespace: 'ns',
        key: 'a',
        token: tokenOf('ns', 'a'),
        version: 3,
        kind: 'put' as const,
        contentType: 'text/plain',
        size: 2,
        sha256: sha256Hex(value),
        value,
      },
      { namespace: 'ns', key: 'b', token: tokenOf('ns', 'b'), version: 1, kind: 'delete' as const, contentType: '', size: 0, sha256: '' },
    ];

    const decided = await records.decide(txid, 'committed', { writes });
    const found = await records.find(txid);

    expect(decided?.status).toBe('committed');
    for (const record of [decided, found]) {
      expect(record?.writes?.map(({ value: bytes, ...write }) => ({ ...write, value: bytes && [...bytes] }))).toEqual(
        writes.map(({ value: bytes, ...write }) => ({ ...write, value: bytes && [...bytes] })),
      );
    }
  });

  it('records nothing but the status when it aborts', async () => {
    const txid = `decision-abort-${process.pid}`;
    await records.begin({ txid, status: 'pending', createdAtMs: windowStartMs, deadlineMs: windowStartMs + 5 * minuteMs, keys: [] });

    expect(await records.decide(txid, 'aborted', { reason: 'conflict' })).not.toHaveProperty('writes');
  });
});
