import { matchRoute, oversizedPayloadBytes } from '../../cdk/local/gateway';
import { limits, routes } from '../../schemas/topology';

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

describe('Lambda payload limit', () => {
  it('clears small payloads without measuring and measures those near the limit exactly', () => {
    expect(oversizedPayloadBytes({ body: 'x' }, 'x')).toBeUndefined();
    const justUnder = 'a'.repeat(limits.lambdaPayloadBytesMax - 100);
    expect(oversizedPayloadBytes({ body: justUnder }, justUnder)).toBeUndefined();
    const over = 'a'.repeat(limits.lambdaPayloadBytesMax);
    expect(oversizedPayloadBytes({ body: over, headers: { a: 'b' } }, over)).toBeGreaterThan(limits.lambdaPayloadBytesMax);
  });
});
