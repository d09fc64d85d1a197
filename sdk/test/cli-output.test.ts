// `get --json` / `-o json` and `list --values`: the real bin against the fake Ringstore, and the pure parts (how a
// value is shown, the bounded, ordered reads) on their own.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inlineValue, valueJson } from '../src/cli/format-json';
import { DELETED_SINCE_LISTED, inOrder, LIST_VALUES_CONCURRENCY } from '../src/cli/list';
import { FakeRingstore } from './support/fake-server';
import { type CliResult, runCli } from './support/run-cli';

jest.setTimeout(30_000);

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]);

describe('ringstore get --json and list --values', () => {
  let fake: FakeRingstore;
  let home: string;

  beforeEach(async () => {
    fake = await new FakeRingstore().start();
    home = await mkdtemp(join(tmpdir(), 'ringstore-cli-output-'));
  });

  afterEach(async () => {
    await fake.close();
    await rm(home, { recursive: true, force: true });
  });

  const env = (): Record<string, string> => ({ RINGSTORE_ENDPOINT: fake.url, RINGSTORE_API_KEY: 'admin-key' });
  const ringstore = (args: string[], input?: string): Promise<CliResult> =>
    runCli(home, args, { env: env(), ...(input === undefined ? {} : { input }) });
  const seed = async (): Promise<void> => {
    await writeFile(join(home, 'photo.png'), PNG);
    await writeFile(join(home, 'poem.txt'), 'two\nlines');
    const lines = [
      'put greeting "hello world" --ttl 60',
      `put photo.png @${join(home, 'photo.png')}`,
      `put poem @${join(home, 'poem.txt')}`,
      'put users/1 one',
    ];
    const seeded = await ringstore([], `${lines.join('\n')}\n`);
    expect(seeded).toMatchObject({ code: 0, stderr: '' });
  };

  it('get --json prints one object: the listing fields, expiry, and a text value as text', async () => {
    await seed();

    const result = await ringstore(['get', 'greeting', '--json']);

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toEqual({
      key: 'greeting',
      version: 1,
      size: 11,
      contentType: 'text/plain; charset=utf-8',
      expiresAt: '2030-01-01T00:01:00.000Z',
      value: 'hello world',
    });
  });

  it('get -o json prints a binary value as base64, saying so, with the same fields list --json prints', async () => {
    await seed();

    const get = await ringstore(['get', 'photo.png', '-o', 'json']);
    const list = await ringstore(['list', 'photo', '--json']);

    expect(get).toMatchObject({ code: 0, stderr: '' });
    const shown = JSON.parse(get.stdout) as Record<string, unknown>;
    expect(shown).toEqual({
      key: 'photo.png',
      version: 1,
      size: PNG.byteLength,
      contentType: 'image/png',
      value: Buffer.from(PNG).toString('base64'),
      encoding: 'base64',
    });
    const [listed] = JSON.parse(list.stdout) as Array<Record<string, unknown>>;
    const { value: _value, encoding: _encoding, ...metadata } = shown;
    expect(listed).toEqual(metadata);
  });

  it('refuses -o yaml naming the formats it takes, and --json with -o text or with --out', async () => {
    await seed();

    const yaml = await ringstore(['get', 'greeting', '-o', 'yaml']);
    const listYaml = await ringstore(['list', '--output', 'yaml']);
    const both = await ringstore(['get', 'greeting', '--json', '-o', 'text']);
    const toFile = await ringstore(['get', 'greeting', '--json', '--out', join(home, 'copy.txt')]);

    expect(yaml.code).toBe(1);
    expect(yaml.stderr).toMatch(/argument 'yaml' is invalid\. Allowed choices are text, json\./);
    expect(listYaml.code).toBe(1);
    expect(listYaml.stderr).toMatch(/Allowed choices are text, json\./);
    expect(both).toMatchObject({ code: 1, stdout: '', stderr: 'error: --json and -o text ask for different outputs: give one\n' });
    expect(toFile).toMatchObject({ code: 1, stdout: '', stderr: 'error: --out writes the value to a file, --json prints it: give one\n' });
  });

  it('list -o json prints what list --json prints; -o text what list prints', async () => {
    await seed();

    const [json, output, text, plain] = await Promise.all([
      ringstore(['list', '--json']),
      ringstore(['list', '-o', 'json']),
      ringstore(['list', '-o', 'text']),
      ringstore(['list']),
    ]);

    expect(output).toEqual(json);
    expect(text).toEqual(plain);
    expect(plain.stdout).toContain('4 keys');
  });

  it('list --values prints key<TAB>value lines: text as get shows it, quoted when it breaks the line, binary as its size', async () => {
    await seed();

    const result = await ringstore(['list', '--values']);

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(
      ['greeting\thello world', 'photo.png\t<8 bytes of image/png>', 'poem\t"two\\nlines"', 'users/1\tone', ''].join('\n'),
    );
  });

  it('list --values --json gives each item its value, in the form get --json prints', async () => {
    await seed();

    const list = await ringstore(['list', '--values', '--json']);
    const gets = await Promise.all(['greeting', 'photo.png', 'poem', 'users/1'].map((key) => ringstore(['get', key, '--json'])));

    expect(list).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(list.stdout)).toEqual(gets.map((get) => JSON.parse(get.stdout) as unknown));
  });

  it('list --values --json prints [] for no keys, parseable like list --json', async () => {
    const result = await ringstore(['list', 'none/', '--values', '-o', 'json']);

    expect(result).toEqual({ code: 0, stdout: '[]\n', stderr: '' });
  });

  it('list --values shows a key deleted between the listing and its read as deleted, and goes on', async () => {
    await seed();
    // The listing names a key that is gone by the time its value is read, as when a delete lands in between.
    const listed = (key: string) => ({ key, version: 1, size: 3, contentType: 'text/plain; charset=utf-8' });
    const listing = { items: [listed('greeting'), listed('gone'), listed('users/1')] };
    // failNext answers the next request, whatever it is: the listing, first of each run.
    const listWithGone = (args: string[]): Promise<CliResult> => {
      fake.failNext.push({ status: 200, body: listing });
      return ringstore(args);
    };

    const text = await listWithGone(['list', '--values']);
    const json = await listWithGone(['list', '--values', '--json']);

    expect(text).toMatchObject({ code: 0, stderr: '' });
    expect(text.stdout).toBe(`greeting\thello world\ngone\t${DELETED_SINCE_LISTED}\nusers/1\tone\n`);
    expect(json).toMatchObject({ code: 0, stderr: '' });
    expect((JSON.parse(json.stdout) as unknown[])[1]).toEqual({ ...listed('gone'), deleted: true });
  });

  it('list --values takes --limit and --cursor as list does, its "more:" line keeping --values', async () => {
    await seed();

    const first = await ringstore(['list', '--values', '--limit', '2']);
    const more = /^more: ringstore list --limit 2 --values --cursor (\S+)$/m.exec(first.stdout);
    const second = await ringstore(['list', '--values', '--limit', '2', '--cursor', more?.[1] ?? 'missing', '--json']);

    expect(first.stdout.split('\n').slice(0, 2)).toEqual(['greeting\thello world', 'photo.png\t<8 bytes of image/png>']);
    expect(more).not.toBeNull();
    expect((JSON.parse(second.stdout) as Array<{ key: string }>).map((item) => item.key)).toEqual(['poem', 'users/1']);
    expect(second.stderr).toBe('');
    const gets = fake.requests.filter((request) => request.method === 'GET' && request.pathname.startsWith('/v1/kv/'));
    expect(gets.map((request) => decodeURIComponent(request.pathname.slice('/v1/kv/'.length)))).toEqual([
      'greeting',
      'photo.png',
      'poem',
      'users/1',
    ]);
  });

  it('list --values fails the listing on an error that is not a deleted key', async () => {
    await seed();
    fake.failNext.push({ status: 200, body: { items: [{ key: 'greeting', version: 1, size: 11, contentType: 'text/plain' }] } });
    fake.failNext.push({ status: 403, body: { error: { code: 'auth.forbidden', message: 'not yours', retryable: false } } });

    const result = await ringstore(['list', '--values']);

    expect(result).toEqual({ code: 1, stdout: '', stderr: 'error: not yours (auth.forbidden)\n' });
  });
});

describe('how get --json and list --values show a value', () => {
  const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

  it('keeps text as text and anything else (or bytes that are not UTF-8) as base64', () => {
    const text = valueJson({ key: 'k', version: 2, contentType: 'application/json', value: bytes('{"a":1}') });
    const latin1 = valueJson({ key: 'k', version: 1, contentType: 'text/plain; charset=iso-8859-1', value: new Uint8Array([0xe9]) });

    expect(text).toEqual({ key: 'k', version: 2, size: 7, contentType: 'application/json', value: '{"a":1}' });
    expect(latin1).toMatchObject({ value: '6Q==', encoding: 'base64' });
  });

  it.each([
    ['hello world', 'hello world'],
    ['a\tb', '"a\\tb"'],
    ['', '""'],
    [' padded', '" padded"'],
    ['"quoted"', '"\\"quoted\\""'],
    [DELETED_SINCE_LISTED, JSON.stringify(DELETED_SINCE_LISTED)],
  ])('shows the text %j on one line as %s', (text, shown) => {
    expect(inlineValue('text/plain', bytes(text))).toBe(shown);
  });
});

describe('inOrder', () => {
  it(`runs at most ${LIST_VALUES_CONCURRENCY} at once and yields in the items' order, whatever order they finish in`, async () => {
    const items = Array.from({ length: 30 }, (_, i) => i);
    let running = 0;
    let most = 0;
    const work = async (item: number): Promise<number> => {
      running += 1;
      most = Math.max(most, running);
      // Later items finish first within each window, so order comes from inOrder, not from timing.
      await new Promise((resolve) => setTimeout(resolve, 30 - item));
      running -= 1;
      return item * 10;
    };

    const seen: number[] = [];
    for await (const result of inOrder(items, LIST_VALUES_CONCURRENCY, work)) seen.push(result);

    expect(seen).toEqual(items.map((item) => item * 10));
    expect(most).toBe(LIST_VALUES_CONCURRENCY);
  });

  it('throws a failure in its turn, and one behind it is no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const work = (item: number): Promise<number> => (item >= 1 ? Promise.reject(new Error(`failed ${item}`)) : Promise.resolve(item));

    const seen: number[] = [];
    const run = async (): Promise<void> => {
      for await (const result of inOrder([0, 1, 2, 3], 4, work)) seen.push(result);
    };

    await expect(run()).rejects.toThrow('failed 1');
    await new Promise((resolve) => setImmediate(resolve));
    process.off('unhandledRejection', onUnhandled);
    expect(seen).toEqual([0]);
    expect(unhandled).toEqual([]);
  });
});
