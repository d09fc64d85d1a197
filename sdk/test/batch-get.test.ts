// batchGet and `ringstore mget` against the fake Ringstore: keys in the order asked, values that the answer does
// not carry inline fetched by the SDK, input refused before any request, and the CLI's text and JSON output.

import { BATCH_GET_KEYS_MAX, BatchGetCommand, ValidationError } from '../src';
import { inlineValue, NOT_FOUND } from '../src/cli/format-json';
import { mgetLine } from '../src/cli/mget';
import { cliFixture, clientFixture } from './support/cli-fixture';

jest.setTimeout(30_000);

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]);

describe('batchGet', () => {
  const fixture = clientFixture();
  const client = () => fixture.client();
  const fake = () => fixture.fake();

  it('answers each key in the order asked: found with its bytes and metadata, or not found, in one request', async () => {
    await client().put('a', 'one');
    await client().put('b', PNG, { contentType: 'image/png' });
    const requests = fake().requests.length;

    const { items } = await client().batchGet(['b', 'missing', 'a'], { consistency: 'strong' });

    expect(items.map((item) => (item.found ? [item.key, item.version, item.contentType, [...item.value]] : [item.key]))).toEqual([
      ['b', 1, 'image/png', [...PNG]],
      ['missing'],
      ['a', 1, 'text/plain; charset=utf-8', [...new TextEncoder().encode('one')]],
    ]);
    const [b, , a] = items;
    expect(a?.found && a.text()).toBe('one');
    expect(b?.found && b.size).toBe(PNG.byteLength);
    expect(
      fake()
        .requests.slice(requests)
        .map((request) => `${request.method} ${request.rawUrl}`),
    ).toEqual(['POST /v1/batch/get?consistency=strong']);
    expect(JSON.parse(fake().requests[requests]!.body.toString('utf8'))).toEqual({ keys: ['b', 'missing', 'a'] });
  });

  it('fetches a value kept in S3 from its URL (without the API key), and one past the budget with a get', async () => {
    // Prepare: a value over the inline limit, and a budget that holds one of two small values.
    const large = new Uint8Array(400_000).fill(9);
    await client().put('large', large);
    await client().put('first', 'fits');
    await client().put('second', 'past the budget');
    fake().batchValueBytesMax = 4;
    const requests = fake().requests.length;

    const { items } = await client().send(new BatchGetCommand({ keys: ['large', 'first', 'second'] }));

    expect(items.map((item) => item.found && item.value.byteLength)).toEqual([large.byteLength, 4, 15]);
    expect(items[2]?.found && items[2].text()).toBe('past the budget');
    const followUps = fake().requests.slice(requests + 1);
    expect(followUps.map((request) => `${request.method} ${request.pathname.replace(/objects\/.*/, 'objects/…')}`).sort()).toEqual([
      'GET /s3/objects/…',
      'GET /v1/kv/second',
    ]);
    expect(followUps.find((request) => request.pathname.startsWith('/s3/'))?.headers['x-api-key']).toBeUndefined();
  });

  it.each([
    { what: 'no keys', keys: [] },
    { what: 'too many keys', keys: Array.from({ length: BATCH_GET_KEYS_MAX + 1 }, (_, n) => `k${n}`) },
    { what: 'a key twice', keys: ['a', 'b', 'a'] },
    { what: 'an empty key', keys: ['a', ''] },
    { what: 'a key over 1024 bytes', keys: ['x'.repeat(1025)] },
  ])('refuses $what before any request', async ({ keys }) => {
    const requests = fake().requests.length;

    const error = await client()
      .batchGet(keys)
      .catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(ValidationError);
    expect(fake().requests.length).toBe(requests);
  });

  it('takes BATCH_GET_KEYS_MAX keys in one request', async () => {
    const keys = Array.from({ length: BATCH_GET_KEYS_MAX }, (_, n) => `k${n}`);

    const { items } = await client().batchGet(keys);

    expect(items.map((item) => item.key)).toEqual(keys);
    expect(items.every((item) => !item.found)).toBe(true);
  });
});

describe('ringstore mget', () => {
  const { fake, ringstore } = cliFixture('mget');

  it('prints key<TAB>value lines in the order given, (not found) for a missing key, binary as its size', async () => {
    const seeded = await ringstore([], { input: 'put greeting "hello world"\nput poem "two\\nlines"\nput users/1 one\n' });
    expect(seeded).toMatchObject({ code: 0, stderr: '' });
    fake().store.set('test#photo.png', { value: Buffer.from(PNG), contentType: 'image/png', version: 1 });

    const result = await ringstore(['mget', 'users/1', 'missing', 'greeting', 'photo.png']);

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(
      ['users/1\tone', `missing\t${NOT_FOUND}`, 'greeting\thello world', 'photo.png\t<8 bytes of image/png>', ''].join('\n'),
    );
  });

  it('--json prints an array: a found key as get --json prints it, a missing one as found: false', async () => {
    await ringstore(['put', 'greeting', 'hello world', '--ttl', '60']);

    const [mget, get] = await Promise.all([ringstore(['mget', 'greeting', 'missing', '--json']), ringstore(['get', 'greeting', '--json'])]);

    expect(mget).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(mget.stdout)).toEqual([JSON.parse(get.stdout), { key: 'missing', found: false }]);
  });

  it('reads more keys than one request takes in batches, in order', async () => {
    const keys = Array.from({ length: BATCH_GET_KEYS_MAX + 5 }, (_, n) => `k${n}`);
    fake().store.set('test#k101', { value: Buffer.from('last batch'), contentType: 'text/plain', version: 3 });

    const result = await ringstore(['mget', ...keys]);

    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(keys.length);
    expect(lines[101]).toBe('k101\tlast batch');
    expect(fake().requests.filter((request) => request.pathname === '/v1/batch/get')).toHaveLength(2);
  });

  it('refuses a key named twice with the client error, and prints nothing', async () => {
    const result = await ringstore(['mget', 'a', 'a']);

    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toMatch(/^error: each key may be named once; named more than once: \["a"\]/);
  });

  it('quotes a value that reads as the not-found marker, so the two cannot be confused', () => {
    const value = new TextEncoder().encode(NOT_FOUND);

    expect(inlineValue('text/plain', value)).toBe('"(not found)"');
    expect(mgetLine({ key: 'k', found: false })).toBe('k\t(not found)');
  });
});
