// Error mapping: each HTTP status becomes its typed error, keeping the server's code, message,
// request id and Retry-After.

import {
  AuthenticationError,
  ConflictError,
  ForbiddenError,
  NetworkError,
  NotFoundError,
  PayloadTooLargeError,
  PreconditionFailedError,
  RingstoreClient,
  RingstoreError,
  ServerError,
  ServiceUnavailableError,
  ThrottledError,
  TransactionAbortedError,
  TransactionOutcomeUnknownError,
  ValidationError,
} from '../src';
import { startServer, type RunningServer } from './support/fake-server';

interface Scripted {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

describe('error mapping', () => {
  let server: RunningServer;
  let next: Scripted;

  beforeAll(async () => {
    server = await startServer((_req, res) => {
      res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers });
      res.end(next.body ?? '');
    });
  });

  afterAll(async () => {
    await server.close();
  });

  // One attempt, so the mapping is seen without retries.
  const client = (): RingstoreClient => new RingstoreClient({ endpoint: server.url, apiKey: 'k', maxAttempts: 1 });
  const envelope = (code: string, retryable = false): string =>
    JSON.stringify({ error: { code, message: `message of ${code}`, retryable } });

  it.each([
    [400, 'kv.invalidKey', ValidationError],
    [401, 'auth.invalidKey', AuthenticationError],
    [403, 'auth.forbidden', ForbiddenError],
    [404, 'kv.notFound', NotFoundError],
    [409, 'txn.conflict', ConflictError],
    [412, 'kv.preconditionFailed', PreconditionFailedError],
    [413, 'kv.valueTooLarge', PayloadTooLargeError],
    [429, 'api.throttled', ThrottledError],
    [503, 'dr.replicationPending', ServiceUnavailableError],
    [500, 'internal.bug', ServerError],
  ])('maps %d to its class and keeps the code %s', async (status, code, ErrorClass) => {
    next = { status, body: envelope(code), headers: { 'x-amzn-requestid': 'req-123' } };

    const error = await client()
      .get('k')
      .catch((err: unknown) => err);

    expect(error).toBeInstanceOf(ErrorClass);
    expect(error).toBeInstanceOf(RingstoreError);
    expect(error).toMatchObject({ code, status, message: `message of ${code}`, requestId: 'req-123', name: ErrorClass.name });
  });

  it('sets retryable by the retry policy, not only by the body', async () => {
    const cases: Array<[Scripted, boolean]> = [
      [{ status: 409, body: envelope('txn.conflict', true) }, false], // 4xx other than 429: never
      [{ status: 429, body: envelope('quota.keys', false) }, false], // at its storage quota until a delete
      [{ status: 429, body: '' }, true], // API Gateway's throttling carries no envelope
      [{ status: 503, body: envelope('shard.failingOver', false) }, false], // a write whose outcome is unknown
      [{ status: 503, body: envelope('shard.unavailable', true) }, true],
      [{ status: 500, body: envelope('internal.bug', false) }, false],
      [{ status: 500, body: envelope('internal.transient', true) }, true],
      [{ status: 502, body: '' }, true],
      [{ status: 504, body: '<html>gateway timeout</html>' }, true],
    ];
    for (const [scripted, retryable] of cases) {
      next = scripted;
      const error = await client()
        .get('k')
        .catch((err: unknown) => err);
      expect({ status: scripted.status, retryable: (error as RingstoreError).retryable }).toEqual({ status: scripted.status, retryable });
    }
  });

  it('reads Retry-After in seconds and as an HTTP date', async () => {
    next = { status: 503, body: envelope('shard.unavailable'), headers: { 'retry-after': '7' } };
    const seconds = await client()
      .get('k')
      .catch((err: unknown) => err);

    next = { status: 429, body: envelope('api.throttled'), headers: { 'retry-after': new Date(Date.now() + 30_000).toUTCString() } };
    const date = await client()
      .get('k')
      .catch((err: unknown) => err);

    expect(seconds).toMatchObject({ name: 'ServiceUnavailableError', retryAfterSeconds: 7 });
    expect((date as ThrottledError).retryAfterSeconds).toBeGreaterThan(25);
    expect((date as ThrottledError).retryAfterSeconds).toBeLessThanOrEqual(30);
  });

  it('falls back to http.* codes when the body has none (API Gateway style)', async () => {
    next = { status: 403, body: JSON.stringify({ message: 'Forbidden' }) };
    const gateway = await client()
      .get('k')
      .catch((err: unknown) => err);

    next = { status: 502, body: '' };
    const bare = await client()
      .get('k')
      .catch((err: unknown) => err);

    next = { status: 418, body: '' };
    const unknown = await client()
      .get('k')
      .catch((err: unknown) => err);

    expect(gateway).toMatchObject({ name: 'ForbiddenError', code: 'http.forbidden', message: 'Forbidden' });
    expect(bare).toMatchObject({ name: 'ServerError', code: 'http.badGateway', status: 502 });
    expect(unknown).toMatchObject({ name: 'RingstoreError', code: 'http.418', status: 418, retryable: false });
  });

  it('maps any error marked details.status aborted to TransactionAbortedError, and txn.outcomeUnknown to its own class', async () => {
    const details = { txid: 't-9', status: 'aborted', reason: 'precondition', key: 'k' };
    next = {
      status: 412,
      body: JSON.stringify({ error: { code: 'kv.preconditionFailed', message: 'transaction aborted', retryable: false, details } }),
    };
    const aborted = await client()
      .get('k')
      .catch((err: unknown) => err);
    next = {
      status: 412,
      body: JSON.stringify({
        error: { code: 'kv.preconditionFailed', message: 'plain', retryable: false, details: { field: 'if-match' } },
      }),
    };
    const plain = await client()
      .get('k')
      .catch((err: unknown) => err);
    next = {
      status: 503,
      body: JSON.stringify({ error: { code: 'txn.outcomeUnknown', message: 'unknown', retryable: false, details: { txid: 't-8' } } }),
    };
    const unknown = await client()
      .get('k')
      .catch((err: unknown) => err);

    expect(aborted).toBeInstanceOf(TransactionAbortedError);
    expect(aborted).toMatchObject({ reason: 'precondition', key: 'k', txid: 't-9', code: 'kv.preconditionFailed', status: 412, details });
    expect(plain).toBeInstanceOf(PreconditionFailedError);
    expect(plain).toMatchObject({ details: { field: 'if-match' } });
    expect(unknown).toBeInstanceOf(TransactionOutcomeUnknownError);
    expect(unknown).toMatchObject({ txid: 't-8', status: 503, retryable: false });
  });

  it('maps an unreachable endpoint to NetworkError with status 0', async () => {
    const closed = await startServer(() => undefined);
    const url = closed.url;
    await closed.close();

    const error = await new RingstoreClient({ endpoint: url, apiKey: 'k', maxAttempts: 1 }).get('k').catch((err: unknown) => err);

    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ code: 'network.failed', status: 0, retryable: true });
    expect((error as NetworkError).cause).toBeDefined();
  });
});
