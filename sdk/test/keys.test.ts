// A key's rotation or revocation asked with the whole key `rs_<keyId>_<secret>` instead of its id (an easy
// mistake): the SDK and the CLI send the id only, so the secret reaches no URL, access log or audit entry.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RingstoreClient } from '../src';
import { sendJson, startServer, type RunningServer } from './support/fake-server';
import { runCli } from './support/run-cli';

jest.setTimeout(30_000);

const keyId = '0123456789ab';
const secret = 'U2VjcmV0LW9mLXRoZS1rZXktdW5kZXItdGVzdC0xMjM0NTY3OA';
const rotated = {
  keyId,
  namespace: 'tenant',
  role: 'user',
  createdAt: '2030-01-01T00:00:00.000Z',
  rotatedAt: '2030-02-01T00:00:00.000Z',
  previousSecretExpiresAt: '2030-02-01T01:00:00.000Z',
  apiKey: `rs_${keyId}_bmV3LXNlY3JldC1vZi10aGUta2V5LXVuZGVyLXRlc3QtMTIzNA`,
};

describe('rotating a key named by its whole key', () => {
  let server: RunningServer;

  beforeEach(async () => {
    server = await startServer((_request, response) => sendJson(response, 200, rotated));
  });

  afterEach(async () => {
    await server.close();
  });

  const sentAnywhere = () =>
    server.requests.map((request) => `${request.rawUrl} ${JSON.stringify(request.headers)} ${request.body.toString()}`);

  it('sends only the key id from the SDK', async () => {
    const admin = new RingstoreClient({ endpoint: server.url, apiKey: 'admin-key' });

    await admin.rotateApiKey(`rs_${keyId}_${secret}`, { graceSeconds: 60 });

    expect(server.requests.map((request) => `${request.method} ${request.rawUrl}`)).toEqual([`POST /v1/admin/keys/${keyId}/rotate`]);
    expect(sentAnywhere().join('\n')).not.toContain(secret);
  });

  it('revokes by the key id only from the SDK', async () => {
    const admin = new RingstoreClient({ endpoint: server.url, apiKey: 'admin-key' });

    await admin.revokeApiKey(`rs_${keyId}_${secret}`).catch(() => undefined);

    expect(server.requests.map((request) => `${request.method} ${request.rawUrl}`)).toEqual([`DELETE /v1/admin/keys/${keyId}`]);
    expect(sentAnywhere().join('\n')).not.toContain(secret);
  });

  it('refuses, before sending anything, what is neither a key id nor a whole key', async () => {
    const admin = new RingstoreClient({ endpoint: server.url, apiKey: 'admin-key' });

    for (const wrong of ['', 'alice', '0123456789', `rs_${keyId}`, `${keyId}/../x`]) {
      await expect(admin.rotateApiKey(wrong)).rejects.toMatchObject({
        code: 'client.invalidInput',
        message: expect.stringContaining('keyId'),
      });
    }
    expect(server.requests).toEqual([]);
  });

  it('sends only the key id from the CLI', async () => {
    const home = await mkdtemp(join(tmpdir(), 'ringstore-cli-keys-'));
    try {
      const result = await runCli(home, ['keys', 'rotate', `rs_${keyId}_${secret}`], {
        env: { RINGSTORE_ENDPOINT: server.url, RINGSTORE_API_KEY: 'admin-key' },
      });

      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toContain(rotated.apiKey);
      expect(server.requests.map((request) => `${request.method} ${request.rawUrl}`)).toEqual([`POST /v1/admin/keys/${keyId}/rotate`]);
      expect(sentAnywhere().join('\n')).not.toContain(secret);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
