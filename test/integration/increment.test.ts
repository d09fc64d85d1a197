// POST /v1/kv/{key}/increment through real HTTP on the shared local cloud: a counter's atomic increment as one
// versioned, replicated write; concurrent increments from several clients never lose one; bad input and counters
// that cannot be incremented are refused with a 4xx naming why, changing nothing.
import { adminKey, apiKey, call, errorOf, freshNamespace, kvPath } from './support';

interface Ack {
  key: string;
  version: number;
  value: number;
  consistency: string;
  copies?: number;
}

const increment = (key: string, body: unknown, options: { tenant?: string; query?: string; headers?: Record<string, string> } = {}) =>
  call(`${kvPath(key)}/increment${options.query ?? ''}`, {
    method: 'POST',
    key: options.tenant ?? apiKey(),
    headers: { 'content-type': 'application/json', ...options.headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });

async function ackOf(response: Response): Promise<Ack> {
  expect({ status: response.status, body: response.status === 200 ? 'ok' : await response.text() }).toEqual({ status: 200, body: 'ok' });
  return (await response.json()) as Ack;
}

/** One more API key of `namespace`: another client of the same keys. */
async function anotherKeyOf(namespace: string): Promise<string> {
  const response = await call('/v1/admin/keys', {
    method: 'POST',
    key: adminKey(),
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ namespace }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { apiKey: string }).apiKey;
}

async function strongRead(
  tenant: string,
  key: string,
): Promise<{ status: number; version: string | null; contentType: string | null; text: string }> {
  const response = await call(`${kvPath(key)}?consistency=strong`, { key: tenant });
  return {
    status: response.status,
    version: response.headers.get('x-ringstore-version'),
    contentType: response.headers.get('content-type'),
    text: await response.text(),
  };
}

describe('POST /v1/kv/{key}/increment', () => {
  it('starts a missing key at 0, adds 1 by default or by, and stores decimal text/plain as the next version', async () => {
    const { key: tenant } = await freshNamespace('incr');

    const first = await increment('hits', undefined, { tenant });
    const second = await ackOf(await increment('hits', { by: 41 }, { tenant }));
    const third = await ackOf(await increment('hits', { by: -50 }, { tenant, query: '?consistency=strong' }));

    expect(first.headers.get('etag')).toBe('"1"');
    expect(await ackOf(first)).toEqual({ key: 'hits', version: 1, consistency: 'eventual', value: 1 });
    expect(second).toEqual({ key: 'hits', version: 2, consistency: 'eventual', value: 42 });
    expect(third).toEqual({ key: 'hits', version: 3, consistency: 'strong', copies: 3, value: -8 });
    expect(await strongRead(tenant, 'hits')).toEqual({ status: 200, version: '3', contentType: 'text/plain', text: '-8' });
  });

  it('loses no increment of many concurrent clients: the counter ends at the number acknowledged', async () => {
    // Prepare: one namespace, several clients (each its own API key of it), each sending increments back to back.
    const clientCount = 6;
    const perClient = 10;
    const { namespace, key: first } = await freshNamespace('incr-race');
    const tenants = [first, ...(await Promise.all(Array.from({ length: clientCount - 1 }, () => anotherKeyOf(namespace))))];

    // Act: the clients at once, half of them writing strongly.
    const outcomes = await Promise.all(
      Array.from({ length: clientCount }, async (_, client) => {
        const statuses: Array<{ status: number; code?: string; value?: number }> = [];
        for (let n = 0; n < perClient; n += 1) {
          const query = client % 2 === 0 ? '' : '?consistency=strong';
          const response = await increment('counter', { by: 1 }, { tenant: tenants[client]!, query });
          if (response.status === 200) statuses.push({ status: 200, value: ((await response.json()) as Ack).value });
          else statuses.push({ status: response.status, code: (await errorOf(response)).code });
        }
        return statuses;
      }),
    );

    // Assess: every answer is an acknowledgement or a retryable 409; the counter counts the acknowledged ones exactly.
    const all = outcomes.flat();
    const acked = all.filter((outcome) => outcome.status === 200);
    expect(all.filter((outcome) => outcome.status !== 200)).toEqual(
      all.filter((outcome) => outcome.status !== 200).map(() => ({ status: 409, code: 'txn.conflict' })),
    );
    expect(acked.length).toBeGreaterThan(0);
    const final = await strongRead(first, 'counter');
    expect(Number(final.text)).toBe(acked.length);
    expect(Number(final.version)).toBe(acked.length);
    expect(new Set(acked.map((outcome) => outcome.value)).size).toBe(acked.length);
  });

  it.each([
    { what: 'a fraction', body: { by: 1.5 }, field: 'by', message: /body by: must be an integer/ },
    { what: 'a string', body: { by: '5' }, field: 'by', message: /body by: must be an integer/ },
    { what: 'past the safe integers', body: { by: 2 ** 53 }, field: 'by', message: /body by: must be an integer/ },
    { what: 'an unknown field', body: { amount: 5 }, field: 'amount', message: /unknown field amount/ },
    { what: 'a body that is not JSON', body: '{"by": ', field: undefined, message: /not valid JSON/ },
  ])('refuses $what with 400 request.invalid naming it, writing nothing', async ({ body, field, message }) => {
    const { key: tenant } = await freshNamespace('incr-bad');

    const error = await errorOf(await increment('k', body, { tenant }));

    expect(error).toMatchObject({ status: 400, code: 'request.invalid' });
    expect(error.message).toMatch(message);
    if (field !== undefined) expect(error.details).toMatchObject({ field });
    expect((await strongRead(tenant, 'k')).status).toBe(404);
  });

  it('refuses a key holding no integer (409 kv.notAnInteger) and a sum past the safe integers (409 kv.outOfRange), changing nothing', async () => {
    const { key: tenant } = await freshNamespace('incr-state');
    expect(
      (await call(kvPath('name'), { method: 'PUT', key: tenant, body: 'Ada', headers: { 'content-type': 'text/plain' } })).status,
    ).toBe(200);
    await ackOf(await increment('big', { by: Number.MAX_SAFE_INTEGER }, { tenant }));

    const text = await errorOf(await increment('name', { by: 1 }, { tenant }));
    const over = await errorOf(await increment('big', { by: 1 }, { tenant }));

    expect(text).toMatchObject({ status: 409, code: 'kv.notAnInteger', details: { key: 'name' } });
    expect(text.message).toMatch(/"Ada", not a decimal integer; nothing was written/);
    expect(over).toMatchObject({ status: 409, code: 'kv.outOfRange' });
    expect(await strongRead(tenant, 'name')).toMatchObject({ version: '1', text: 'Ada' });
    expect(await strongRead(tenant, 'big')).toMatchObject({ version: '1', text: String(Number.MAX_SAFE_INTEGER) });
  });

  it('holds If-Match and If-None-Match as a PUT does: 412 naming the header, nothing written', async () => {
    const { key: tenant } = await freshNamespace('incr-cond');
    await ackOf(await increment('c', { by: 1 }, { tenant, headers: { 'if-none-match': '*' } }));

    const created = await errorOf(await increment('c', { by: 1 }, { tenant, headers: { 'if-none-match': '*' } }));
    const stale = await errorOf(await increment('c', { by: 1 }, { tenant, headers: { 'if-match': '"7"' } }));
    const current = await ackOf(await increment('c', { by: 1 }, { tenant, headers: { 'if-match': '"1"' } }));
    const malformed = await errorOf(await increment('c', { by: 1 }, { tenant, headers: { 'if-match': '1' } }));

    expect(created).toMatchObject({ status: 412, code: 'kv.preconditionFailed', details: { field: 'if-none-match' } });
    expect(stale).toMatchObject({ status: 412, code: 'kv.preconditionFailed', details: { field: 'if-match' } });
    expect(current).toMatchObject({ version: 2, value: 2 });
    expect(malformed).toMatchObject({ status: 400, code: 'request.invalid', details: { field: 'if-match' } });
    expect(await strongRead(tenant, 'c')).toMatchObject({ version: '2', text: '2' });
  });
});
