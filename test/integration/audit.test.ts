// The audit trail of admin operations through real HTTP (docs/security.md, "Audit").
import { adminKey, call, errorOf, freshNamespace } from './support';

interface Entry {
  at: string;
  actor: { keyId: string; namespace: string; role: string };
  operation: string;
  target: Record<string, string>;
  request?: string;
  outcome: string;
  status: number;
  errorCode?: string;
}

const keyIdOf = (apiKey: string) => apiKey.split('_')[1]!;

const adminJson = (path: string, method: string, body: unknown, key = adminKey()) =>
  call(path, { method, key, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** The newest entries, enough pages to hold what this test just did (other suites write too). */
async function recentEntries(pages = 5): Promise<Entry[]> {
  const entries: Entry[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < pages; page += 1) {
    const response = await call(`/v1/admin/audit?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key: adminKey() });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { entries: Entry[]; cursor?: string };
    entries.push(...body.entries);
    if (!body.cursor) break;
    cursor = body.cursor;
  }
  return entries;
}

describe('audit trail', () => {
  it('records who changed what, when and how it ended, successes and failures alike, newest first', async () => {
    // Prepare
    const tenant = await freshNamespace('audited');
    const before = new Date().toISOString();

    // Act: a settings change, a rotation, and a rotation of a key that does not exist.
    expect((await adminJson(`/v1/admin/namespaces/${tenant.namespace}`, 'PUT', { writeConsistency: 'strong' })).status).toBe(200);
    expect((await adminJson(`/v1/admin/keys/${tenant.keyId}/rotate`, 'POST', { graceSeconds: 60 })).status).toBe(200);
    expect((await adminJson('/v1/admin/keys/000000000000/rotate', 'POST', {})).status).toBe(404);

    // Assess
    const entries = await recentEntries();
    const admin = { keyId: keyIdOf(adminKey()), role: 'admin' };
    const settings = entries.find((entry) => entry.operation === 'putNamespaceSettings' && entry.target.namespace === tenant.namespace);
    expect(settings).toMatchObject({ actor: admin, outcome: 'succeeded', status: 200, request: '{"writeConsistency":"strong"}' });
    const rotation = entries.find((entry) => entry.operation === 'rotateApiKey' && entry.target.keyId === tenant.keyId);
    expect(rotation).toMatchObject({ actor: admin, outcome: 'succeeded', status: 200 });
    expect(JSON.stringify(rotation)).not.toContain('rs_');
    const refused = entries.find(
      (entry) => entry.operation === 'rotateApiKey' && entry.target.keyId === '000000000000' && entry.at >= before,
    );
    expect(refused).toMatchObject({ outcome: 'failed', status: 404, errorCode: 'admin.keyNotFound' });
    expect(settings!.at >= before).toBe(true);
    const ours = entries.filter((entry) => [settings, rotation, refused].includes(entry));
    expect(ours.map((entry) => entry.operation)).toEqual(['rotateApiKey', 'rotateApiKey', 'putNamespaceSettings']);
  });

  it('cannot be read with a user key, and records the user key that tried an admin change', async () => {
    const tenant = await freshNamespace('snooper');
    expect(await errorOf(await call('/v1/admin/audit', { key: tenant.key }))).toMatchObject({ status: 403, code: 'auth.forbidden' });

    const attempt = await adminJson('/v1/admin/keys', 'POST', { namespace: tenant.namespace, role: 'admin' }, tenant.key);
    expect(attempt.status).toBe(403);

    const entry = (await recentEntries()).find((candidate) => candidate.actor.keyId === tenant.keyId);
    expect(entry).toMatchObject({
      actor: { keyId: tenant.keyId, namespace: tenant.namespace, role: 'user' },
      operation: 'createApiKey',
      outcome: 'failed',
      status: 403,
      errorCode: 'auth.forbidden',
    });
  });

  it('pages with a cursor and refuses a bad limit or cursor', async () => {
    await adminJson(`/v1/admin/namespaces/${(await freshNamespace('paged')).namespace}`, 'PUT', {});
    const first = (await (await call('/v1/admin/audit?limit=1', { key: adminKey() })).json()) as { entries: Entry[]; cursor: string };
    expect(first.entries).toHaveLength(1);
    const second = (await (
      await call(`/v1/admin/audit?limit=1&cursor=${encodeURIComponent(first.cursor)}`, { key: adminKey() })
    ).json()) as {
      entries: Entry[];
    };
    expect(second.entries).toHaveLength(1);
    expect(second.entries[0]!.at <= first.entries[0]!.at).toBe(true);
    expect(second.entries[0]).not.toEqual(first.entries[0]);

    for (const query of ['limit=0', 'limit=201', 'cursor=bm9wZQ']) {
      expect(await errorOf(await call(`/v1/admin/audit?${query}`, { key: adminKey() }))).toMatchObject({ status: 400 });
    }
  });
});
