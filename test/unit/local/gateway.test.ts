import { allowedMethods, matchRoute, oversizedPayloadBytes, unroutedAnswer } from '../../../cdk/local/gateway';
import { limits, routes } from '../../../schemas/topology';

describe('local gateway routing', () => {
  it('matches every topology route by method and template', () => {
    for (const route of routes) {
      const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => `sample-${name}`);
      const matched = matchRoute(route.method, path);
      expect(matched !== 'badEncoding' && matched?.route.operationId).toBe(route.operationId);
    }
  });

  it('decodes percent-encoded keys, slashes included, and refuses broken encoding', () => {
    const matched = matchRoute('GET', `/v1/kv/${encodeURIComponent('a/b c/ключ')}`);
    expect(matched !== 'badEncoding' && matched?.params).toEqual({ key: 'a/b c/ключ' });
    expect(matchRoute('GET', '/v1/kv/%E0%A4%A')).toBe('badEncoding');
  });

  it('finds no route for unknown paths, unknown methods and empty parameters', () => {
    expect(matchRoute('GET', '/v2/kv/x')).toBeUndefined();
    expect(matchRoute('PATCH', '/v1/kv/x')).toBeUndefined();
    expect(matchRoute('GET', '/v1/kv/a/b')).toBeUndefined();
  });
});

describe('requests no route takes', () => {
  it('answers a wrong method on a known path with 405 and the methods it allows', () => {
    expect(unroutedAnswer('POST', '/v1/kv/a')).toMatchObject({
      status: 405,
      code: 'route.methodNotAllowed',
      headers: { allow: 'GET, HEAD, PUT, DELETE' },
    });
    expect(unroutedAnswer('GET', '/v1/kv/a/uploads')).toMatchObject({ status: 405, headers: { allow: 'POST' } });
    expect(allowedMethods('/v1/ring')).toEqual(['GET']);
  });

  it('tells a key with raw slashes to encode them as %2F', () => {
    expect(unroutedAnswer('PUT', '/v1/kv/users/42/profile')).toEqual({
      status: 400,
      code: 'kv.keyInvalid',
      message: 'a key is one path segment: percent-encode each / in it as %2F (PUT /v1/kv/users%2F42%2Fprofile)',
      headers: {},
    });
  });

  it('answers other paths 404, pointing at /docs', () => {
    expect(unroutedAnswer('GET', '/v2/kv/x')).toMatchObject({
      status: 404,
      code: 'route.notFound',
      message: expect.stringContaining('/docs'),
    });
    expect(allowedMethods('/v2/kv/x')).toEqual([]);
  });

  it('routes GET / to the documentation index', () => {
    const matched = matchRoute('GET', '/');
    expect(matched !== 'badEncoding' && matched?.route.operationId).toBe('apiIndex');
  });
});

describe('Lambda payload limit', () => {
  it('clears small payloads without measuring and measures those near the limit exactly', () => {
    expect(oversizedPayloadBytes({ body: 'x' }, 'x')).toBeUndefined();
    const justUnder = 'a'.repeat(limits.lambdaPayloadBytesMax - 100);
    expect(oversizedPayloadBytes({ body: justUnder }, justUnder)).toBeUndefined();
    const over = 'a'.repeat(limits.lambdaPayloadBytesMax);
    expect(oversizedPayloadBytes({ body: over, headers: { a: 'b' } }, over)).toBeGreaterThan(limits.lambdaPayloadBytesMax);
  });
});
