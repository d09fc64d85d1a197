// Query parameters: one list per route (schemas/api.ts routeQueries), unknown names refused with a suggestion,
// and one rule and message per integer parameter.
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { PutValueQuery, routeQueries } from '../../../schemas/api';
import { routes } from '../../../schemas/topology';
import { RingstoreError } from '../../../lambdas/core/errors';
import { closestName, parseWith } from '../../../lambdas/http/request';
import { router } from '../../../lambdas/http/router';

const event = (httpMethod: string, resource: string, query: Record<string, string> | null) =>
  ({ httpMethod, resource, queryStringParameters: query }) as unknown as APIGatewayProxyEvent;

const refusal = async (run: () => Promise<unknown>) => {
  try {
    await run();
  } catch (error) {
    return error instanceof RingstoreError ? { code: error.code, message: error.message, details: error.details } : error;
  }
  return 'answered';
};

describe('query parameters', () => {
  it('lists the query parameters of every route, and no others', () => {
    expect(Object.keys(routeQueries).sort()).toEqual([...new Set(routes.map((route) => route.operationId))].sort());
  });

  it('refuses an unknown parameter with a 400 that names it and the one it most likely meant', async () => {
    // Prepare
    const ring = router('ring', { describeRing: async () => ({ statusCode: 200, body: '' }) });
    // Act
    const unknown = await refusal(() => ring(event('GET', '/v1/ring', { verbose: '1' })));
    const known = await ring(event('GET', '/v1/ring', null));
    // Assess
    expect(unknown).toMatchObject({
      code: 'request.invalid',
      message: 'query verbose: unknown parameter (GET /v1/ring takes no query parameters)',
      details: { field: 'verbose', in: 'query', known: [] },
    });
    expect(known.statusCode).toBe(200);
  });

  it('suggests ttlSeconds for ttl and consistency for a misspelling of it', () => {
    const known = Object.keys(routeQueries.putValue.shape);
    expect(closestName('ttl', known)).toBe('ttlSeconds');
    expect(closestName('TTLseconds', known)).toBe('ttlSeconds');
    expect(closestName('consistancy', known)).toBe('consistency');
    expect(closestName('page', known)).toBeUndefined();
  });

  it('gives one message for every TTL that breaks the rule', () => {
    const messages = new Set(
      ['-1', '0', '1.5', 'abc', String(11 * 365 * 24 * 3600)].map((ttlSeconds) => {
        try {
          parseWith(PutValueQuery, { ttlSeconds }, 'query');
        } catch (error) {
          return error instanceof RingstoreError ? `${error.code}: ${error.message}` : String(error);
        }
        return 'accepted';
      }),
    );
    expect([...messages]).toEqual(['kv.ttlInvalid: query ttlSeconds: must be an integer from 1 to 315360000']);
  });
});
