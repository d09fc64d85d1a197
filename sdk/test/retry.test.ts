// Retry policy: which failures are retried, how many attempts, how long between them (full
// jitter, Retry-After), timeouts and aborts. Waits are recorded by an injected sleep.

import fc from 'fast-check';
import {
  backoffDelayMs,
  NetworkError,
  RETRY_BASE_DELAY_MS,
  RETRY_MAX_DELAY_MS,
  RingstoreClient,
  type RingstoreClientConfig,
  type RingstoreError,
} from '../src';
import { sendError, sendJson, startScriptedServer, type Reply, type RunningServer } from './support/fake-server';

describe('retries', () => {
  let server: RunningServer & { replies: Reply[] };
  let replies: Reply[];
  let sleeps: number[];

  beforeEach(async () => {
    sleeps = [];
    server = await startScriptedServer((r) => sendJson(r, 200, { key: 'k', version: 9 }));
    replies = server.replies;
  });

  afterEach(async () => {
    await server.close();
  });

  const client = (config: Partial<RingstoreClientConfig> = {}): RingstoreClient =>
    new RingstoreClient({
      endpoint: server.url,
      apiKey: 'secret',
      random: () => 0.5,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      ...config,
    });
  const fail =
    (status: number, code: string, retryable: boolean, headers: Record<string, string> = {}): Reply =>
    (res) =>
      sendError(res, status, code, 'scripted', retryable, headers);
  const failing = (count: number, reply: Reply): void => {
    for (let i = 0; i < count; i++) replies.push(reply);
  };

  it('attempts a 400 exactly once', async () => {
    failing(5, fail(400, 'kv.invalidKey', false));

    await expect(client().put('k', 'v')).rejects.toMatchObject({ code: 'kv.invalidKey' });

    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it.each([401, 403, 404, 409, 412, 413])('never retries %d, even when the body says retryable', async (status) => {
    failing(5, fail(status, 'scripted.code', true));

    await expect(client().put('k', 'v')).rejects.toMatchObject({ status });

    expect(server.requests).toHaveLength(1);
  });

  it('retries a 503 with Retry-After, waiting at least that long', async () => {
    failing(1, fail(503, 'shard.unavailable', true, { 'retry-after': '1' }));

    const result = await client().put('k', 'v');

    expect(result).toEqual({ key: 'k', version: 9, consistency: 'eventual' });
    expect(server.requests).toHaveLength(2);
    expect(sleeps).toEqual([1000]);
  });

  it('retries 429 and succeeds on the third attempt', async () => {
    failing(2, fail(429, 'api.throttled', true));

    await client().put('k', 'v');

    expect(server.requests).toHaveLength(3);
    expect(sleeps).toEqual([25, 50]); // half of 50 ms, half of 100 ms with random() = 0.5
  });

  it.each([
    [429, 'quota.keys'],
    [429, 'quota.bytes'],
    [503, 'shard.failingOver'],
  ])('attempts a %d %s once when the body says it is not retryable', async (status, code) => {
    failing(5, fail(status, code, false));

    await expect(client().put('k', 'v')).rejects.toMatchObject({ status, code, retryable: false });

    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('gives up after maxAttempts and throws the last error', async () => {
    failing(10, fail(503, 'shard.unavailable', true, { 'retry-after': '2' }));

    const error = (await client({ maxAttempts: 4 })
      .get('k')
      .catch((err: unknown) => err)) as RingstoreError;

    expect(error).toMatchObject({ name: 'ServiceUnavailableError', code: 'shard.unavailable', retryAfterSeconds: 2 });
    expect(server.requests).toHaveLength(4);
    expect(sleeps).toEqual([2000, 2000, 2000]);
  });

  it('does not block on a Retry-After longer than 20 s: the caller gets it at once', async () => {
    failing(5, fail(503, 'dr.replicationPending', true, { 'retry-after': '60' }));

    await expect(client().get('k')).rejects.toMatchObject({ retryAfterSeconds: 60 });

    expect(server.requests).toHaveLength(1);
  });

  it('retries 500/502/504 only when the body allows it', async () => {
    failing(1, fail(500, 'internal.bug', false));
    await expect(client().put('k', 'v')).rejects.toMatchObject({ code: 'internal.bug' });
    expect(server.requests).toHaveLength(1);

    failing(1, fail(500, 'internal.transient', true));
    failing(1, (res) => {
      res.writeHead(502);
      res.end();
    });
    failing(1, (res) => {
      res.writeHead(504, { 'content-type': 'text/html' });
      res.end('<html>timeout</html>');
    });
    await expect(client({ maxAttempts: 4 }).put('k', 'v')).resolves.toEqual({ key: 'k', version: 9, consistency: 'eventual' });
    expect(server.requests).toHaveLength(5);
  });

  it('retries a dropped connection, then reports NetworkError', async () => {
    failing(10, (res) => res.socket?.destroy());

    const error = await client()
      .put('k', 'v')
      .catch((err: unknown) => err);

    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ code: 'network.failed', status: 0, retryable: true });
    expect(server.requests).toHaveLength(3);
  });

  it('times out a slow attempt and retries it', async () => {
    failing(2, () => undefined); // never answers

    const result = await client({ requestTimeoutMs: 100 }).put('k', 'v');
    failing(1, () => undefined);
    const error = await client({ requestTimeoutMs: 100, maxAttempts: 1 })
      .get('k')
      .catch((err: unknown) => err);

    expect(result.version).toBe(9);
    expect(error).toMatchObject({ name: 'NetworkError', code: 'network.timeout', retryable: true });
    expect(server.requests).toHaveLength(4);
  });

  it('stops at once when the caller aborts, also while waiting between attempts', async () => {
    failing(1, fail(503, 'shard.unavailable', true, { 'retry-after': '10' }));
    const controller = new AbortController();
    const real = new RingstoreClient({ endpoint: server.url, apiKey: 'secret' }); // real sleep
    // Retry-After is 10 s and jest's test timeout 5 s: the test finishes only if the abort cuts the wait.
    setTimeout(() => controller.abort(), 100);

    const error = await real.get('k', { abortSignal: controller.signal }).catch((err: unknown) => err);

    expect(error).toMatchObject({ name: 'NetworkError', code: 'network.aborted', retryable: false });
    expect(server.requests).toHaveLength(1);
    await expect(real.get('k', { abortSignal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'network.aborted' });
    expect(server.requests).toHaveLength(1);
  });

  it('draws each wait with full jitter under an exponential ceiling capped at 2 s', async () => {
    failing(10, fail(503, 'shard.unavailable', true));

    await client({ maxAttempts: 10, random: () => 0.999999 })
      .get('k')
      .catch(() => undefined);
    const highest = [...sleeps];
    sleeps = [];
    failing(10, fail(503, 'shard.unavailable', true));
    await client({ maxAttempts: 10, random: () => 0 })
      .get('k')
      .catch(() => undefined);

    expect(highest).toEqual([49, 99, 199, 399, 799, 1599, 1999, 1999, 1999]);
    expect(sleeps).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('keeps every backoff in [0, min(cap, base * 2^(retry-1))) for any random draw', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 64 }), fc.double({ min: 0, max: 1, noNaN: true }), (retry, draw) => {
        const delay = backoffDelayMs(retry, () => draw);
        const ceiling = Math.min(RETRY_MAX_DELAY_MS, RETRY_BASE_DELAY_MS * 2 ** (retry - 1));
        return Number.isInteger(delay) && delay >= 0 && delay < ceiling;
      }),
    );
  });
});
