// Every answer of the local cloud names its request (x-request-id, as API Gateway's request id in AWS): on a
// success, on a handler's 4xx, and on the gateway's own refusals, so a user can quote it to find the logs.
import { call, freshNamespace, kvPath } from './support';

let key: string;

beforeAll(async () => {
  ({ key } = await freshNamespace('reqid'));
});

/** What an id looks like: the local gateway makes UUIDs, as API Gateway's request ids are. */
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('x-request-id', () => {
  it('names each successful request with its own id', async () => {
    const written = await call(kvPath('rid'), { method: 'PUT', key, body: 'v', headers: { 'content-type': 'text/plain' } });
    const read = await call(kvPath('rid'), { key });

    expect([written.status, read.status]).toEqual([200, 200]);
    expect(written.headers.get('x-request-id')).toMatch(uuid);
    expect(read.headers.get('x-request-id')).toMatch(uuid);
    expect(read.headers.get('x-request-id')).not.toBe(written.headers.get('x-request-id'));
  });

  it('names a 4xx answered by a handler (a missing key, a bad parameter)', async () => {
    const missing = await call(kvPath('never-written'), { key });
    const invalid = await call(`${kvPath('rid')}?ttl=60`, { method: 'PUT', key, body: 'v', headers: { 'content-type': 'text/plain' } });

    expect([missing.status, invalid.status]).toEqual([404, 400]);
    expect(missing.headers.get('x-request-id')).toMatch(uuid);
    expect(invalid.headers.get('x-request-id')).toMatch(uuid);
  });

  it('names the gateway’s own refusals too (no API key, no such route)', async () => {
    const unauthenticated = await call(kvPath('rid'), { key: null });
    const unrouted = await call('/v2/nothing', { key });

    expect([unauthenticated.status, unrouted.status]).toEqual([401, 404]);
    expect(unauthenticated.headers.get('x-request-id')).toMatch(uuid);
    expect(unrouted.headers.get('x-request-id')).toMatch(uuid);
  });
});
