// No key's secret in the audit trail or the cloud's log lines (docs/security.md, "Audit"), through real HTTP:
// a rotation asked with the whole key `rs_<keyId>_<secret>` instead of its id, and one with a key mangled in
// the pasting. The suite's cloud logs at INFO into RINGSTORE_IT_CLOUD_LOG (global-setup.ts).
import { readFile } from 'node:fs/promises';
import { adminKey, call, errorOf, freshNamespace, sleep } from './support';

interface Entry {
  requestId: string;
  operation: string;
  target: Record<string, string>;
  outcome: string;
  status: number;
}

const rotate = (keyIdOrKey: string, body: Record<string, unknown>) =>
  call(`/v1/admin/keys/${keyIdOrKey}/rotate`, {
    method: 'POST',
    key: adminKey(),
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

async function auditTrail(): Promise<Entry[]> {
  const response = await call('/v1/admin/audit?limit=200', { key: adminKey() });
  expect(response.status).toBe(200);
  return ((await response.json()) as { entries: Entry[] }).entries;
}

/** The cloud's log once it holds `requestId`'s audit line: the gateway answers before the line is copied here. */
async function cloudLogWith(requestId: string): Promise<string> {
  const file = process.env.RINGSTORE_IT_CLOUD_LOG;
  if (!file) throw new Error('RINGSTORE_IT_CLOUD_LOG is not set: integration tests run through jest global setup');
  const deadline = Date.now() + 10_000;
  for (;;) {
    const log = await readFile(file, 'utf8');
    if (log.includes(requestId)) return log;
    if (Date.now() > deadline) throw new Error(`the cloud's log has no audit line of request ${requestId} after 10 s`);
    await sleep(100);
  }
}

describe('a rotation asked with a whole key', () => {
  it('takes its key id, and leaves no secret in the audit trail or the log', async () => {
    // Prepare
    const tenant = await freshNamespace('whole-key');
    const secretOf = (apiKey: string) => apiKey.slice(`rs_${tenant.keyId}_`.length);

    // Act: the whole key where the id goes, then a key mangled when pasted (and pasted in the body too).
    const rotated = await rotate(tenant.key, { graceSeconds: 60 });
    const rotatedBody = (await rotated.json()) as { keyId: string; apiKey: string };
    const mangled = await rotate(`${tenant.key}~`, { graceSeconds: 60, keyId: tenant.key });

    // Assess
    expect(rotated.status).toBe(200);
    expect(rotatedBody.keyId).toBe(tenant.keyId);
    expect(await errorOf(mangled)).toMatchObject({ status: 400, code: 'request.invalid', details: { field: 'keyId', in: 'path' } });
    const secrets = [secretOf(tenant.key), secretOf(rotatedBody.apiKey)];
    const trail = await auditTrail();
    const ours = trail.filter((entry) => entry.operation === 'rotateApiKey' && entry.target.keyId?.includes(tenant.keyId));
    expect(ours.map(({ target, outcome, status }) => ({ target, outcome, status }))).toEqual([
      { target: { keyId: `rs_${tenant.keyId}_[redacted]~` }, outcome: 'failed', status: 400 },
      { target: { keyId: tenant.keyId }, outcome: 'succeeded', status: 200 },
    ]);
    const log = await cloudLogWith(ours[0]!.requestId);
    expect(log).toContain(ours[1]!.requestId);
    for (const secret of secrets) {
      expect(JSON.stringify(trail)).not.toContain(secret);
      expect(log).not.toContain(secret);
    }
  });
});
