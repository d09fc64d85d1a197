// POST /v1/txn through real HTTP and the local state machine: atomic multi-key writes on every shard,
// conditions, reads, limits, namespace isolation, conflicts, and the SDK end to end.
import { createHash } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { localCredentials, localRegion } from '../../cdk/local/engines/aws';
import { DynamoShardStore } from '../../lambdas/adapters/dynamodb-shard-store';
import { DynamoTxnRecordStore } from '../../lambdas/adapters/dynamodb-txn-store';
import { tokenOf } from '../../lambdas/core/ring';
import { namesFor, txnLimits } from '../../schemas/topology';
import type { z } from 'zod';
import type { TxnCommitted, TxnOp as TxnOpSchema } from '../../schemas/api';
import { RingstoreClient, TransactionAbortedError } from '../../sdk/src';
import { baseUrl, call, freshNamespace, kvPath } from './support';

type TxnOp = z.input<typeof TxnOpSchema>;
type Committed = z.infer<typeof TxnCommitted>;

interface Failure {
  status: number;
  code: string;
  message: string;
  retryable: boolean;
  details: { field?: string; txid?: string; status?: string; reason?: string; key?: string };
}

let namespace: string;
let key: string;
let ring: { ranges: Array<{ start: number; end: number; owner: number }>; shards: Array<{ id: number; table: string }> };

beforeAll(async () => {
  ({ namespace, key } = await freshNamespace('txn'));
  ring = (await (await call('/v1/ring', { key })).json()) as typeof ring;
});

const txn = (body: unknown, options: { query?: string; apiKey?: string } = {}) =>
  call(`/v1/txn${options.query ?? ''}`, {
    method: 'POST',
    key: options.apiKey ?? key,
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

async function committed(response: Response): Promise<Committed> {
  const body = (await response.json()) as Committed;
  if (response.status !== 200) throw new Error(`expected a commit, got ${response.status}: ${JSON.stringify(body)}`);
  return body;
}

async function failure(response: Response): Promise<Failure> {
  const body = (await response.json()) as { error: Omit<Failure, 'status' | 'details'> & { details?: Failure['details'] } };
  return { status: response.status, ...body.error, details: body.error.details ?? {} };
}

const put = (k: string, value: string, apiKey = key) =>
  call(`${kvPath(k)}?consistency=strong`, { method: 'PUT', key: apiKey, body: value, headers: { 'content-type': 'text/plain' } });
const strongGet = async (k: string, apiKey = key) => {
  const response = await call(`${kvPath(k)}?consistency=strong`, { key: apiKey });
  return { status: response.status, version: Number(response.headers.get('x-ringstore-version') ?? 0), text: await response.text() };
};
const text = (read: { value?: string } | undefined) => Buffer.from(read?.value ?? '', 'base64').toString('utf8');

/** The shard owning a key: the range (start, end] holding its token; the first range wraps. */
function ownerOf(k: string, ns = namespace): number {
  const token = tokenOf(ns, k);
  const range = ring.ranges.find((r) => (r.start < r.end ? token > r.start && token <= r.end : token > r.start || token <= r.end));
  if (!range) throw new Error(`no range holds token ${token}`);
  return range.owner;
}

/** `count` keys under `prefix`, spread round-robin over the shards that own them (so every shard has some). */
function keysOnEveryShard(prefix: string, count: number): string[] {
  const perShard = Math.ceil(count / ring.shards.length);
  const byShard = new Map<number, string[]>(ring.shards.map((shard) => [shard.id, []]));
  for (let i = 0; [...byShard.values()].some((keys) => keys.length < perShard); i++) {
    if (i > 100_000) throw new Error(`could not find ${perShard} keys per shard`);
    byShard.get(ownerOf(`${prefix}/${i}`))?.push(`${prefix}/${i}`);
  }
  const keys: string[] = [];
  for (let round = 0; keys.length < count; round++) {
    for (const owned of byShard.values()) if (keys.length < count) keys.push(owned[round]!);
  }
  expect(new Set(keys.map((k) => ownerOf(k))).size).toBe(ring.shards.length);
  return keys;
}

describe('commits', () => {
  it('writes keys on every shard atomically; GET sees the versions it answered', async () => {
    // Prepare
    const keys = keysOnEveryShard('wo', 12);

    // Act
    const outcome = await committed(await txn({ ops: keys.map((k) => ({ op: 'put', key: k, value: `value of ${k}` })) }));

    // Assess
    expect(outcome.txid).toEqual(expect.any(String));
    expect(outcome.reads).toEqual([]);
    expect(outcome.writes.map((w) => w.key).sort()).toEqual([...keys].sort());
    for (const write of outcome.writes) {
      expect(write.version).toBe(1);
      expect(await strongGet(write.key)).toEqual({ status: 200, version: 1, text: `value of ${write.key}` });
    }
  });

  it('reads and writes with ifVersion: the reads are the committed values, the writes the next versions', async () => {
    await put('rw/a', 'a1');
    await put('rw/a', 'a2');

    const outcome = await committed(
      await txn({
        ops: [
          { op: 'get', key: 'rw/a' },
          { op: 'put', key: 'rw/a', value: 'a3', ifVersion: 2 },
          { op: 'put', key: 'rw/b', value: 'b1', ifVersion: 0, contentType: 'text/plain' },
          { op: 'check', key: 'rw/none', ifVersion: 0 },
        ],
      }),
    );

    expect(outcome.reads).toEqual([
      { key: 'rw/a', found: true, version: 2, value: Buffer.from('a2').toString('base64'), contentType: 'text/plain' },
    ]);
    expect(outcome.writes.sort((x, y) => x.key.localeCompare(y.key))).toEqual([
      { key: 'rw/a', version: 3 },
      { key: 'rw/b', version: 1 },
    ]);
    expect(await strongGet('rw/a')).toEqual({ status: 200, version: 3, text: 'a3' });
    // Strong: the transaction is answered at its decision, and a replica may not hold rw/b yet.
    const b = await call(`${kvPath('rw/b')}?consistency=strong`, { key });
    expect(b.headers.get('content-type')).toBe('text/plain');
    expect(await b.text()).toBe('b1');
  });

  it('folds several ops on one key: later gets see earlier writes, one version per key', async () => {
    await put('same/k', 'before');

    const outcome = await committed(
      await txn({
        ops: [
          { op: 'get', key: 'same/k' },
          { op: 'put', key: 'same/k', value: 'first' },
          { op: 'get', key: 'same/k' },
          { op: 'put', key: 'same/k', value: 'c2Vjb25k', encoding: 'base64' },
          { op: 'get', key: 'same/k' },
          { op: 'put', key: 'same/gone', value: 'short-lived' },
          { op: 'delete', key: 'same/gone' },
          { op: 'get', key: 'same/gone' },
        ],
      }),
    );

    expect(outcome.reads.map((r) => (r.found ? text(r) : null))).toEqual(['before', 'first', 'second', null]);
    expect(outcome.reads[0]?.version).toBe(1);
    expect(outcome.writes.sort((x, y) => x.key.localeCompare(y.key))).toEqual([
      { key: 'same/gone', version: 1 },
      { key: 'same/k', version: 2 },
    ]);
    expect(await strongGet('same/k')).toEqual({ status: 200, version: 2, text: 'second' });
    expect((await strongGet('same/gone')).status).toBe(404);
  });

  it('answers a read-only transaction with the committed values and writes nothing', async () => {
    const keys = keysOnEveryShard('ro', 8);
    for (const k of keys) await put(k, `ro ${k}`);

    const outcome = await committed(await txn({ ops: [...keys, 'ro/missing'].map((k) => ({ op: 'get', key: k })) }));

    expect(outcome.writes).toEqual([]);
    expect(outcome.reads.map((r) => [r.key, r.found, r.version, text(r)])).toEqual([
      ...keys.map((k) => [k, true, 1, `ro ${k}`]),
      ['ro/missing', false, undefined, ''],
    ]);
    for (const k of keys) expect((await strongGet(k)).version).toBe(1);
  });

  it(`commits more written keys than TransactWriteItems takes (100), on every shard`, async () => {
    const keys = keysOnEveryShard('many', 120);

    // A generous deadline: a loaded machine must not turn this into a timeout abort.
    const outcome = await committed(
      await txn({ ops: keys.map((k) => ({ op: 'put', key: k, value: k })), timeoutMs: txnLimits.txnTimeoutMsMax }),
    );

    expect(outcome.writes).toHaveLength(120);
    expect(outcome.writes.every((w) => w.version === 1)).toBe(true);
    for (const k of keys) expect(await strongGet(k)).toEqual({ status: 200, version: 1, text: k });
  });
});

describe('aborts', () => {
  it('aborts as a whole when a check fails: 412 naming the key, nothing written', async () => {
    await put('chk/guard', 'g');
    const keys = keysOnEveryShard('chk/w', 8);

    const error = await failure(
      await txn({ ops: [...keys.map((k) => ({ op: 'put', key: k, value: 'x' })), { op: 'check', key: 'chk/guard', ifVersion: 7 }] }),
    );

    expect(error).toMatchObject({ status: 412, code: 'kv.preconditionFailed', retryable: false });
    expect(error.details).toEqual({ txid: expect.any(String), status: 'aborted', reason: 'precondition', key: 'chk/guard' });
    for (const k of keys) expect((await strongGet(k)).status).toBe(404);
  });

  it('aborts when an ifVersion does not hold or a deleted key does not exist', async () => {
    await put('abort/v', 'v1');

    const stale = await failure(
      await txn({
        ops: [
          { op: 'put', key: 'abort/v', value: 'v2', ifVersion: 0 },
          { op: 'put', key: 'abort/other', value: 'x' },
        ],
      }),
    );
    const missing = await failure(
      await txn({
        ops: [
          { op: 'delete', key: 'abort/none' },
          { op: 'put', key: 'abort/other', value: 'x' },
        ],
      }),
    );

    expect(stale).toMatchObject({ status: 412, details: { status: 'aborted', reason: 'precondition', key: 'abort/v' } });
    expect(missing).toMatchObject({
      status: 404,
      code: 'kv.notFound',
      details: { status: 'aborted', reason: 'notFound', key: 'abort/none' },
    });
    expect(await strongGet('abort/v')).toEqual({ status: 200, version: 1, text: 'v1' });
    expect((await strongGet('abort/other')).status).toBe(404);
  });
});

describe('limits', () => {
  const marker = (label: string): TxnOp => ({ op: 'put', key: `limits/${label}`, value: 'must not be written' });

  it.each<[string, unknown, number, string, string | undefined]>([
    [
      'too many ops',
      { ops: [marker('ops'), ...Array.from({ length: txnLimits.txnOpsMax }, (_, i) => ({ op: 'get', key: `g${i}` }))] },
      400,
      'request.invalid',
      'ops',
    ],
    ['no ops', { ops: [] }, 400, 'request.invalid', 'ops'],
    ['an unknown op', { ops: [marker('op'), { op: 'increment', key: 'k' }] }, 400, 'request.invalid', 'ops.1.op'],
    ['a put without a value', { ops: [marker('value'), { op: 'put', key: 'k' }] }, 400, 'request.invalid', 'ops.1.value'],
    ['a check without a version', { ops: [marker('check'), { op: 'check', key: 'k' }] }, 400, 'request.invalid', 'ops.1.ifVersion'],
    ['an empty key', { ops: [marker('key'), { op: 'get', key: '' }] }, 400, 'request.invalid', 'ops.1.key'],
    [
      'a put whose content type is not a media type',
      { ops: [marker('ct'), { op: 'put', key: 'k', value: 'v', contentType: '0' }] },
      400,
      'request.invalid',
      'ops.1.contentType',
    ],
    [
      'two versions for one key',
      { ops: [marker('versions'), { op: 'check', key: 'k', ifVersion: 1 }, { op: 'delete', key: 'k', ifVersion: 2 }] },
      400,
      'request.invalid',
      'ops.2.ifVersion',
    ],
    ['a timeout under 100 ms', { ops: [marker('t1')], timeoutMs: 99 }, 400, 'request.invalid', 'timeoutMs'],
    ['a timeout over the maximum', { ops: [marker('t2')], timeoutMs: txnLimits.txnTimeoutMsMax + 1 }, 400, 'request.invalid', 'timeoutMs'],
    ['a fractional timeout', { ops: [marker('t3')], timeoutMs: 150.5 }, 400, 'request.invalid', 'timeoutMs'],
    ['an unknown field', { ops: [marker('field')], deadline: 5 }, 400, 'request.invalid', undefined],
    ['a body that is not JSON', '{"ops": [', 400, 'request.invalid', undefined],
    [
      'more value bytes than the limit',
      { ops: [marker('bytes'), ...[0, 1].map((i) => ({ op: 'put', key: `b${i}`, value: 'x'.repeat(txnLimits.txnValueBytesMax / 2) }))] },
      413,
      'request.tooLarge',
      'ops',
    ],
    [
      'one value over the inline limit',
      { ops: [marker('inline'), { op: 'put', key: 'huge', value: 'x'.repeat(350_001) }] },
      413,
      'kv.valueTooLarge',
      'ops.1.value',
    ],
  ])('refuses %s with a clear error and changes nothing', async (_label, body, status, code, field) => {
    const error = await failure(await txn(body));

    expect(error).toMatchObject({ status, code });
    if (field !== undefined) expect(error.details.field).toBe(field);
    expect(error.message).not.toBe('');
    for (const k of ['ops', 'op', 'value', 'check', 'key', 'versions', 't1', 't2', 't3', 'field', 'bytes', 'inline']) {
      expect((await strongGet(`limits/${k}`)).status).toBe(404);
    }
  });

  it('refuses a bad consistency', async () => {
    expect(await failure(await txn({ ops: [{ op: 'get', key: 'k' }] }, { query: '?consistency=sometimes' }))).toMatchObject({
      status: 400,
      code: 'request.invalid',
    });
  });
});

describe('isolation and concurrency', () => {
  it("keeps namespaces apart: a transaction sees and changes only its own namespace's keys", async () => {
    const other = await freshNamespace('txn-other');
    await put('iso/shared', 'mine');

    const theirs = await committed(
      await txn(
        {
          ops: [
            { op: 'get', key: 'iso/shared' },
            { op: 'put', key: 'iso/shared', value: 'theirs', ifVersion: 0 },
          ],
        },
        { apiKey: other.key },
      ),
    );
    const theirDelete = await failure(await txn({ ops: [{ op: 'delete', key: 'iso/only-mine' }] }, { apiKey: other.key }));

    expect(theirs.reads).toEqual([{ key: 'iso/shared', found: false }]);
    expect(theirs.writes).toEqual([{ key: 'iso/shared', version: 1 }]);
    expect(theirDelete).toMatchObject({ status: 404, details: { reason: 'notFound' } });
    expect(await strongGet('iso/shared')).toEqual({ status: 200, version: 1, text: 'mine' });
    expect(await strongGet('iso/shared', other.key)).toEqual({ status: 200, version: 1, text: 'theirs' });
  });

  it('lets at most one of two conflicting transactions commit, and never mixes their writes', async () => {
    const keys = keysOnEveryShard('race', 16);
    for (const k of keys) await put(k, 'start');
    const body = (who: string) => ({
      ops: keys.map((k) => ({ op: 'put', key: k, value: who, ifVersion: 1 })),
      timeoutMs: txnLimits.txnTimeoutMsMax,
    });

    const [left, right] = await Promise.all([txn(body('left')), txn(body('right'))]);

    const statuses = [left.status, right.status];
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    const loser = await failure(left.status === 200 ? right : left);
    // 409 when they overlapped (the younger met the older's intent); 412 when one ran after the other.
    expect([409, 412]).toContain(loser.status);
    expect(loser.details).toMatchObject({ status: 'aborted', key: expect.any(String) });
    expect(loser.details.reason).toBe(loser.status === 409 ? 'conflict' : 'precondition');
    const winner = left.status === 200 ? 'left' : 'right';
    for (const k of keys) expect(await strongGet(k)).toEqual({ status: 200, version: 2, text: winner });
  });
});

describe('a transaction whose coordinator is gone (pending intent)', () => {
  // A pending record and its intent, as a coordinator leaves them when it dies after Prepare; older
  // than any transaction the tests start, with a deadline no test reaches, so it stays pending.
  const documents = () =>
    DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: process.env.RINGSTORE_IT_DYNAMODB,
        region: localRegion,
        credentials: { ...localCredentials },
      }),
      { marshallOptions: { removeUndefinedValues: true } },
    );
  const names = namesFor();
  const k = 'pending/k';
  let shards: DynamoShardStore;
  let records: DynamoTxnRecordStore;
  let txid: string;
  let table: string;

  beforeAll(async () => {
    if (!process.env.RINGSTORE_IT_DYNAMODB) throw new Error('RINGSTORE_IT_DYNAMODB is not set: run through the integration global setup');
    shards = new DynamoShardStore(documents());
    records = new DynamoTxnRecordStore(documents(), names.txnTable);
    table = ring.shards.find((shard) => shard.id === ownerOf(k))!.table;
    await put(k, 'committed');
    const createdAtMs = Date.now() - 60_000;
    txid = `${createdAtMs.toString(36).padStart(9, '0')}-fixture${process.pid}`;
    const value = Buffer.from('pending');
    await records.begin({
      txid,
      status: 'pending',
      createdAtMs,
      deadlineMs: Date.now() + 3_600_000,
      keys: [{ table, namespace, key: k, kind: 'put' }],
    });
    await shards.placeIntent(table, {
      namespace,
      key: k,
      token: tokenOf(namespace, k),
      mustBeLive: false,
      nowSeconds: Math.floor(Date.now() / 1000),
      intent: {
        txid,
        kind: 'put',
        contentType: 'text/plain',
        size: value.byteLength,
        sha256: createHash('sha256').update(value).digest('hex'),
        value,
        placedAtMs: Date.now(),
      },
    });
  });

  afterAll(async () => {
    await records.decide(txid, 'aborted', { reason: 'timeout' });
    await shards.clearIntent(table, { namespace, key: k, txid });
  });

  it('serves the last committed value to eventual and strong reads', async () => {
    const eventual = await call(`${kvPath(k)}?consistency=eventual`, { key });

    expect(eventual.status).toBe(200);
    expect(await eventual.text()).toBe('committed');
    expect(await strongGet(k)).toEqual({ status: 200, version: 1, text: 'committed' });
  });

  it('aborts a younger transaction on the key with 409 txn.conflict naming it, and a plain write with 409', async () => {
    const error = await failure(
      await txn({
        ops: [
          { op: 'put', key: 'pending/other', value: 'x' },
          { op: 'put', key: k, value: 'mine' },
        ],
      }),
    );
    const plain = await failure(await put(k, 'plain'));

    expect(error).toMatchObject({
      status: 409,
      code: 'txn.conflict',
      retryable: true,
      details: { status: 'aborted', reason: 'conflict', key: k },
    });
    expect(plain).toMatchObject({ status: 409, code: 'txn.conflict' });
    expect((await strongGet('pending/other')).status).toBe(404);
    expect(await strongGet(k)).toEqual({ status: 200, version: 1, text: 'committed' });
  });

  it('reaches the SDK as TransactionAbortedError with reason conflict and the key', async () => {
    const client = new RingstoreClient({ endpoint: baseUrl(), apiKey: key });

    const error = await client.transact([{ op: 'put', key: k, value: 'sdk' }], { conflictRetries: 1 }).catch((err: unknown) => err);

    expect(error).toBeInstanceOf(TransactionAbortedError);
    expect(error).toMatchObject({ reason: 'conflict', key: k, code: 'txn.conflict', status: 409, txid: expect.any(String) });
  });
});

describe('SDK', () => {
  it('transacts end to end: text and bytes written, reads decoded, versions returned, aborts typed', async () => {
    const client = new RingstoreClient({ endpoint: baseUrl(), apiKey: key });
    await client.put('sdk/a', 'héllo');

    const outcome = await client.transact(
      [
        { op: 'get', key: 'sdk/a' },
        { op: 'put', key: 'sdk/a', value: 'wörld', ifVersion: 1 },
        { op: 'put', key: 'sdk/bin', value: new Uint8Array([0, 1, 254, 255]) },
        { op: 'get', key: 'sdk/bin' },
      ],
      { timeoutMs: 10_000, consistency: 'strong' },
    );
    const aborted = await client
      .transact([
        { op: 'put', key: 'sdk/never', value: 'x' },
        { op: 'check', key: 'sdk/a', ifVersion: 1 },
      ])
      .catch((err: unknown) => err);

    const [a, bin] = outcome.reads;
    expect(a?.found === true && [a.text(), a.version, a.contentType]).toEqual(['héllo', 1, 'text/plain; charset=utf-8']);
    expect(bin?.found === true && Array.from(bin.value)).toEqual([0, 1, 254, 255]);
    expect(outcome.writes.sort((x, y) => x.key.localeCompare(y.key))).toEqual([
      { key: 'sdk/a', version: 2 },
      { key: 'sdk/bin', version: 1 },
    ]);
    expect((await client.get('sdk/a', { consistency: 'strong' })).text()).toBe('wörld');
    expect(Array.from((await client.get('sdk/bin', { consistency: 'strong' })).value)).toEqual([0, 1, 254, 255]);
    expect(aborted).toBeInstanceOf(TransactionAbortedError);
    expect(aborted).toMatchObject({ reason: 'precondition', key: 'sdk/a', status: 412 });
    await expect(client.get('sdk/never', { consistency: 'strong' })).rejects.toMatchObject({ name: 'NotFoundError' });
  });
});
