// The CLI's --iam (SigV4 with AWS credentials) and `principals` commands, the real bin against a server that
// verifies signatures with the local gateway's verifier.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifySigV4 } from '../../cdk/local/sigv4-verify';
import { type RunningServer, sendJson, startServer } from './support/fake-server';
import { runBin } from './support/run-cli';

const user = { accessKeyId: 'AKIAAAAAAAAAAAAAAAAC', secretAccessKey: 'cli-test-secret-0000000000000000000000000' };
const mapping = {
  principalArn: 'arn:aws:iam::123456789012:role/svc/app',
  matchArn: 'arn:aws:iam::123456789012:role/app',
  namespace: 'team',
  role: 'admin',
  createdAt: '2030-01-01T00:00:00.000Z',
};

jest.setTimeout(30_000);

describe('ringstore --iam and principals', () => {
  let server: RunningServer;
  let home: string;
  const seen: Array<{ method: string; path: string; verdict: string; apiKey?: string }> = [];

  beforeAll(async () => {
    server = await startServer(async (request, res) => {
      const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
      const signed = headers.authorization?.startsWith('AWS4-HMAC-SHA256') === true;
      const verdict = signed
        ? await verifySigV4(
            { method: request.method, target: request.rawUrl, headers, body: request.body },
            async (id) => (id === user.accessKeyId ? user : undefined),
            Date.now(),
          )
        : undefined;
      seen.push({
        method: request.method,
        path: request.rawUrl,
        verdict: verdict === undefined ? 'unsigned' : verdict.ok ? 'ok' : verdict.code,
        ...(headers['x-api-key'] === undefined ? {} : { apiKey: headers['x-api-key'] }),
      });
      if (verdict && !verdict.ok) sendJson(res, 403, { error: { code: verdict.code, message: verdict.message, retryable: false } });
      else if (request.method === 'PUT') sendJson(res, 200, { key: 'b', version: 1, consistency: 'eventual' });
      else if (request.method === 'POST') sendJson(res, 201, mapping);
      else if (request.method === 'DELETE') sendJson(res, 200, mapping);
      else sendJson(res, 200, { principals: [mapping] });
    });
  });

  afterAll(async () => {
    await server.close();
  });

  beforeEach(async () => {
    seen.length = 0;
    home = await mkdtemp(join(tmpdir(), 'ringstore-cli-iam-'));
  });

  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  // No AWS profile or instance role of the developer's: HOME is empty, AWS_* only as given.
  const ringstore = (args: string[], env: Record<string, string> = {}) =>
    runBin(home, ['--endpoint', server.url, ...args], { env: { AWS_EC2_METADATA_DISABLED: 'true', ...env } });

  it('signs with the AWS keys of the environment and sends no API key', async () => {
    const result = await ringstore(['--iam', '--region', 'eu-west-1', 'put', 'b', '2'], {
      AWS_ACCESS_KEY_ID: user.accessKeyId,
      AWS_SECRET_ACCESS_KEY: user.secretAccessKey,
      RINGSTORE_API_KEY: 'rs_key_that_must_not_be_sent',
    });

    expect(result).toMatchObject({ code: 0, stdout: 'stored b (version 1)\n' });
    expect(seen).toEqual([{ method: 'PUT', path: '/v1/kv/b', verdict: 'ok' }]);
  });

  it('reports a refused signature with its code', async () => {
    const result = await ringstore(['--iam', 'put', 'b', '2'], { AWS_ACCESS_KEY_ID: user.accessKeyId, AWS_SECRET_ACCESS_KEY: 'wrong' });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('auth.invalidSignature');
  });

  it('fails on one line, without a request, when no credentials can be found', async () => {
    const result = await ringstore(['--iam', 'put', 'b', '2']);

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: .*(credentials|sign)/m);
    expect(seen).toEqual([]);
  });

  it('adds, lists and removes principal mappings', async () => {
    const key = { RINGSTORE_API_KEY: 'rs_0123456789ab_admin' };

    const added = await ringstore(['principals', 'add', mapping.principalArn, 'team', '--role', 'admin'], key);
    const listed = await ringstore(['principals', 'list'], key);
    const removed = await ringstore(['principals', 'remove', mapping.principalArn], key);

    expect(added).toMatchObject({ code: 0, stdout: 'mapped arn:aws:iam::123456789012:role/app -> team (admin)\n' });
    expect(listed).toMatchObject({ code: 0, stdout: 'arn:aws:iam::123456789012:role/svc/app -> team (admin)\n' });
    expect(removed).toMatchObject({ code: 0, stdout: 'removed arn:aws:iam::123456789012:role/app (was team, admin)\n' });
    expect(seen.map(({ method, path }) => `${method} ${path}`)).toEqual([
      'POST /v1/admin/principals',
      'GET /v1/admin/principals',
      `DELETE /v1/admin/principals/${encodeURIComponent(mapping.principalArn)}`,
    ]);
  });
});
