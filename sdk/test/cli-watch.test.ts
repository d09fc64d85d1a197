// `ringstore watch` against the fake Ringstore and its change feed: one line per change (text or JSON), Ctrl-C (the
// interactive session's, and SIGINT to the real bin) stopping cleanly with the command that resumes, a resume
// that neither loses nor repeats a change, a 410 said clearly with the oldest cursor, and retries said on stderr.

import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RingstoreClient } from '../src';
import { changeLine } from '../src/cli/watch';
import { runCommandLine, type Session } from '../src/cli/program';
import { FakeRingstore } from './support/fake-server';
import { BIN, type CliResult } from './support/run-cli';

jest.setTimeout(30_000);

const decoded = (text: string | Uint8Array): string => (typeof text === 'string' ? text : Buffer.from(text).toString('utf8'));
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]);
const LARGE = 'x'.repeat(600);

describe('ringstore watch', () => {
  let fake: FakeRingstore;
  let home: string;
  let client: RingstoreClient;

  beforeEach(async () => {
    fake = await new FakeRingstore().start();
    home = await mkdtemp(join(tmpdir(), 'ringstore-watch-'));
    client = new RingstoreClient({ endpoint: fake.url, apiKey: 'user-key' });
  });

  afterEach(async () => {
    await fake.close();
    await rm(home, { recursive: true, force: true });
  });

  const env = (): Record<string, string> => ({
    HOME: home,
    RINGSTORE_CONFIG_DIR: join(home, 'config'),
    RINGSTORE_ENDPOINT: fake.url,
    RINGSTORE_API_KEY: 'user-key',
  });
  const watchRequests = () => fake.requests.filter((request) => request.pathname === '/v1/watch');

  /**
   * `ringstore <args>` as a line of the interactive session, until it has printed `lines` lines (after `act`, which
   * runs once its first request reached the server), then Ctrl-C: the session's signal aborts.
   */
  async function watchUntil(args: string[], lines: number, act: () => Promise<void> = async () => {}): Promise<CliResult> {
    const ctrlC = new AbortController();
    let stdout = '';
    let stderr = '';
    let printed: () => void = () => {};
    const enough = new Promise<void>((resolve) => (printed = () => stdout.split('\n').length > lines && resolve()));
    const session: Session = {
      env: env(),
      flags: {},
      stdout: {
        write: (text: string | Uint8Array) => {
          stdout += decoded(text);
          printed();
        },
      },
      stderr: { write: (text: string | Uint8Array) => (stderr += decoded(text)) },
      quit: false,
      signal: ctrlC.signal,
    };
    const running = runCommandLine(session, args);
    const started = (async () => {
      while (watchRequests().length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      await act();
    })();
    await Promise.race([Promise.all([started, enough]), running]);
    ctrlC.abort();
    return { code: await running, stdout, stderr };
  }

  /** Writes one change of each kind: text, binary, a value too large to come inline, a delete and a transaction's put. */
  async function writeOneOfEach(): Promise<void> {
    await client.put('greeting', 'hello world');
    await client.put('photo.png', PNG, { contentType: 'image/png' });
    await client.put('big', LARGE);
    await client.delete('greeting');
    await client.transact([{ op: 'put', key: 'order/1', value: 'one item' }]);
  }

  it('prints one JSON object per change from --cursor, values as text or base64, each with its cursor', async () => {
    await writeOneOfEach();

    const result = await watchUntil(['watch', '--cursor', fake.feed.cursorAt('test', 0), '--json'], 5);

    expect(result.code).toBe(0);
    const printed = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(printed).toEqual([
      expect.objectContaining({ key: 'greeting', version: 1, operation: 'put', size: 11, value: 'hello world' }),
      expect.objectContaining({ key: 'photo.png', operation: 'put', contentType: 'image/png', value: 'iVBORwABAgM=', encoding: 'base64' }),
      expect.objectContaining({ key: 'big', operation: 'put', size: 600, valueOmitted: true }),
      expect.objectContaining({ key: 'greeting', version: 2, operation: 'delete', size: 0 }),
      expect.objectContaining({ key: 'order/1', version: 1, operation: 'put', value: 'one item', txid: expect.stringMatching(/^fake-/) }),
    ]);
    expect(printed.map((change) => change.cursor)).toEqual([1, 2, 3, 4, 5].map((index) => fake.feed.cursorAt('test', index)));
    expect(printed[2]).not.toHaveProperty('value');
    expect(printed[0]).toHaveProperty('modifiedAt');
    expect(result.stderr).toBe(`stopped watching; resume with: ringstore watch --cursor ${fake.feed.cursorAt('test', 5)} --json\n`);
  });

  it('prints one line per change as it happens, from now (nothing written before it began)', async () => {
    await client.put('before', 'not shown: written before the watch began');

    const result = await watchUntil(['watch'], 5, async () => {
      await writeOneOfEach();
    });

    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toEqual([
      'put     greeting  v1  11 bytes  text/plain; charset=utf-8  hello world',
      'put     photo.png  v1  8 bytes  image/png',
      'put     big  v1  600 bytes  text/plain; charset=utf-8',
      'delete  greeting  v2',
      expect.stringMatching(/^put {5}order\/1 {2}v1 {2}8 bytes {2}\S.* {2}txn fake-[0-9a-f-]{10}… {2}one item$/),
    ]);
    expect(result.stderr).toMatch(/^stopped watching; resume with: ringstore watch --cursor fake1\.\S+\n$/);
  });

  it('watches a prefix only, and resumes from the cursor Ctrl-C printed without losing or repeating a change', async () => {
    const first = await watchUntil(['watch', 'orders/'], 2, async () => {
      await client.put('orders/1', 'a');
      await client.put('other/1', 'not under the prefix');
      await client.put('orders/2', 'b');
    });
    const resume = /resume with: (.*)\n/.exec(first.stderr)?.[1]?.split(' ').slice(1) ?? [];
    await client.put('orders/1', 'a again');
    await client.put('orders/3', 'c');

    const second = await watchUntil(resume, 2);

    expect(first.stdout).toBe(
      ['put     orders/1  v1  1 byte  text/plain; charset=utf-8  a', 'put     orders/2  v1  1 byte  text/plain; charset=utf-8  b', ''].join(
        '\n',
      ),
    );
    expect(resume).toEqual(['watch', 'orders/', '--cursor', expect.stringMatching(/^fake1\./)]);
    expect(second.stdout).toBe(
      [
        'put     orders/1  v2  7 bytes  text/plain; charset=utf-8  a again',
        'put     orders/3  v1  1 byte  text/plain; charset=utf-8  c',
        '',
      ].join('\n'),
    );
    expect(new Set(watchRequests().map((request) => request.query.get('prefix')))).toEqual(new Set(['orders/']));
  });

  it('says a cursor past the retention clearly, with the oldest cursor to continue from, and exits 1', async () => {
    await client.put('a', '1');
    await client.put('b', '2');
    fake.feed.oldest = 2;

    const result = await watchUntil(['watch', 'logs/', '--cursor', fake.feed.cursorAt('test', 0)], 1);

    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toBe(
      "error: the cursor is older than the change feed's retention (24 h): changes after it may be gone. Re-read the keys you " +
        `follow, then continue from the oldest cursor still served: ringstore watch logs/ --cursor ${fake.feed.cursorAt('test', 2)} ` +
        '(watch.cursorExpired)\n',
    );
  });

  it('refuses a cursor it did not give, and one of another namespace, with the server’s codes', async () => {
    const garbage = await watchUntil(['watch', '--cursor', 'not-a-cursor'], 1);
    const foreign = await watchUntil(['watch', '--cursor', fake.feed.cursorAt('other-team', 0)], 1);

    expect(garbage).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'error: cursor is not a watch cursor Ringstore gave (watch.cursorInvalid)\n',
    });
    expect(foreign).toMatchObject({ code: 1, stdout: '' });
    expect(foreign.stderr).toContain('(watch.cursorForeign)');
  });

  it('goes on after the server failed more often than the client retries, saying so on stderr', async () => {
    await client.put('a', '1');
    const unavailable = { status: 503, body: { error: { code: 'shard.unavailable', message: 'shard 2 is unavailable', retryable: true } } };
    fake.failNext = [unavailable, unavailable, unavailable];

    const result = await watchUntil(['watch', '--cursor', fake.feed.cursorAt('test', 0)], 1);

    expect(result.code).toBe(0);
    expect(result.stdout).toBe('put     a  v1  1 byte  text/plain; charset=utf-8  1\n');
    expect(result.stderr).toMatch(/^watch: shard 2 is unavailable \(shard\.unavailable\); trying again from the last cursor\n/);
    // Three attempts of the client, then the watch's own resume, from the same cursor; after the change, from its.
    const cursors = watchRequests().map((request) => request.query.get('cursor'));
    expect(cursors.slice(0, 4)).toEqual(Array.from({ length: 4 }, () => fake.feed.cursorAt('test', 0)));
    expect(cursors.slice(4)).toEqual(cursors.slice(4).map(() => fake.feed.cursorAt('test', 1)));
  });

  it('stops on SIGINT when run alone, printing the command that resumes on stderr and exiting 0', async () => {
    const child = spawn(process.execPath, [BIN, 'watch', 'orders/'], { cwd: home, env: { PATH: process.env.PATH ?? '', ...env() } });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    const printed = new Promise<void>((resolve) =>
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
        if (stdout.includes('\n')) resolve();
      }),
    );
    while (watchRequests().length === 0) await new Promise((resolve) => setTimeout(resolve, 20));

    await client.put('orders/7', 'seven');
    await printed;
    child.kill('SIGINT');
    const code = await closed;

    expect(code).toBe(0);
    expect(stdout).toBe('put     orders/7  v1  5 bytes  text/plain; charset=utf-8  seven\n');
    expect(stderr).toBe(`stopped watching; resume with: ringstore watch orders/ --cursor ${fake.feed.cursorAt('test', 1)}\n`);
  });
});

describe('changeLine', () => {
  it('shows an expiry, a binary value by its size and type only, a key with spaces quoted and a long txid cut', () => {
    const base = { version: 3, contentType: 'application/octet-stream', size: 0, cursor: 'c' } as const;

    expect(changeLine({ ...base, key: 'session/a', operation: 'expire' })).toBe('expire  session/a  v3');
    expect(changeLine({ ...base, key: 'my key', operation: 'put', size: 2, value: new Uint8Array([0, 255]) })).toBe(
      'put     "my key"  v3  2 bytes  application/octet-stream',
    );
    expect(changeLine({ ...base, key: 'k', operation: 'delete', txid: 'lbz3k2x0a-0123456789abcdef0123456789abcdef' })).toBe(
      'delete  k  v3  txn lbz3k2x0a-01234…',
    );
  });
});
