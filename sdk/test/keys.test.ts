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

describe('ringstore keys create | list | revoke', () => {
  const created = {
    keyId,
    namespace: 'tenant',
    role: 'user',
    createdAt: '2030-01-01T00:00:00.000Z',
    apiKey: `rs_${keyId}_${secret}`,
  };
  const listed = {
    keys: [
      {
        keyId,
        namespace: 'tenant',
        role: 'user',
        createdAt: '2030-01-01T00:00:00.000Z',
        description: 'ci',
        lastUsedAt: '2030-01-02T00:00:00.000Z',
      },
      {
        keyId: 'ba9876543210',
        namespace: 'ops',
        role: 'admin',
        createdAt: '2030-01-01T00:00:00.000Z',
        revokedAt: '2030-01-03T00:00:00.000Z',
      },
    ],
  };
  let server: RunningServer;
  let home: string;

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'ringstore-cli-keys-'));
    server = await startServer((request, response) => {
      if (request.method === 'POST' && request.pathname === '/v1/admin/keys') sendJson(response, 201, created);
      else if (request.method === 'GET' && request.pathname === '/v1/admin/keys') sendJson(response, 200, listed);
      else if (request.method === 'DELETE') sendJson(response, 200, { keyId, revokedAt: '2030-01-04T00:00:00.000Z' });
      else sendJson(response, 404, { error: { code: 'route.notFound', message: 'no such route', retryable: false } });
    });
  });

  afterEach(async () => {
    await server.close();
    await rm(home, { recursive: true, force: true });
  });

  const cli = (args: string[]) => runCli(home, args, { env: { RINGSTORE_ENDPOINT: server.url, RINGSTORE_API_KEY: 'admin-key' } });

  it('creates a key for a namespace with its options, and shows its secret once', async () => {
    const result = await cli(['keys', 'create', 'tenant', '--role', 'user', '--description', 'ci', '--expires-at', '2031-01-01T00:00:00Z']);

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(`key ${keyId} for tenant (user)\nsecret key (shown once): rs_${keyId}_${secret}\n`);
    expect(
      server.requests.map((request) => [`${request.method} ${request.rawUrl}`, JSON.parse(request.body.toString()) as unknown]),
    ).toEqual([['POST /v1/admin/keys', { namespace: 'tenant', role: 'user', description: 'ci', expiresAt: '2031-01-01T00:00:00Z' }]]);
  });

  it('lists every key without a secret, a line each or as JSON', async () => {
    const lines = await cli(['keys', 'list']);
    const json = await cli(['keys', 'list', '--json']);

    expect(lines).toMatchObject({ code: 0, stderr: '' });
    expect(lines.stdout.trim().split('\n')).toEqual([
      `${keyId}  tenant  user  created 2030-01-01T00:00:00.000Z, last used 2030-01-02T00:00:00.000Z, "ci"`,
      'ba9876543210  ops  admin  created 2030-01-01T00:00:00.000Z, revoked 2030-01-03T00:00:00.000Z',
    ]);
    expect(JSON.parse(json.stdout)).toEqual(listed.keys);
  });

  it('revokes by the key id only, also when given the whole key', async () => {
    const result = await cli(['keys', 'revoke', `rs_${keyId}_${secret}`]);

    expect(result).toMatchObject({ code: 0, stderr: '', stdout: `revoked ${keyId} at 2030-01-04T00:00:00.000Z\n` });
    expect(server.requests.map((request) => `${request.method} ${request.rawUrl}`)).toEqual([`DELETE /v1/admin/keys/${keyId}`]);
    expect(server.requests.map((request) => request.rawUrl).join('\n')).not.toContain(secret);
  });

  it('refuses an unknown role before sending anything', async () => {
    const result = await cli(['keys', 'create', 'tenant', '--role', 'owner']);

    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/--role.*owner|owner.*--role|Allowed choices are user, admin/);
    expect(server.requests).toEqual([]);
  });
});
