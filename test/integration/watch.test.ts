// GET /v1/watch through real HTTP on the shared local cloud: every acknowledged write, delete and transaction of
// the caller's namespace under the prefix, in per-key version order, with values inline when small; resumable from a
// saved cursor; nothing from another namespace or prefix; bad cursors and parameters refused with a clear 4xx.
import { boundAtMs, encodeCursor } from '../../lambdas/core/watch';
import { watchDefaults } from '../../schemas/topology';
import { call, errorOf, freshNamespace, kvPath } from './support';

interface Change {
  key: string;
  version: number;
  operation: 'put' | 'delete' | 'expire';
  contentType: string;
  size: number;
  value?: string;
  valueOmitted?: true;
  txid?: string;
  modifiedAt?: string;
  cursor: string;
}

interface Page {
  changes: Change[];
  cursor: string;
}

const watchPath = (query: Record<string, string | number | undefined>) => {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  return `/v1/watch?${params.toString()}`;
};

async function watchOnce(tenant: string, query: Record<string, string | number | undefined>): Promise<Page> {
  const response = await call(watchPath(query), { key: tenant });
  expect(response.status).toBe(200);
  return (await response.json()) as Page;
}

/** Follows the feed from `cursor` until `count` distinct changes have come (repeats dropped), or fails after `timeoutMs`. */
async function follow(tenant: string, prefix: string, cursor: string, count: number, timeoutMs = 20_000) {
  const changes: Change[] = [];
  const seen = new Set<string>();
  let repeats = 0;
  const deadline = Date.now() + timeoutMs;
  let at = cursor;
  while (changes.length < count) {
    if (Date.now() > deadline) throw new Error(`only ${changes.length} of ${count} changes came: ${JSON.stringify(changes)}`);
    const page = await watchOnce(tenant, { prefix, cursor: at, waitSeconds: 2 });
    for (const change of page.changes) {
      const id = `${change.key}@${change.version}`;
      if (seen.has(id)) repeats += 1;
      else changes.push(change);
      seen.add(id);
    }
    at = page.cursor;
  }
  return { changes, cursor: at, repeats };
}

const put = async (tenant: string, key: string, body: string | Uint8Array, query = '') => {
  const response = await call(`${kvPath(key)}${query}`, { method: 'PUT', key: tenant, body, headers: { 'content-type': 'text/plain' } });
  expect(response.status).toBe(200);
};

const text = (change: Change | undefined) => Buffer.from(change?.value ?? '', 'base64').toString('utf8');

describe('GET /v1/watch', () => {
  it('delivers every write, delete and transaction under the prefix, in per-key version order, and nothing else', async () => {
    // Prepare: a watcher from now; another tenant writing the same keys.
    const { key: tenant } = await freshNamespace('watch');
    const { key: other } = await freshNamespace('watch-other');
    const start = await watchOnce(tenant, { prefix: 'orders/' });
    expect(start.changes).toEqual([]);

    // Act
    await put(tenant, 'orders/1', 'one');
    await put(other, 'orders/1', 'theirs');
    await put(tenant, 'users/1', 'not watched');
    await put(tenant, 'orders/1', 'one, again', '?consistency=strong');
    await put(tenant, 'orders/big', 'x'.repeat(watchDefaults.inlineValueBytesMax + 1));
    expect((await call(kvPath('orders/1'), { method: 'DELETE', key: tenant })).status).toBe(200);
    const txn = await call('/v1/txn', {
      method: 'POST',
      key: tenant,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        ops: [
          { op: 'put', key: 'orders/2', value: 'two' },
          { op: 'put', key: 'orders/3', value: 'three' },
        ],
      }),
    });
    expect(txn.status).toBe(200);
    const { txid } = (await txn.json()) as { txid: string };

    // Assess
    const { changes } = await follow(tenant, 'orders/', start.cursor, 6);
    const summary = changes.map((change) => `${change.key}@${change.version} ${change.operation}`);
    expect(summary.filter((line) => line.startsWith('orders/1@'))).toEqual(['orders/1@1 put', 'orders/1@2 put', 'orders/1@3 delete']);
    expect(summary.sort()).toEqual(
      ['orders/1@1 put', 'orders/1@2 put', 'orders/1@3 delete', 'orders/2@1 put', 'orders/3@1 put', 'orders/big@1 put'].sort(),
    );
    const byKey = (key: string, version = 1) => changes.find((change) => change.key === key && change.version === version);
    expect(text(byKey('orders/1'))).toBe('one');
    expect(byKey('orders/1')).toMatchObject({ contentType: 'text/plain', size: 3 });
    expect(byKey('orders/big')).toMatchObject({ valueOmitted: true, size: watchDefaults.inlineValueBytesMax + 1 });
    expect(byKey('orders/big')?.value).toBeUndefined();
    expect([byKey('orders/2')?.txid, byKey('orders/3')?.txid]).toEqual([txid, txid]);
    expect(byKey('orders/1')?.txid).toBeUndefined();
    expect(Date.parse(byKey('orders/1')?.modifiedAt ?? '')).toBeGreaterThan(0);
  });

  it('resumes from a saved cursor after a pause and misses nothing; an empty prefix is the whole namespace', async () => {
    const { key: tenant } = await freshNamespace('watch-resume');
    const start = await watchOnce(tenant, {});
    await put(tenant, 'a', '1');
    const first = await follow(tenant, '', start.cursor, 1);
    // Paused: writes while nobody watches.
    for (const key of ['b/1', 'c', 'a']) await put(tenant, key, key);
    const resumed = await follow(tenant, '', first.cursor, 3);
    expect(resumed.changes.map((change) => `${change.key}@${change.version}`).sort()).toEqual(['a@2', 'b/1@1', 'c@1']);
    // Each change's own cursor continues after it.
    const fromSecond = await follow(tenant, '', resumed.changes[1]!.cursor, 1);
    expect(fromSecond.changes[0]).toEqual(resumed.changes[2]);
  });

  it('waits for a change within waitSeconds, and answers an empty page with a cursor that has moved when none comes', async () => {
    const { key: tenant } = await freshNamespace('watch-wait');
    const start = await watchOnce(tenant, { prefix: 'q/' });
    const started = Date.now();
    const waiting = watchOnce(tenant, { prefix: 'q/', cursor: start.cursor, waitSeconds: 10 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await put(tenant, 'q/1', 'hello');
    const page = await waiting;
    expect(page.changes.map((change) => change.key)).toEqual(['q/1']);
    expect(Date.now() - started).toBeLessThan(9_000);

    const empty = await watchOnce(tenant, { prefix: 'q/', cursor: page.cursor, waitSeconds: 1 });
    expect(empty.changes).toEqual([]);
    expect(empty.cursor).not.toBe(page.cursor);
  });

  it('refuses bad cursors and parameters with a 4xx naming them, a foreign cursor with 403, an old one with 410', async () => {
    const { key: tenant, namespace } = await freshNamespace('watch-bad');
    const { key: other } = await freshNamespace('watch-bad-other');
    const { cursor } = await watchOnce(tenant, {});
    const tampered = `${cursor.slice(0, -2)}${cursor.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const [query, code] of [
      [{ cursor: 'nonsense' }, 'watch.cursorInvalid'],
      [{ cursor: tampered }, 'watch.cursorInvalid'],
      [{ waitSeconds: watchDefaults.waitSecondsMax + 1 }, 'request.invalid'],
      [{ waitSeconds: -1 }, 'request.invalid'],
      [{ limit: 0 }, 'request.invalid'],
      [{ limit: watchDefaults.limitMax + 1 }, 'request.invalid'],
      [{ since: 'yesterday' }, 'request.invalid'],
    ] as const) {
      const error = await errorOf(await call(watchPath(query), { key: tenant }));
      expect({ query, status: error.status, code: error.code }).toEqual({ query, status: 400, code });
      expect(error.message.length).toBeGreaterThan(0);
    }
    expect(await errorOf(await call(watchPath({ cursor }), { key: other }))).toMatchObject({ status: 403, code: 'watch.cursorForeign' });
    expect((await call(watchPath({}), { key: null })).status).toBe(401);

    const old = encodeCursor(namespace, boundAtMs(Date.now() - (watchDefaults.retentionSeconds + 60) * 1000));
    const expired = await errorOf(await call(watchPath({ cursor: old }), { key: tenant }));
    expect(expired).toMatchObject({ status: 410, code: 'watch.cursorExpired' });
    const oldest = expired.details?.oldestCursor as string;
    expect((await call(watchPath({ cursor: oldest }), { key: tenant })).status).toBe(200);
  });
});
