// client.watch against a scripted fetch (no server): it follows the cursor page after page, resumes after transient
// failures from the last cursor without losing or repeating a change, drops repeats with bounded memory, throws
// the typed errors retrying cannot help (410 with its oldest cursor), and stops cleanly when aborted.

import {
  ForbiddenError,
  RingstoreClient,
  ServerError,
  ValidationError,
  WATCH_WAIT_SECONDS_MAX,
  WatchCursorExpiredError,
  type WatchChange,
  type WatchOptions,
  type WatchStream,
} from '../src';

/** One answer of the scripted fetch: a JSON response, a network failure, or a long poll that only ends on abort. */
type Step = { status: number; body: unknown; headers?: Record<string, string> } | 'network failure' | 'quiet';

interface Scripted {
  client: RingstoreClient;
  /** The query of each request, in order. */
  queries: URLSearchParams[];
  /** Each wait the client asked its sleep for, in ms. */
  sleeps: number[];
  /** Runs before each request is answered (to look at the stream's state then). */
  onRequest?: () => void;
}

/** The URL fetch was given, whichever form it took. */
const urlOf = (url: string | URL | Request): string => (typeof url === 'string' ? url : url instanceof URL ? url.href : url.url);

/** Resolves never, rejects when `signal` aborts, as fetch does for a request in flight. */
function pendingUntilAborted(signal: AbortSignal | null | undefined): Promise<never> {
  return new Promise((_resolve, reject) => {
    signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')), { once: true });
  });
}

/** A client whose requests get `steps` in turn; one attempt each (the watch's own resumes are what is tested). */
function scripted(steps: Step[], sleep?: (ms: number, signal?: AbortSignal) => Promise<void>): Scripted {
  const state: Scripted = { queries: [], sleeps: [] } as unknown as Scripted;
  const fetch = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    state.queries.push(new URL(urlOf(url)).searchParams);
    state.onRequest?.();
    // Past the script, a refusal: a test that reads further than it scripted fails at once, rather than waiting.
    const step = steps.shift() ?? failure(400, 'script.exhausted', false);
    if (step === 'quiet') return pendingUntilAborted(init?.signal);
    if (step === 'network failure') throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') });
    return new Response(JSON.stringify(step.body), {
      status: step.status,
      headers: { 'content-type': 'application/json', ...step.headers },
    });
  };
  state.client = new RingstoreClient({
    endpoint: 'http://ringstore.test',
    apiKey: 'k',
    maxAttempts: 1,
    fetch,
    random: () => 0.5,
    sleep: async (ms, signal) => {
      state.sleeps.push(ms);
      await sleep?.(ms, signal);
    },
  });
  return state;
}

/** A change of the scripted feed: `cursor` names where it ends. */
function change(key: string, version: number, cursor: string, extra: Partial<Record<string, unknown>> = {}): Record<string, unknown> {
  return { key, version, operation: 'put', contentType: 'text/plain', size: 1, value: 'eA==', cursor, ...extra };
}

const page = (changes: Record<string, unknown>[], cursor: string): Step => ({ status: 200, body: { changes, cursor } });
const failure = (status: number, code: string, retryable: boolean, details?: Record<string, unknown>): Step => ({
  status,
  body: { error: { code, message: `scripted ${code}`, retryable, ...(details === undefined ? {} : { details }) } },
});

/** The first `count` changes of the stream, leaving the loop after the last. */
async function take(stream: WatchStream, count: number): Promise<WatchChange[]> {
  const taken: WatchChange[] = [];
  if (count === 0) return taken;
  for await (const next of stream) {
    taken.push(next);
    if (taken.length === count) break;
  }
  return taken;
}

const shown = (changes: readonly WatchChange[]) => changes.map((c) => `${c.operation} ${c.key} v${c.version}`);
const cursors = (queries: readonly URLSearchParams[]) => queries.map((query) => query.get('cursor'));

describe('client.watch', () => {
  it('long-polls from now, then follows each answer’s cursor, handing out decoded changes', async () => {
    const { client, queries } = scripted([
      page(
        [
          change('orders/1', 1, 'c1', { value: 'aGk=', size: 2, txid: 't-1' }),
          change('orders/2', 4, 'c2', { valueOmitted: true, value: undefined }),
        ],
        'c2',
      ),
      page([change('orders/1', 2, 'c3', { operation: 'delete', size: 0, value: undefined })], 'c3'),
    ]);

    const changes = await take(client.watch('orders/'), 3);

    expect(shown(changes)).toEqual(['put orders/1 v1', 'put orders/2 v4', 'delete orders/1 v2']);
    expect(changes[0]).toMatchObject({ txid: 't-1', value: new Uint8Array([104, 105]), cursor: 'c1' });
    expect(changes[1]).toMatchObject({ valueOmitted: true });
    expect(changes[1]?.value).toBeUndefined();
    expect(queries.map((query) => Object.fromEntries(query))).toEqual([
      { prefix: 'orders/', waitSeconds: String(WATCH_WAIT_SECONDS_MAX) },
      { prefix: 'orders/', waitSeconds: '20', cursor: 'c2' },
    ]);
  });

  it('resumes after a 503 and a network failure from the last cursor, losing and repeating nothing', async () => {
    const { client, queries, sleeps } = scripted([
      page([change('a', 1, 'c1'), change('b', 1, 'c2')], 'c2'),
      failure(503, 'shard.unavailable', true),
      'network failure',
      page([change('c', 1, 'c3')], 'c3'),
    ]);
    const stream = client.watch('', { cursor: 'c0' });

    const changes = await take(stream, 3);

    expect(shown(changes)).toEqual(['put a v1', 'put b v1', 'put c v1']);
    expect(cursors(queries)).toEqual(['c0', 'c2', 'c2', 'c2']);
    // Full jitter at random() = 0.5: half of 50 ms, then half of 100 ms.
    expect(sleeps).toEqual([25, 50]);
    expect(stream.cursor).toBe('c3');
  });

  it('tells onRetry of each transient failure, and waits at least the Retry-After of a 429 it was not given time for', async () => {
    const retries: string[] = [];
    const { client, sleeps } = scripted([
      failure(429, 'quota.rate', true),
      { ...(failure(429, 'quota.rate', true) as { status: number; body: unknown }), headers: { 'retry-after': '30' } },
      page([change('a', 1, 'c1')], 'c1'),
    ]);

    await take(client.watch('', { onRetry: (error, retry) => retries.push(`${retry} ${error.code}`) }), 1);

    expect(retries).toEqual(['1 quota.rate', '2 quota.rate']);
    expect(sleeps).toEqual([25, 30_000]);
  });

  it('gives a long poll its wait on top of the request timeout, so a quiet feed is no timeout', async () => {
    const queries: string[] = [];
    const slowAnswer = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
      queries.push(urlOf(url));
      await new Promise((resolve) => setTimeout(resolve, 300));
      if (init?.signal?.aborted === true) throw new DOMException('aborted', 'AbortError');
      return new Response(JSON.stringify({ changes: [change('a', 1, 'c1')], cursor: 'c1' }), { status: 200 });
    };
    const client = new RingstoreClient({
      endpoint: 'http://ringstore.test',
      apiKey: 'k',
      maxAttempts: 1,
      requestTimeoutMs: 100,
      fetch: slowAnswer,
    });

    // A timeout would be retried forever: thrown instead, so that the test fails at once.
    const changes = await take(
      client.watch('', {
        waitSeconds: 1,
        onRetry: (error) => {
          throw error;
        },
      }),
      1,
    );

    expect(shown(changes)).toEqual(['put a v1']);
    expect(queries).toHaveLength(1);
  });

  it('drops a repeat and an older version of a key, keeping each key’s versions in order', async () => {
    const { client } = scripted([
      page([change('a', 1, 'c1'), change('a', 2, 'c2'), change('a', 1, 'c3'), change('b', 1, 'c4'), change('a', 2, 'c5')], 'c5'),
      page([change('b', 1, 'c6'), change('a', 3, 'c7')], 'c7'),
    ]);

    const changes = await take(client.watch(''), 4);

    expect(shown(changes)).toEqual(['put a v1', 'put a v2', 'put b v1', 'put a v3']);
  });

  it('delivers the expiry of a delivered version, and a key written again after it or after its tombstone aged out', async () => {
    const at = (minute: number) => ({ modifiedAt: `2026-01-01T00:${String(minute).padStart(2, '0')}:00.000Z` });
    const { client } = scripted([
      page(
        [
          change('session', 3, 'c1', at(1)),
          change('session', 3, 'c2', { ...at(1), operation: 'expire', value: undefined }),
          change('session', 3, 'c3', { ...at(1), operation: 'expire', value: undefined }), // a repeat of the expiry
          change('session', 3, 'c4', at(1)), // a repeat of the put that expired
          change('session', 1, 'c5', at(9)), // the key written again: its versions start over
          change('doc', 2, 'c6', at(1)),
          change('doc', 3, 'c7', { ...at(2), operation: 'delete', value: undefined }),
          change('doc', 2, 'c8', at(1)), // a late repeat of the put before the delete
          change('doc', 1, 'c9', at(30)), // written again once the tombstone was gone
        ],
        'c9',
      ),
    ]);

    const changes = await take(client.watch(''), 6);

    expect(shown(changes)).toEqual(['put session v3', 'expire session v3', 'put session v1', 'put doc v2', 'delete doc v3', 'put doc v1']);
  });

  it('remembers rememberedKeysMax keys: past it, a repeat of the least recently delivered key comes again', async () => {
    const { client } = scripted([
      page([change('a', 1, 'c1'), change('b', 1, 'c2'), change('c', 1, 'c3'), change('a', 1, 'c4'), change('c', 1, 'c5')], 'c5'),
      page([change('d', 1, 'c6')], 'c6'),
    ]);

    const changes = await take(client.watch('', { rememberedKeysMax: 2 }), 5);

    expect(shown(changes)).toEqual(['put a v1', 'put b v1', 'put c v1', 'put a v1', 'put d v1']);
  });

  it('follows the cursor across empty pages, and its cursor says where it stands meanwhile', async () => {
    const state = scripted([page([], 'e1'), page([], 'e2'), page([change('x', 1, 'x1')], 'x2')]);
    const stream = state.client.watch('x');
    const seenAtRequest: Array<string | undefined> = [];
    state.onRequest = () => seenAtRequest.push(stream.cursor);

    const changes = await take(stream, 1);

    expect(shown(changes)).toEqual(['put x v1']);
    expect(cursors(state.queries)).toEqual([null, 'e1', 'e2']);
    expect(seenAtRequest).toEqual([undefined, 'e1', 'e2']);
    // Moved to the change's cursor before the loop saw the change; to the page's once the loop asks for more.
    expect(stream.cursor).toBe('x1');
  });

  it('waits a second after an empty page when it does not long-poll', async () => {
    const { client, queries, sleeps } = scripted([page([], 'e1'), page([], 'e2'), page([change('x', 1, 'x1')], 'x1')]);

    await take(client.watch('', { waitSeconds: 0, limit: 10 }), 1);

    expect(queries.map((query) => [query.get('waitSeconds'), query.get('limit')])).toEqual([
      ['0', '10'],
      ['0', '10'],
      ['0', '10'],
    ]);
    expect(sleeps).toEqual([1000, 1000]);
  });

  it('continues from its cursor when iterated again after the loop was left', async () => {
    const { client, queries } = scripted([
      page([change('a', 1, 'c1'), change('b', 1, 'c2')], 'c2'),
      page([change('b', 1, 'c2')], 'c2'),
      page([change('c', 1, 'c3')], 'c3'),
    ]);
    const stream = client.watch('');

    const first = await take(stream, 1);
    const then = await take(stream, 2);

    expect(shown([...first, ...then])).toEqual(['put a v1', 'put b v1', 'put c v1']);
    // The first page also held b, never handed out: iterating again reads after a, so b comes, once.
    expect(cursors(queries)).toEqual([null, 'c1', 'c2']);
  });

  it('throws 410 watch.cursorExpired as WatchCursorExpiredError with the oldest cursor, at once', async () => {
    const details = { field: 'cursor', oldestCursor: 'oldest', retentionSeconds: 86_400 };
    const { client, queries, sleeps } = scripted([failure(410, 'watch.cursorExpired', false, details)]);

    const error = await take(client.watch('', { cursor: 'ancient' }), 1).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(WatchCursorExpiredError);
    expect(error).toMatchObject({ code: 'watch.cursorExpired', status: 410, oldestCursor: 'oldest', retentionSeconds: 86_400 });
    expect(queries).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it.each([
    { status: 400, code: 'watch.cursorInvalid', type: ValidationError },
    { status: 403, code: 'watch.cursorForeign', type: ForbiddenError },
    { status: 500, code: 'internal.bug', type: ServerError },
  ])('throws $status $code as $type.name without retrying when the server says it cannot help', async ({ status, code, type }) => {
    const { client, queries } = scripted([failure(status, code, false)]);

    const error = await take(client.watch('', { cursor: 'c0' }), 1).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(type);
    expect(error).toMatchObject({ code, status });
    expect(queries).toHaveLength(1);
  });

  it('ends the loop without an error when aborted in the middle of a long poll', async () => {
    const controller = new AbortController();
    const state = scripted([page([change('a', 1, 'c1')], 'c2'), 'quiet']);
    const stream = state.client.watch('', { abortSignal: controller.signal });
    state.onRequest = () => {
      if (state.queries.length === 2) setTimeout(() => controller.abort(), 10);
    };

    const changes: WatchChange[] = [];
    for await (const next of stream) changes.push(next);

    expect(shown(changes)).toEqual(['put a v1']);
    expect(state.queries).toHaveLength(2);
    expect(stream.cursor).toBe('c2');
  });

  it('ends the loop without an error when aborted while it waits to retry', async () => {
    const controller = new AbortController();
    const waitUntilAborted = (_ms: number, signal?: AbortSignal) => pendingUntilAborted(signal);
    const { client, queries } = scripted(['network failure'], waitUntilAborted);
    const stream = client.watch('', {
      cursor: 'c0',
      abortSignal: controller.signal,
      onRetry: () => setTimeout(() => controller.abort(), 10),
    });

    const changes = await take(stream, 1);

    expect(changes).toEqual([]);
    expect(queries).toHaveLength(1);
    expect(stream.cursor).toBe('c0');
  });

  it('ends at once, without a request, when its signal was aborted before', async () => {
    const { client, queries } = scripted([]);

    const changes = await take(client.watch('', { abortSignal: AbortSignal.abort() }), 1);

    expect(changes).toEqual([]);
    expect(queries).toHaveLength(0);
  });

  it.each<{ what: string; prefix?: string; options: WatchOptions }>([
    { what: 'waitSeconds over 20', options: { waitSeconds: 21 } },
    { what: 'a negative waitSeconds', options: { waitSeconds: -1 } },
    { what: 'a limit of 0', options: { limit: 0 } },
    { what: 'a limit over 1000', options: { limit: 1001 } },
    { what: 'an empty cursor', options: { cursor: '' } },
    { what: 'a prefix over 1024 characters', prefix: 'p'.repeat(1025), options: {} },
    { what: 'rememberedKeysMax of 0', options: { rememberedKeysMax: 0 } },
  ])('refuses $what when it is made, before any request', ({ prefix = '', options }) => {
    const { client, queries } = scripted([]);

    expect(() => client.watch(prefix, options)).toThrow(ValidationError);
    expect(queries).toHaveLength(0);
  });
});
