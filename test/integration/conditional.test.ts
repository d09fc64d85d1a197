// Conditional requests (If-Match / If-None-Match, RFC 9110) through real HTTP, evaluated by
// DynamoDB's condition expressions.
import { createHash } from 'node:crypto';
import { call, errorOf, freshNamespace, kvPath, sleep } from './support';

let key: string;

beforeAll(async () => {
  ({ key } = await freshNamespace('conditional'));
});

const put = (k: string, body: string, headers: Record<string, string> = {}, query = '') =>
  call(`${kvPath(k)}${query}`, { method: 'PUT', key, body, headers });
const del = (k: string, headers: Record<string, string> = {}) => call(kvPath(k), { method: 'DELETE', key, headers });
const strongRead = (k: string) => call(`${kvPath(k)}?consistency=strong`, { key });
const versionOf = async (response: Response) => ((await response.json()) as { version: number }).version;

/** A key written `times` times: at version `times`. */
async function keyAt(k: string, times: number) {
  for (let i = 1; i <= times; i += 1) expect((await put(k, `v${i}`)).status).toBe(200);
}

/** The key as a strong read sees it: its ETag and body, or 404. */
async function current(k: string) {
  const read = await strongRead(k);
  return read.status === 200 ? { etag: read.headers.get('etag'), body: await read.text() } : read.status;
}

const refused = { status: 412, code: 'kv.preconditionFailed' };

describe('If-Match', () => {
  it('*: writes a key that exists, 412 for one that does not (nothing created)', async () => {
    expect(await errorOf(await put('im-star', 'x', { 'if-match': '*' }))).toMatchObject({ ...refused, details: { field: 'if-match' } });
    expect(await current('im-star')).toBe(404);
    await keyAt('im-star', 1);
    expect(await versionOf(await put('im-star', 'y', { 'if-match': '*' }))).toBe(2);
  });

  it('a list matches when any tag is the current version', async () => {
    await keyAt('im-list', 2);
    expect(await versionOf(await put('im-list', 'y', { 'if-match': '"1", "2"' }))).toBe(3);
    expect(await errorOf(await put('im-list', 'z', { 'if-match': '"1", "2"' }))).toMatchObject(refused);
    expect(await current('im-list')).toEqual({ etag: '"3"', body: 'y' });
  });

  it('a weak tag never matches (strong comparison), and a tag of ours it is not: 412, not 400', async () => {
    await keyAt('im-foreign', 1);
    for (const tag of ['W/"1"', '"nope-0"', '"abc"', '"01"']) {
      expect(await errorOf(await put('im-foreign', 'x', { 'if-match': tag }))).toMatchObject(refused);
    }
    expect(await errorOf(await del('im-foreign', { 'if-match': 'W/"1"' }))).toMatchObject(refused);
    expect(await current('im-foreign')).toEqual({ etag: '"1"', body: 'v1' });
  });

  it('never matches a deleted or an expired key, even at its last version', async () => {
    await keyAt('im-deleted', 1);
    expect(await versionOf(await del('im-deleted'))).toBe(2);
    expect(await errorOf(await put('im-deleted', 'x', { 'if-match': '"2"' }))).toMatchObject(refused);
    expect(await errorOf(await put('im-deleted', 'x', { 'if-match': '*' }))).toMatchObject(refused);

    expect((await put('im-expired', 'soon gone', {}, '?ttlSeconds=1')).status).toBe(200);
    await sleep(2100);
    expect(await errorOf(await put('im-expired', 'x', { 'if-match': '"1"' }))).toMatchObject(refused);
    expect(await errorOf(await put('im-expired', 'x', { 'if-match': '*' }))).toMatchObject(refused);
    // Written: version 2 over the expired item, or 1 if DynamoDB's TTL sweep removed it meanwhile (the
    // key then starts over, as a never-written one does).
    expect([1, 2]).toContain(await versionOf(await put('im-expired', 'x', { 'if-none-match': '"1"' })));
  });
});

describe('If-None-Match', () => {
  it('*: creates a key that does not exist, 412 when it does', async () => {
    expect(await versionOf(await put('inm-star', 'a', { 'if-none-match': '*' }))).toBe(1);
    expect(await errorOf(await put('inm-star', 'b', { 'if-none-match': '*' }))).toMatchObject({
      ...refused,
      details: { field: 'if-none-match' },
    });
  });

  it('a list: writes only when the current version is none of them, comparing weakly', async () => {
    await keyAt('inm-list', 3);
    expect(await errorOf(await put('inm-list', 'x', { 'if-none-match': 'W/"3"' }))).toMatchObject(refused);
    expect(await errorOf(await put('inm-list', 'x', { 'if-none-match': '"2", "3"' }))).toMatchObject(refused);
    expect(await current('inm-list')).toEqual({ etag: '"3"', body: 'v3' });
    expect(await versionOf(await put('inm-list', 'x', { 'if-none-match': '"1", W/"2"' }))).toBe(4);
    expect(await versionOf(await put('inm-list', 'y', { 'if-none-match': '"nope-0"' }))).toBe(5);
  });

  it('a list on a key that does not exist, or was deleted at one of its versions: writes', async () => {
    expect(await versionOf(await put('inm-absent', 'a', { 'if-none-match': '"1"' }))).toBe(1);
    expect(await versionOf(await del('inm-absent'))).toBe(2);
    expect(await versionOf(await put('inm-absent', 'b', { 'if-none-match': '"2"' }))).toBe(3);
  });
});

describe('both headers', () => {
  it('must both hold; If-Match is evaluated first', async () => {
    await keyAt('both', 2);
    expect(await errorOf(await put('both', 'x', { 'if-match': '"1"', 'if-none-match': '"2"' }))).toMatchObject({
      ...refused,
      details: { field: 'if-match' },
    });
    expect(await errorOf(await put('both', 'x', { 'if-match': '"2"', 'if-none-match': '"2"' }))).toMatchObject(refused);
    expect(await errorOf(await put('both', 'x', { 'if-match': '*', 'if-none-match': '*' }))).toMatchObject(refused);
    expect(await errorOf(await put('both', 'x', { 'if-match': '*', 'if-none-match': 'W/"2"' }))).toMatchObject({
      ...refused,
      details: { field: 'if-none-match' },
    });
    expect(await current('both')).toEqual({ etag: '"2"', body: 'v2' });
    expect(await versionOf(await put('both', 'x', { 'if-match': '"1", "2"', 'if-none-match': '"1"' }))).toBe(3);
  });
});

describe('DELETE under conditions', () => {
  it('deletes only when they hold; a missing key whose conditions hold is a 404', async () => {
    expect(await errorOf(await del('del-cond', { 'if-match': '*' }))).toMatchObject(refused);
    expect(await errorOf(await del('del-cond', { 'if-none-match': '*' }))).toMatchObject({ status: 404, code: 'kv.notFound' });
    expect(await errorOf(await del('del-cond', { 'if-none-match': '"1"' }))).toMatchObject({ status: 404, code: 'kv.notFound' });
    await keyAt('del-cond', 2);
    expect(await errorOf(await del('del-cond', { 'if-none-match': '*' }))).toMatchObject(refused);
    expect(await errorOf(await del('del-cond', { 'if-none-match': '"2"' }))).toMatchObject(refused);
    expect(await errorOf(await del('del-cond', { 'if-match': '"1"' }))).toMatchObject(refused);
    expect(await current('del-cond')).toEqual({ etag: '"2"', body: 'v2' });
    expect(await versionOf(await del('del-cond', { 'if-match': '"1", "2"', 'if-none-match': '"1"' }))).toBe(3);
    expect(await current('del-cond')).toBe(404);
  });
});

describe('malformed conditional headers', () => {
  it.each([
    ['if-match', '3'],
    ['if-match', '"3'],
    ['if-match', '*, "3"'],
    ['if-match', 'w/"3"'],
    ['if-match', '"3" "4"'],
    ['if-none-match', ', ,'],
    ['if-none-match', 'abc'],
  ])('%s: %s is a 400 naming the header, and writes nothing', async (header, value) => {
    expect(await errorOf(await put('malformed', 'x', { [header]: value }))).toMatchObject({
      status: 400,
      code: 'request.invalid',
      details: { field: header },
    });
    expect(await errorOf(await del('malformed', { [header]: value }))).toMatchObject({ status: 400, details: { field: header } });
    expect(await current('malformed')).toBe(404);
  });

  it('accepts up to 32 entity tags and refuses more', async () => {
    const tags = (count: number) => Array.from({ length: count }, (_, i) => `"${i + 1}"`).join(', ');
    expect(await versionOf(await put('many-tags', 'x', { 'if-none-match': tags(32) }))).toBe(1);
    expect(await errorOf(await put('many-tags', 'x', { 'if-match': tags(33) }))).toMatchObject({
      status: 400,
      details: { field: 'if-match' },
    });
  });
});

describe('upload commit under conditions', () => {
  async function upload(k: string, bytes: Uint8Array) {
    const response = await call(`${kvPath(k)}/uploads`, {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contentType: 'text/plain' }),
    });
    expect(response.status).toBe(201);
    const ticket = (await response.json()) as { uploadId: string; url: string; headers: Record<string, string> };
    expect((await fetch(ticket.url, { method: 'PUT', headers: ticket.headers, body: bytes })).ok).toBe(true);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    return (headers: Record<string, string>) =>
      call(`${kvPath(k)}/uploads/${ticket.uploadId}/commit`, {
        method: 'POST',
        key,
        headers,
        body: JSON.stringify({ sha256, contentType: 'text/plain' }),
      });
  }

  it('takes the same headers: refused commits keep the upload for another try', async () => {
    await keyAt('committed', 1);
    const commit = await upload('committed', new TextEncoder().encode('uploaded'));
    expect(await errorOf(await commit({ 'if-match': '"nope-0"' }))).toMatchObject(refused);
    expect(await errorOf(await commit({ 'if-none-match': '*' }))).toMatchObject(refused);
    expect(await errorOf(await commit({ 'if-match': '1' }))).toMatchObject({ status: 400, details: { field: 'if-match' } });
    expect(await current('committed')).toEqual({ etag: '"1"', body: 'v1' });
    expect(await versionOf(await commit({ 'if-match': '*', 'if-none-match': '"5"' }))).toBe(2);
    expect(await current('committed')).toEqual({ etag: '"2"', body: 'uploaded' });
  });
});
