// The edges a new user meets first: a key with raw slashes, a misspelt query parameter, a wrong method, GET /.
import { baseUrl, call, errorOf, kvPath } from './support';

describe('first steps', () => {
  it('answers a key with raw slashes with a 400 that says to encode them, and stores nothing', async () => {
    // Act
    const refused = await call('/v1/kv/users/42/profile', { method: 'PUT', body: 'x', headers: { 'content-type': 'text/plain' } });
    // Assess
    expect(await errorOf(refused)).toMatchObject({
      status: 400,
      code: 'kv.keyInvalid',
      message: expect.stringContaining('PUT /v1/kv/users%2F42%2Fprofile'),
    });
    expect((await call(kvPath('users/42/profile'))).status).toBe(404);
    expect((await call(kvPath('users'))).status).toBe(404);
  });

  it('stores and reads the same key percent-encoded', async () => {
    const written = await call('/v1/kv/users%2F42%2Fprofile', { method: 'PUT', body: 'p', headers: { 'content-type': 'text/plain' } });
    expect(written.status).toBe(200);
    expect(await (await call(kvPath('users/42/profile'))).text()).toBe('p');
  });

  it('refuses an unknown query parameter, naming it and the one it most likely meant, and stores nothing', async () => {
    // Act
    const refused = await call(`${kvPath('first-steps-ttl')}?ttl=60`, { method: 'PUT', body: 'x' });
    const listing = await call('/v1/kv?prefx=a');
    // Assess
    expect(await errorOf(refused)).toMatchObject({
      status: 400,
      code: 'request.invalid',
      message: expect.stringContaining('did you mean ttlSeconds?'),
      details: { field: 'ttl', in: 'query', suggestion: 'ttlSeconds' },
    });
    expect(await errorOf(listing)).toMatchObject({ status: 400, details: { field: 'prefx', suggestion: 'prefix' } });
    expect((await call(kvPath('first-steps-ttl'))).status).toBe(404);
  });

  it('gives TTLs of -1 and 0 the same message', async () => {
    const messages = new Set<string>();
    for (const ttl of ['-1', '0']) {
      const error = await errorOf(await call(`${kvPath('first-steps-bad-ttl')}?ttlSeconds=${ttl}`, { method: 'PUT', body: 'x' }));
      expect(error).toMatchObject({ status: 400, code: 'kv.ttlInvalid' });
      messages.add(error.message);
    }
    expect(messages.size).toBe(1);
  });

  it('answers a wrong method on a known path with 405 and Allow', async () => {
    const response = await call(kvPath('a'), { method: 'POST', body: '{}' });
    expect(response.headers.get('allow')).toBe('GET, HEAD, PUT, DELETE');
    expect(await errorOf(response)).toMatchObject({ status: 405, code: 'route.methodNotAllowed' });
  });

  it('answers GET / with where the documentation is, without an API key', async () => {
    const response = await call('/', { key: null });
    expect(response.status).toBe(200);
    const index = (await response.json()) as { docs: string; openapi: string };
    expect(index).toMatchObject({ name: 'Ringstore', docs: '/docs', openapi: '/openapi.json' });
    expect((await fetch(`${baseUrl()}${index.docs}`)).status).toBe(200);
  });
});
