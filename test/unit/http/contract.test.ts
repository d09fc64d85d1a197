import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorCodes, statusOf } from '../../../schemas/errors';
import { errorResponse } from '../../../lambdas/http/errors';
import { json } from '../../../lambdas/http/response';
import { router } from '../../../lambdas/http/router';
import { RingstoreError } from '../../../lambdas/core/errors';
import { routes } from '../../../schemas/topology';
import { buildOpenApiDocument } from '../../../schemas/openapi';

describe('OpenAPI document', () => {
  const document = buildOpenApiDocument();

  it('describes every route of the topology, with security on authorized routes', () => {
    for (const route of routes) {
      const operation = (document.paths?.[route.path] as Record<string, { operationId: string; security: unknown[] }> | undefined)?.[
        route.method.toLowerCase()
      ];
      expect(operation?.operationId).toBe(route.operationId);
      // Either an API key or a SigV4 signature (docs/security.md, "IAM authentication").
      expect(operation?.security).toEqual(route.authorized ? [{ apiKey: [] }, { sigv4: [] }] : []);
    }
  });

  it("carries the package's version, as the SDK package does", () => {
    const versionOf = (file: string) =>
      (JSON.parse(readFileSync(join(__dirname, '..', '..', '..', file), 'utf8')) as { version: string }).version;
    expect(document.info.version).toBe(versionOf('package.json'));
    expect(versionOf('sdk/package.json')).toBe(versionOf('package.json'));
  });

  it('is committed up to date in schemas/openapi.json (run npm run openapi)', () => {
    const committed = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'schemas', 'openapi.json'), 'utf8'));
    expect(committed).toEqual(JSON.parse(JSON.stringify(document)));
  });
});

describe('error mapping', () => {
  it('gives every error code a status; only internal is a 5xx besides the retryable ones', () => {
    for (const code of errorCodes) {
      const status = statusOf[code];
      expect(status).toBeGreaterThanOrEqual(400);
      if (status >= 500) {
        expect([
          'internal',
          'shard.unavailable',
          'shard.failingOver',
          'txn.outcomeUnknown',
          'replication.pending',
          'dr.backupUnreachable',
          'rebalance.unavailable',
        ]).toContain(code);
      }
    }
  });

  it('adds Retry-After to 429/503 and sends no body for HEAD', () => {
    const throttled = errorResponse(new RingstoreError('throttled', 'slow down', { retryable: true }));
    expect(throttled.statusCode).toBe(429);
    expect(throttled.headers?.['retry-after']).toBe('1');
    expect(JSON.parse(throttled.body)).toEqual({ error: { code: 'throttled', message: 'slow down', retryable: true } });
    expect(errorResponse(new RingstoreError('kv.notFound', 'x'), 'HEAD').body).toBe('');
  });
});

describe('router', () => {
  const answer = async () => json(200, {});

  it("makes a handler's missing or foreign operation a compile error, and checks again at module load", () => {
    // @ts-expect-error getValue is not an operation of the ring handler's routes
    expect(() => router('ring', { describeRing: answer, getValue: answer })).not.toThrow();
    // @ts-expect-error describeRing, the ring handler's one route, is missing
    expect(() => router('ring', {})).toThrow(/does not implement describeRing/);
  });
});
