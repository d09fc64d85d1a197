// Transactions through the SDK: the request it sends, the typed output, client-side limits, the
// typed abort and outcome-unknown errors, and that nothing is repeated unless the caller asked.

import {
  ConflictError,
  PayloadTooLargeError,
  RingstoreClient,
  TransactCommand,
  TransactionAbortedError,
  TransactionOutcomeUnknownError,
  TXN_CONFLICT_RETRIES_MAX,
  TXN_OPS_MAX,
  TXN_TIMEOUT_MS_MAX,
  TXN_VALUE_BYTES_MAX,
  ValidationError,
  type TransactOp,
} from '../src';
import { FakeRingstore, sendJson, startScriptedServer, type Reply, type RunningServer } from './support/fake-server';

const abortBody = (code: string, reason: string, key: string, retryable = false) => ({
  error: { code, message: `transaction aborted: ${reason} on ${key}`, retryable, details: { txid: 't-1', status: 'aborted', reason, key } },
});

describe('transact against the fake Ringstore', () => {
  let fake: FakeRingstore;
  let client: RingstoreClient;

  beforeEach(async () => {
    fake = await new FakeRingstore().start();
    client = new RingstoreClient({ endpoint: fake.url, apiKey: 'user-key', sleep: async () => {} });
  });

  afterEach(async () => {
    await fake.close();
  });

  it('sends text as is and bytes as base64, with their content types, and decodes what it reads', async () => {
    // Prepare
    await client.put('a', 'héllo');

    // Act
    const output = await client.send(
      new TransactCommand({
        ops: [
          { op: 'get', key: 'a' },
          { op: 'put', key: 'b', value: new Uint8Array([0, 255, 7]) },
          { op: 'put', key: 'c', value: '{"n":1}', contentType: 'application/json', ifVersion: 0 },
          { op: 'get', key: 'c' },
          { op: 'get', key: 'missing' },
        ],
        timeoutMs: 2000,
        consistency: 'strong',
      }),
    );

    // Assess
    const request = fake.requests.find((r) => r.pathname === '/v1/txn');
    expect(request?.method).toBe('POST');
    expect(request?.query.get('consistency')).toBe('strong');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request?.body.toString('utf8') ?? '')).toEqual({
      ops: [
        { op: 'get', key: 'a' },
        { op: 'put', key: 'b', value: 'AP8H', encoding: 'base64', contentType: 'application/octet-stream' },
        { op: 'put', key: 'c', value: '{"n":1}', contentType: 'application/json', ifVersion: 0 },
        { op: 'get', key: 'c' },
        { op: 'get', key: 'missing' },
      ],
      timeoutMs: 2000,
    });
    expect(output.txid).toMatch(/^fake-/);
    expect(output.writes).toEqual([
      { key: 'b', version: 1 },
      { key: 'c', version: 1 },
    ]);
    const [a, c, missing] = output.reads;
    expect(a).toMatchObject({ key: 'a', found: true, version: 1, contentType: 'text/plain; charset=utf-8' });
    expect(a?.found === true && a.text()).toBe('héllo');
    expect(c?.found === true && c.json<{ n: number }>().n).toBe(1);
    expect(c?.found === true && c.version).toBeUndefined(); // read from the transaction's own put
    expect(missing).toEqual({ key: 'missing', found: false });
    expect(Array.from(fake.store.get('test#b')?.value ?? [])).toEqual([0, 255, 7]);
  });

  it('throws TransactionAbortedError with reason, key and txid, and writes nothing', async () => {
    await client.put('stock', '5');

    const error = await client
      .transact([
        { op: 'put', key: 'order', value: 'x' },
        { op: 'check', key: 'stock', ifVersion: 2 },
      ])
      .catch((err: unknown) => err);

    expect(error).toBeInstanceOf(TransactionAbortedError);
    expect(error).toMatchObject({ reason: 'precondition', key: 'stock', code: 'kv.preconditionFailed', status: 412, retryable: false });
    expect((error as TransactionAbortedError).txid).toMatch(/^fake-/);
    expect(fake.store.has('test#order')).toBe(false);
    expect(fake.requests.filter((r) => r.pathname === '/v1/txn')).toHaveLength(1);
  });

  it('reports a delete of a missing key as reason notFound', async () => {
    await expect(client.transact([{ op: 'delete', key: 'ghost' }])).rejects.toMatchObject({
      name: 'TransactionAbortedError',
      reason: 'notFound',
      key: 'ghost',
      status: 404,
    });
  });

  it.each<[string, TransactOp[], object, string]>([
    ['no ops', [], {}, 'at least one op'],
    [
      'too many ops',
      Array.from({ length: TXN_OPS_MAX + 1 }, (_, i) => ({ op: 'get' as const, key: `k${i}` })),
      {},
      `at most ${TXN_OPS_MAX} ops`,
    ],
    ['a timeout over the limit', [{ op: 'get', key: 'k' }], { timeoutMs: TXN_TIMEOUT_MS_MAX + 1 }, 'timeoutMs'],
    ['a timeout under the limit', [{ op: 'get', key: 'k' }], { timeoutMs: 99 }, 'timeoutMs'],
    ['a check without a version', [{ op: 'check', key: 'k' } as unknown as TransactOp], {}, 'a check needs ifVersion'],
    ['a negative version', [{ op: 'delete', key: 'k', ifVersion: -1 }], {}, 'ops[0].ifVersion'],
    ['an unknown op', [{ op: 'increment', key: 'k' } as unknown as TransactOp], {}, 'must be get, put, delete or check'],
    ['a put without a value', [{ op: 'put', key: 'k' } as unknown as TransactOp], {}, 'ops[0].value'],
    ['too many conflict retries', [{ op: 'get', key: 'k' }], { conflictRetries: TXN_CONFLICT_RETRIES_MAX + 1 }, 'conflictRetries'],
  ])('refuses %s before any request', async (_label, ops, options, message) => {
    const error = await client.transact(ops, options).catch((err: unknown) => err);

    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toContain(message);
    expect(fake.requests).toHaveLength(0);
  });

  it('refuses an empty key and more value bytes than the limit before any request', async () => {
    const half = new Uint8Array(TXN_VALUE_BYTES_MAX / 2);

    await expect(client.transact([{ op: 'get', key: '' }])).rejects.toMatchObject({ code: 'client.invalidKey' });
    await client.transact([
      { op: 'put', key: 'a', value: half },
      { op: 'put', key: 'b', value: half },
    ]);
    const error = await client
      .transact([
        { op: 'put', key: 'a', value: half },
        { op: 'put', key: 'b', value: half },
        { op: 'put', key: 'c', value: 'x' },
      ])
      .catch((err: unknown) => err);

    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect(error).toMatchObject({ code: 'client.valueTooLarge', status: 0 });
    expect(fake.requests).toHaveLength(1); // only the transaction at the limit
  });
});

describe('transact failures and retries', () => {
  let server: RunningServer & { replies: Reply[] };
  let replies: Reply[];
  let sleeps: number[];

  beforeEach(async () => {
    sleeps = [];
    server = await startScriptedServer((r) =>
      sendJson(r, 200, { status: 'committed', txid: 't-2', writes: [{ key: 'k', version: 4 }], reads: [] }),
    );
    replies = server.replies;
  });

  afterEach(async () => {
    await server.close();
  });

  const client = (): RingstoreClient =>
    new RingstoreClient({ endpoint: server.url, apiKey: 'k', random: () => 0.5, sleep: async (ms) => void sleeps.push(ms) });
  const reply =
    (status: number, body: unknown, headers: Record<string, string> = {}): Reply =>
    (res) =>
      sendJson(res, status, body, headers);
  const ops: TransactOp[] = [{ op: 'put', key: 'k', value: 'v' }];

  it('does not retry a conflict unless asked, then retries it with backoff', async () => {
    replies.push(reply(409, abortBody('txn.conflict', 'conflict', 'k', true)));
    const once = await client()
      .transact(ops)
      .catch((err: unknown) => err);
    expect(once).toMatchObject({
      name: 'TransactionAbortedError',
      reason: 'conflict',
      key: 'k',
      txid: 't-1',
      code: 'txn.conflict',
      retryable: true,
    });
    expect(once).not.toBeInstanceOf(ConflictError);
    expect(server.requests).toHaveLength(1);

    replies.push(
      reply(409, abortBody('txn.conflict', 'conflict', 'k', true)),
      reply(409, abortBody('txn.conflict', 'conflict', 'k', true)),
    );
    const retried = await client().transact(ops, { conflictRetries: 2 });

    expect(retried).toEqual({ txid: 't-2', writes: [{ key: 'k', version: 4 }], reads: [] });
    expect(server.requests).toHaveLength(4);
    expect(sleeps).toEqual([25, 50]);
  });

  it('gives up after conflictRetries and never retries other aborts', async () => {
    for (let i = 0; i < 3; i++) replies.push(reply(409, abortBody('txn.conflict', 'conflict', 'k', true)));
    await expect(client().transact(ops, { conflictRetries: 1 })).rejects.toMatchObject({ reason: 'conflict' });
    expect(server.requests).toHaveLength(2);

    replies.length = 0;
    replies.push(reply(409, abortBody('txn.timeout', 'timeout', 'k', true)));
    await expect(client().transact(ops, { conflictRetries: 3 })).rejects.toMatchObject({ reason: 'timeout', code: 'txn.timeout' });
    replies.push(reply(503, abortBody('shard.unavailable', 'unavailable', 'k', true), { 'retry-after': '1' }));
    await expect(client().transact(ops, { conflictRetries: 3 })).rejects.toMatchObject({
      name: 'TransactionAbortedError',
      reason: 'unavailable',
      status: 503,
    });
    expect(server.requests).toHaveLength(4);
  });

  it('never retries 503 txn.outcomeUnknown and reports it as TransactionOutcomeUnknownError', async () => {
    replies.push(
      reply(
        503,
        {
          error: {
            code: 'txn.outcomeUnknown',
            message: 'transaction t-3 stopped',
            retryable: false,
            details: { txid: 't-3', deadline: '2030-01-01T00:00:00.000Z' },
          },
        },
        { 'retry-after': '1' },
      ),
    );

    const error = await client()
      .transact(ops, { conflictRetries: 3 })
      .catch((err: unknown) => err);

    expect(error).toBeInstanceOf(TransactionOutcomeUnknownError);
    expect(error).toMatchObject({ code: 'txn.outcomeUnknown', status: 503, retryable: false, txid: 't-3' });
    expect(server.requests).toHaveLength(1);
  });

  it('treats any other 5xx and a lost connection as an unknown outcome, without retrying', async () => {
    replies.push(reply(503, { error: { code: 'shard.unavailable', message: 'down', retryable: true } }));
    const unavailable = await client()
      .transact(ops)
      .catch((err: unknown) => err);
    replies.push((res) => {
      res.writeHead(504);
      res.end();
    });
    const gateway = await client()
      .transact(ops)
      .catch((err: unknown) => err);
    replies.push((res) => res.socket?.destroy());
    const dropped = await client()
      .transact(ops)
      .catch((err: unknown) => err);

    expect(unavailable).toMatchObject({ name: 'TransactionOutcomeUnknownError', code: 'shard.unavailable', status: 503, retryable: false });
    expect(gateway).toMatchObject({ name: 'TransactionOutcomeUnknownError', code: 'http.gatewayTimeout', status: 504 });
    expect(dropped).toMatchObject({ name: 'TransactionOutcomeUnknownError', code: 'network.failed', status: 0 });
    expect((dropped as TransactionOutcomeUnknownError).cause).toMatchObject({ name: 'NetworkError' });
    expect(server.requests).toHaveLength(3);
  });

  it('retries a 429, which the server answers before doing anything', async () => {
    replies.push(reply(429, { error: { code: 'throttled', message: 'slow down', retryable: true } }));

    const output = await client().transact(ops);

    expect(output.txid).toBe('t-2');
    expect(server.requests).toHaveLength(2);
  });

  it('keeps 400 and 413 as they are: refused, nothing written', async () => {
    replies.push(
      reply(400, {
        error: {
          code: 'request.invalid',
          message: 'ops.0: key k is required at version 1 and 2',
          retryable: false,
          details: { field: 'ops.1.ifVersion' },
        },
      }),
    );
    const invalid = await client()
      .transact(ops)
      .catch((err: unknown) => err);
    replies.push(
      reply(413, { error: { code: 'request.tooLarge', message: 'too many bytes', retryable: false, details: { field: 'ops' } } }),
    );
    const tooLarge = await client()
      .transact(ops)
      .catch((err: unknown) => err);

    expect(invalid).toMatchObject({ name: 'ValidationError', code: 'request.invalid', details: { field: 'ops.1.ifVersion' } });
    expect(tooLarge).toMatchObject({ name: 'PayloadTooLargeError', code: 'request.tooLarge' });
  });
});
