// Cross-region DR on two local regions (docs/dr.md), each with its own engines: writes reach the backup
// through its FIFO key queue and its bucket, the backup serves them at the primary's versions, refuses
// writes, and answers a key whose value has not arrived as pending.
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { LocalRegions } from '../../cdk/local/regions';
import { localCredentials, localRegion } from '../../cdk/local/engines';
import { deduplicationIdOf, messageGroupOf } from '../../lambdas/core/dr-messages';
import type { DrKeyMessage } from '../../lambdas/ports';
import { removeDrHomes, startDrRegions } from './support';

let regions: LocalRegions;

beforeAll(async () => {
  regions = await startDrRegions('dr');
}, 120_000);

afterAll(async () => {
  await regions?.stop();
  removeDrHomes();
});

type Region = 'primary' | 'backup';

async function send(
  region: Region,
  path: string,
  init: { method?: string; body?: string | Uint8Array; headers?: Record<string, string>; admin?: boolean } = {},
) {
  const cloud = regions[region];
  return fetch(`${cloud.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { 'x-api-key': init.admin ? regions.primary.adminKey : regions.primary.apiKey, ...init.headers },
    ...(init.body === undefined ? {} : { body: init.body }),
    redirect: 'manual',
  });
}

const put = (key: string, body: string | Uint8Array) =>
  send('primary', `/v1/kv/${encodeURIComponent(key)}`, { method: 'PUT', body, headers: { 'content-type': 'application/octet-stream' } });

async function errorCodeOf(response: Response): Promise<string> {
  return ((await response.json()) as { error: { code: string } }).error.code;
}

describe('two regions', () => {
  it('serve every acknowledged write in the backup at the primary version, with the same API key', async () => {
    // Prepare
    const large = new Uint8Array(500_000).map((_, index) => index % 251);
    // Act
    const small = await put('dr/small', 'hello backup');
    const big = await put('dr/large', large);
    await regions.drCaughtUp();
    const readSmall = await send('backup', '/v1/kv/dr%2Fsmall');
    const readBig = await send('backup', '/v1/kv/dr%2Flarge');
    // Assess
    expect(small.status).toBe(200);
    expect(big.status).toBe(200);
    expect(readSmall.status).toBe(200);
    expect(await readSmall.text()).toBe('hello backup');
    expect(readSmall.headers.get('etag')).toBe(small.headers.get('etag'));
    expect(readBig.status).toBe(200);
    expect(new Uint8Array(await readBig.arrayBuffer())).toEqual(large);
    expect(readBig.headers.get('etag')).toBe(big.headers.get('etag'));
  });

  it('apply a delete in the backup', async () => {
    // Prepare
    await put('dr/deleted', 'soon gone');
    // Act
    const removal = await send('primary', '/v1/kv/dr%2Fdeleted', { method: 'DELETE' });
    await regions.drCaughtUp();
    const read = await send('backup', '/v1/kv/dr%2Fdeleted');
    // Assess
    expect(removal.status).toBe(200);
    expect(read.status).toBe(404);
  });

  it('refuse writes and transactions in the backup before promotion', async () => {
    // Act
    const response = await send('backup', '/v1/kv/dr%2Frefused', { method: 'PUT', body: 'x', headers: { 'content-type': 'text/plain' } });
    const txn = await send('backup', '/v1/txn', {
      method: 'POST',
      body: JSON.stringify({ ops: [{ op: 'put', key: 'dr/refused', value: 'x' }] }),
      headers: { 'content-type': 'application/json' },
    });
    // Assess
    expect(response.status).toBe(403);
    expect(await errorCodeOf(response)).toBe('dr.backupReadOnly');
    expect(txn.status).toBe(403);
    expect(await errorCodeOf(txn)).toBe('dr.backupReadOnly');
  });

  it('answer a key whose value has not arrived as pending, with Retry-After and the version', async () => {
    // Prepare: a key message for a version whose value never leaves the primary (as if still in transit)
    const current = await put('dr/pending', 'version one');
    await regions.drCaughtUp();
    const version = Number(JSON.parse(current.headers.get('etag')!)) + 1;
    const message: DrKeyMessage = {
      namespace: 'local',
      key: 'dr/pending',
      version,
      writtenAtMs: Date.now(),
      size: 11,
      sha256: 'a'.repeat(64),
      contentType: 'text/plain',
      deleted: false,
    };
    const sqs = new SQSClient({ region: localRegion, credentials: { ...localCredentials }, endpoint: regions.backup.engines.sqsEndpoint });
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: regions.backup.drKeyQueue!.url,
        MessageBody: JSON.stringify(message),
        MessageGroupId: messageGroupOf(message),
        MessageDeduplicationId: deduplicationIdOf(message),
      }),
    );
    sqs.destroy();
    await regions.backup.drCaughtUp();
    // Act
    const read = await send('backup', '/v1/kv/dr%2Fpending');
    // Assess
    expect(read.status).toBe(503);
    expect(read.headers.get('retry-after')).toBe('1');
    const body = (await read.json()) as { error: { code: string; retryable: boolean; details: { version: number } } };
    expect(body.error).toMatchObject({ code: 'replication.pending', retryable: true, details: { version } });
  });
});

describe('the initial sync', () => {
  it('starts in the primary and shows its progress in the DR status', async () => {
    // Act
    const started = await send('primary', '/v1/admin/dr/sync', { method: 'POST', admin: true });
    const status = (await (await send('primary', '/v1/admin/dr/status', { admin: true })).json()) as { role: string; sync?: unknown };
    const inBackup = await send('backup', '/v1/admin/dr/sync', { method: 'POST', admin: true });
    // Assess
    expect(started.status).toBe(202);
    expect(status).toMatchObject({ role: 'primary', backupReachable: true, sync: { status: 'running', nextRange: 0, keys: 0 } });
    expect(inBackup.status).toBe(400);
  });
});

describe('a promotion', () => {
  it('fences the old primary, reports and refuses the key whose value never came, and opens the backup for writes', async () => {
    // Prepare: everything shipped; one key (dr/pending, from above) still waits for version 2
    await put('dr/kept', 'still here');
    await regions.drCaughtUp();
    const before = (await (await send('backup', '/v1/admin/dr/status', { admin: true })).json()) as {
      state: string;
      pending: { count: number };
    };
    // Act
    const started = await send('backup', '/v1/admin/dr/promote', {
      method: 'POST',
      admin: true,
      body: JSON.stringify({ reason: 'test' }),
      headers: { 'content-type': 'application/json' },
    });
    let report: { status: string; lost?: { count: number; keys: Array<{ key: string; version: number }> } } = { status: 'running' };
    for (let attempt = 0; attempt < 100 && report.status === 'running'; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const response = await send('backup', '/v1/admin/dr/report', { admin: true });
      if (response.status === 200) report = (await response.json()) as typeof report;
    }
    const lostRead = await send('backup', '/v1/kv/dr%2Fpending');
    const keptRead = await send('backup', '/v1/kv/dr%2Fkept');
    const backupWrite = await send('backup', '/v1/kv/dr%2Fafter', {
      method: 'PUT',
      body: 'new primary',
      headers: { 'content-type': 'text/plain' },
    });
    const oldPrimaryWrite = await put('dr/after-promotion', 'refused');
    const after = (await (await send('backup', '/v1/admin/dr/status', { admin: true })).json()) as {
      state: string;
      pending: { lost: number };
    };
    // Assess
    expect(before).toMatchObject({ state: 'backup', pending: { count: 1 } });
    expect(started.status).toBe(202);
    expect(report.status).toBe('completed');
    expect(report.lost?.count).toBe(1);
    expect(report.lost?.keys[0]).toMatchObject({ key: 'dr/pending', version: 2 });
    expect(lostRead.status).toBe(410);
    expect(await errorCodeOf(lostRead)).toBe('dr.lost');
    expect(await keptRead.text()).toBe('still here');
    expect(backupWrite.status).toBe(200);
    expect(oldPrimaryWrite.status).toBe(403);
    expect(await errorCodeOf(oldPrimaryWrite)).toBe('dr.demoted');
    expect(after).toMatchObject({ state: 'promoted', pending: { lost: 1 } });
  });
});
