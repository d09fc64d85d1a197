// Listing across shards, the ring, bad input, and the documentation routes.
import { tokenOf, Ring } from '../../lambdas/core/ring';
import { call, errorOf, freshNamespace, kvPath } from './support';

let key: string;
let namespace: string;

beforeAll(async () => {
  ({ key, namespace } = await freshNamespace('list'));
});

describe('GET /v1/kv', () => {
  it('lists keys across all shards in key order with a stable cursor', async () => {
    const keys = Array.from({ length: 23 }, (_, i) => `item/${String(i).padStart(3, '0')}`);
    await Promise.all(keys.map((k) => call(kvPath(k), { method: 'PUT', key, body: k })));
    await call(kvPath('other/1'), { method: 'PUT', key, body: 'x' });

    const ring = new Ring(
      (await (await call('/v1/ring', { key })).json()) as {
        epoch: number;
        replicationFactor: number;
        vnodesPerShard: number;
        shards: [];
      },
    );
    const owners = new Set(keys.map((k) => ring.ownerOf(tokenOf(namespace, k)).id));
    expect(owners.size).toBeGreaterThan(1);

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const response = await call(`/v1/kv?prefix=item/&limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key });
      expect(response.status).toBe(200);
      const page = (await response.json()) as { items: Array<{ key: string; version: number; size: number }>; cursor?: string };
      expect(page.items.length).toBeLessThanOrEqual(5);
      seen.push(...page.items.map((item) => item.key));
      cursor = page.cursor;
      pages += 1;
    } while (cursor && pages < 20);
    expect(seen).toEqual(keys);
    expect(pages).toBe(5);

    // The same cursor gives the same page again.
    const first = (await (await call('/v1/kv?prefix=item/&limit=5', { key })).json()) as { cursor: string };
    const again = async () => (await call(`/v1/kv?prefix=item/&limit=5&cursor=${encodeURIComponent(first.cursor)}`, { key })).json();
    expect(await again()).toEqual(await again());
  });

  it('rejects a bad cursor or limit with a clear 400', async () => {
    expect(await errorOf(await call('/v1/kv?cursor=zzz', { key }))).toMatchObject({ status: 400, code: 'kv.cursorInvalid' });
    const other = (await (await call('/v1/kv?prefix=item/&limit=1', { key })).json()) as { cursor: string };
    expect(await errorOf(await call(`/v1/kv?prefix=other/&cursor=${other.cursor}`, { key }))).toMatchObject({ code: 'kv.cursorInvalid' });
    for (const limit of ['0', '1001', 'ten']) {
      expect(await errorOf(await call(`/v1/kv?limit=${limit}`, { key }))).toMatchObject({ status: 400, code: 'request.invalid' });
    }
  });
});

describe('GET /v1/ring', () => {
  it('describes epoch, shards, ranges with owners and RF replicas', async () => {
    const ring = (await (await call('/v1/ring', { key })).json()) as {
      epoch: number;
      replicationFactor: number;
      shards: Array<{ id: number; table: string }>;
      ranges: Array<{ owner: number; replicas: number[] }>;
    };
    expect(ring.epoch).toBeGreaterThanOrEqual(1);
    expect(ring.replicationFactor).toBe(3);
    expect(ring.shards).toHaveLength(4);
    expect(ring.shards[0]!.table).toMatch(/shard-0$/);
    expect(ring.ranges).toHaveLength(4 * 16);
    for (const range of ring.ranges) {
      expect(range.replicas[0]).toBe(range.owner);
      expect(new Set(range.replicas).size).toBe(3);
    }
  });
});

describe('bad input', () => {
  it('answers clear 4xx JSON errors and never 500', async () => {
    const cases: Array<[string, Parameters<typeof call>[1], number, string]> = [
      ['/v1/kv/', { method: 'PUT', key, body: 'x' }, 400, 'kv.keyInvalid'],
      [kvPath('k'.repeat(1025)), { method: 'PUT', key, body: 'x' }, 400, 'kv.keyInvalid'],
      [kvPath('é'.repeat(513)), { method: 'GET', key }, 400, 'kv.keyInvalid'],
      ['/v1/kv/%E0%A4%A', { method: 'GET', key }, 400, 'request.invalid'],
      ['/v1/nothing-here', { method: 'GET', key }, 404, 'route.notFound'],
      ['/v1/kv/x', { method: 'PATCH', key }, 405, 'route.methodNotAllowed'],
      [`${kvPath('k')}/uploads`, { method: 'POST', key, body: '{"size":-1}' }, 400, 'request.invalid'],
      [`${kvPath('k')}/uploads`, { method: 'POST', key, body: '{"unknown":1}' }, 400, 'request.invalid'],
      [
        `${kvPath('k')}/uploads/not-an-id/commit`,
        { method: 'POST', key, body: `{"sha256":"${'a'.repeat(64)}"}` },
        404,
        'kv.uploadNotFound',
      ],
      [
        `${kvPath('k')}/uploads/00000000-0000-4000-8000-000000000000/commit`,
        { method: 'POST', key, body: '{"sha256":"short"}' },
        400,
        'request.invalid',
      ],
    ];
    for (const [path, options, status, code] of cases) {
      const response = await call(path, options);
      expect({ path, ...(await errorOf(response)) }).toMatchObject({ path, status, code });
    }
    expect((await call(kvPath('k'), { key })).status).toBe(404);
  });
});

describe('documentation', () => {
  it('serves the OpenAPI 3.1 document and a readable page without a key', async () => {
    const document = (await (await call('/openapi.json', { key: null })).json()) as { openapi: string; paths: Record<string, unknown> };
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/v1/kv/{key}', '/v1/kv', '/v1/ring', '/v1/admin/keys']));
    const page = await call('/docs', { key: null });
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(await page.text()).toContain('/v1/kv/{key}/uploads/{uploadId}/commit');
  });
});
