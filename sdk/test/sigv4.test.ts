// The client with AWS credentials: every request signed with SigV4 (service execute-api), checked over real
// HTTP by the local gateway's own verifier, so what the SDK signs is what a gateway recomputes.

import { verifySigV4 } from '../../cdk/local/sigv4-verify';
import { ForbiddenError, regionOfEndpoint, RingstoreClient, ValidationError } from '../src';
import { type RunningServer, sendJson, startServer } from './support/fake-server';

const known = { accessKeyId: 'AKIAAAAAAAAAAAAAAAAB', secretAccessKey: 'known-secret-of-the-test-user-000000000' };

describe('RingstoreClient with AWS credentials', () => {
  let server: RunningServer;
  const verdicts: string[] = [];

  beforeAll(async () => {
    server = await startServer(async (request, res) => {
      const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
      const verdict = await verifySigV4(
        { method: request.method, target: request.rawUrl, headers, body: request.body },
        async (id) => (id === known.accessKeyId ? known : undefined),
        Date.now(),
      );
      verdicts.push(verdict.ok ? 'ok' : verdict.code);
      if (!verdict.ok) {
        sendJson(res, 403, { error: { code: verdict.code, message: verdict.message, retryable: false } });
        return;
      }
      if (headers['x-api-key'] !== undefined) throw new Error('an API key was sent beside the signature');
      if (request.method === 'PUT') sendJson(res, 200, { key: 'k', version: 1, consistency: 'eventual' });
      else sendJson(res, 200, { items: [] });
    });
  });

  afterAll(async () => {
    await server.close();
  });

  beforeEach(() => {
    verdicts.length = 0;
  });

  it('signs writes (body and query) and listings so that the gateway verifies them', async () => {
    // Prepare
    const client = new RingstoreClient({ endpoint: server.url, credentials: known, sleep: async () => {} });

    // Act
    await client.put('a/b c', 'héllo', { ttlSeconds: 60 });
    await client.list({ prefix: 'a b+c', limit: 5 });

    // Assess
    expect(verdicts).toEqual(['ok', 'ok']);
    expect(server.requests[0]?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIAAAAAAAAAAAAAAAAB\/\d{8}\/us-east-1\/execute-api\/aws4_request/,
    );
  });

  it('takes a credential provider, asked for each request', async () => {
    let asked = 0;
    const client = new RingstoreClient({
      endpoint: server.url,
      credentials: async () => {
        asked += 1;
        return known;
      },
    });
    await client.put('k', 'v');
    await client.put('k', 'w');
    expect(asked).toBeGreaterThanOrEqual(2);
    expect(verdicts).toEqual(['ok', 'ok']);
  });

  it('surfaces a refused signature as a ForbiddenError with its code', async () => {
    const client = new RingstoreClient({
      endpoint: server.url,
      credentials: { ...known, secretAccessKey: 'wrong' },
      sleep: async () => {},
    });
    const refused = await client.put('k', 'v').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ForbiddenError);
    expect(refused).toMatchObject({ code: 'auth.invalidSignature', status: 403 });
  });

  it('reports credentials that cannot be had as client.credentials, without a request', async () => {
    const client = new RingstoreClient({
      endpoint: server.url,
      credentials: () => Promise.reject(new Error('no profile')),
    });
    const failed = await client.put('k', 'v').catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(ValidationError);
    expect(failed).toMatchObject({ code: 'client.credentials' });
    expect(verdicts).toEqual([]);
  });

  it('wants an API key or credentials, never both or neither', () => {
    expect(() => new RingstoreClient({ endpoint: server.url })).toThrow(/either apiKey or credentials/);
    expect(() => new RingstoreClient({ endpoint: server.url, apiKey: 'k', credentials: known })).toThrow(/either apiKey or credentials/);
    expect(() => new RingstoreClient({ endpoint: server.url, credentials: { accessKeyId: '', secretAccessKey: '' } })).toThrow(
      /accessKeyId and a secretAccessKey/,
    );
  });

  it('signs for the region of an API Gateway endpoint', () => {
    expect(regionOfEndpoint('https://abc123.execute-api.eu-west-1.amazonaws.com/prod')).toBe('eu-west-1');
    expect(regionOfEndpoint('http://127.0.0.1:4510')).toBeUndefined();
  });
});
