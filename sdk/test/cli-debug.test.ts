// `ringstore --debug`: each HTTP exchange on stderr, never on stdout, and never a credential: the real bin against
// the fake Ringstore (and a bare server for --iam), and the redaction rules on their own.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEBUG_BODY_SHOWN_BYTES_MAX, debugFetch, redact, redactHeader, REDACTED, secretsOf } from '../src/cli/debug';
import { run, scanGlobalFlags } from '../src/cli/main';
import { FakeRingstore, type RunningServer, sendJson, startServer } from './support/fake-server';
import { type CliResult, runCli } from './support/run-cli';

jest.setTimeout(30_000);

// A key of the form the server issues, rs_<keyId>_<secret>: its id may be shown, its secret never.
const KEY_ID = '0123456789ab';
const SECRET = 'debugTestSecret0000000000000000000000000';
const API_KEY = `rs_${KEY_ID}_${SECRET}`;

describe('ringstore --debug', () => {
  let fake: FakeRingstore;
  let home: string;

  beforeEach(async () => {
    fake = await new FakeRingstore().start();
    fake.apiKeys.push({ keyId: KEY_ID, apiKey: API_KEY, namespace: 'test', role: 'admin', createdAt: '2025-01-01T00:00:00.000Z' });
    home = await mkdtemp(join(tmpdir(), 'ringstore-cli-debug-'));
  });

  afterEach(async () => {
    await fake.close();
    await rm(home, { recursive: true, force: true });
  });

  const ringstore = (args: string[], input?: string): Promise<CliResult> =>
    runCli(home, args, { env: { RINGSTORE_ENDPOINT: fake.url, RINGSTORE_API_KEY: API_KEY }, ...(input === undefined ? {} : { input }) });

  it('prints the request and response on stderr, the key id but not the secret, and leaves --json on stdout parseable', async () => {
    await ringstore(['put', 'greeting', 'hello world']);

    const result = await ringstore(['--debug', 'get', 'greeting', '--json']);

    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ key: 'greeting', value: 'hello world' });
    const lines = result.stderr.split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        `> GET ${fake.url}/v1/kv/greeting`,
        `> x-api-key: rs_${KEY_ID}_${REDACTED}`,
        '> no body',
        '< content-type: text/plain; charset=utf-8',
        '< x-ringstore-version: 1',
        '< body 11 bytes:',
        '< hello world',
      ]),
    );
    expect(lines.some((line) => /^< 200 OK in \d+ ms$/.test(line))).toBe(true);
    expect(result.stderr).not.toContain(SECRET);
    expect(result.stdout).not.toMatch(/^[<>] /m);
  });

  it('never shows a secret the server answers with (keys create), while stdout shows it once as without --debug', async () => {
    const result = await ringstore(['keys', 'create', 'team-a', '--debug']);

    const created = fake.apiKeys.at(-1)?.apiKey ?? 'missing';
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`secret key (shown once): ${created}`);
    expect(result.stderr).toContain('> POST');
    expect(result.stderr).toContain(`"apiKey":"${REDACTED}"`);
    expect(result.stderr).not.toContain(created);
    expect(result.stderr).not.toContain(SECRET);
  });

  it('shows a request body by its size and cuts a long response body', async () => {
    await writeFile(join(home, 'long.txt'), 'x'.repeat(5000));

    const put = await ringstore(['--debug', 'put', 'long', `@${join(home, 'long.txt')}`]);
    const get = await ringstore(['get', 'long', '--debug']);

    expect(put.stderr).toContain('> body 5000 bytes\n');
    expect(put.stderr).not.toContain('xxxxxxxxxx');
    expect(get.stderr).toContain(
      `< body 5000 bytes (the first ${DEBUG_BODY_SHOWN_BYTES_MAX} shown):\n< ${'x'.repeat(DEBUG_BODY_SHOWN_BYTES_MAX)}\n< …\n`,
    );
    expect(get.stdout).toBe(`${'x'.repeat(5000)}\n`);
  });

  it('shows each attempt of a retried request', async () => {
    fake.failNext.push({ status: 503, body: { error: { code: 'shard.unavailable', message: 'try again', retryable: true } } });

    const result = await ringstore(['--debug', 'keyrange', '--json']);

    expect(result.code).toBe(0);
    expect(result.stderr.match(/^> GET .*\/v1\/ring$/gm)).toHaveLength(2);
    expect(result.stderr).toMatch(/^< 503 Service Unavailable in \d+ ms$/m);
    expect(JSON.parse(result.stdout)).toMatchObject({ epoch: 3 });
  });

  it('holds for every command of a session started with --debug, and for one line given --debug', async () => {
    const session = await ringstore(['--debug'], 'put a 1\nget a\n');
    const oneLine = await ringstore([], 'put b 2\nget b --debug\nget a\n');

    expect(session.code).toBe(0);
    expect(session.stdout).toBe('stored a (version 1)\n1\n');
    expect(session.stderr.match(/^> (PUT|GET) .*$/gm)).toEqual([`> PUT ${fake.url}/v1/kv/a`, `> GET ${fake.url}/v1/kv/a`]);
    expect(oneLine.code).toBe(0);
    expect(oneLine.stderr.match(/^> (PUT|GET) .*$/gm)).toEqual([`> GET ${fake.url}/v1/kv/b`]);
    expect(`${session.stderr}${oneLine.stderr}`).not.toContain(SECRET);
  });

  it('holds in the interactive session on a terminal, its output on stderr and not in the prompt stream', async () => {
    await ringstore(['put', 'greeting', 'hello world']);
    const stdin = Object.assign(new PassThrough(), { isTTY: true });
    const stdout = new PassThrough();
    let shown = '';
    stdout.on('data', (chunk: Buffer) => (shown += chunk.toString('utf8')));
    let debug = '';
    const stderr = { write: (text: string | Uint8Array): boolean => ((debug += String(text)), true) };

    // A line is typed once the session shows its prompt (for the n-th time), as a user would.
    const prompted = async (times: number): Promise<void> => {
      for (let waitedMs = 0; shown.split('ringstore(').length - 1 < times; waitedMs += 10) {
        if (waitedMs > 10_000) throw new Error(`the session never showed its prompt ${times} times; it showed: ${shown}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };

    const running = run(['--debug'], { stdin, stdout, stderr, env: { RINGSTORE_ENDPOINT: fake.url, RINGSTORE_API_KEY: API_KEY } });
    await prompted(1);
    stdin.write('get greeting\n');
    await prompted(2);
    stdin.write('quit\n');
    const code = await running;

    expect(code).toBe(0);
    expect(shown).toContain('hello world');
    expect(shown).not.toMatch(/^[<>] /m);
    expect(debug).toContain(`> GET ${fake.url}/v1/kv/greeting\n> x-api-key: rs_${KEY_ID}_${REDACTED}\n`);
    expect(debug).toContain('< hello world\n');
    expect(debug).not.toContain(SECRET);
  });

  it('is off without --debug', async () => {
    const result = await ringstore(['list']);

    expect(result).toMatchObject({ code: 0, stderr: '' });
  });
});

describe('ringstore --iam --debug', () => {
  let server: RunningServer;
  let home: string;
  const credentials = {
    AWS_ACCESS_KEY_ID: 'AKIAAAAAAAAAAAAAAAAD',
    AWS_SECRET_ACCESS_KEY: 'debug-iam-secret-000000000000000000000000',
    AWS_SESSION_TOKEN: 'debug-iam-session-token-0000000000000000',
  };

  beforeAll(async () => {
    server = await startServer((_request, res) => sendJson(res, 200, { key: 'k', version: 1, consistency: 'eventual' }));
    home = await mkdtemp(join(tmpdir(), 'ringstore-cli-debug-iam-'));
  });

  afterAll(async () => {
    await server.close();
    await rm(home, { recursive: true, force: true });
  });

  it('shows the signature scheme, not the signature, the session token or the secret key', async () => {
    const result = await runCli(home, ['--iam', '--debug', '--endpoint', server.url, 'put', 'k', 'v'], { env: credentials });

    const sent = server.requests[0]?.headers;
    expect(result).toMatchObject({ code: 0, stdout: 'stored k (version 1)\n' });
    expect(result.stderr).toContain(`> authorization: AWS4-HMAC-SHA256 ${REDACTED}`);
    expect(result.stderr).toContain(`> x-amz-security-token: ${REDACTED}`);
    expect(String(sent?.authorization)).toMatch(/Signature=([0-9a-f]{64})/);
    const signature = /Signature=([0-9a-f]{64})/.exec(String(sent?.authorization))?.[1] ?? 'missing';
    for (const secret of [signature, credentials.AWS_SECRET_ACCESS_KEY, credentials.AWS_SESSION_TOKEN]) {
      expect(result.stderr).not.toContain(secret);
    }
  });
});

describe('debug redaction', () => {
  it('keeps an API key id and drops its secret, in headers and in any text', () => {
    expect(redactHeader('x-api-key', API_KEY, [])).toBe(`x-api-key: rs_${KEY_ID}_${REDACTED}`);
    expect(redactHeader('X-Api-Key', 'admin-key', [])).toBe(`X-Api-Key: ${REDACTED}`);
    expect(redact(`key ${API_KEY} in a message`, [])).toBe(`key rs_${KEY_ID}_${REDACTED} in a message`);
  });

  it('drops secret-named JSON fields, presigned URL signatures, and the secrets it is given, wherever they are', () => {
    const body = JSON.stringify({
      keyId: KEY_ID,
      apiKey: 'plain-secret',
      url: 'https://b.s3.amazonaws.com/o?X-Amz-Credential=AKIA%2Fx&X-Amz-Signature=abc123&partNumber=1',
      note: 'mentions given-secret',
    });

    const shown = redact(body, secretsOf('given-secret'));

    expect(JSON.parse(shown)).toEqual({
      keyId: KEY_ID,
      apiKey: REDACTED,
      url: `https://b.s3.amazonaws.com/o?X-Amz-Credential=${REDACTED}&X-Amz-Signature=${REDACTED}&partNumber=1`,
      note: `mentions ${REDACTED}`,
    });
  });

  it('names the secret of an rs_ key (its id may show) and any other credential whole', () => {
    expect(secretsOf(API_KEY, 'aws-secret', undefined, '')).toEqual([SECRET, 'aws-secret']);
  });

  it('redacts a secret the response body holds before cutting the body, so no part of it shows', async () => {
    const secret = 's'.repeat(64);
    const padding = 'p'.repeat(DEBUG_BODY_SHOWN_BYTES_MAX - 20);
    const lines: string[] = [];
    const inner = (): Promise<Response> =>
      Promise.resolve(new Response(`${padding}${secret}`, { status: 200, headers: { 'content-type': 'text/plain' } }));

    const response = await debugFetch((text) => lines.push(text), [secret], inner)('http://x/v1/kv/k');

    expect(await response.text()).toBe(`${padding}${secret}`);
    expect(lines.join('')).toContain(`${padding}${REDACTED}`);
    expect(lines.join('')).not.toContain('ssss');
  });
});

describe('scanGlobalFlags and --debug', () => {
  it('takes --debug anywhere before --, and leaves words after -- to the command', () => {
    expect(scanGlobalFlags(['--debug'])).toEqual({ flags: { debug: true }, rest: [] });
    expect(scanGlobalFlags(['get', 'k', '--debug'])).toEqual({ flags: { debug: true }, rest: ['get', 'k'] });
    expect(scanGlobalFlags(['txn', '--', 'put', 'k', '--debug'])).toEqual({ flags: {}, rest: ['txn', '--', 'put', 'k', '--debug'] });
  });
});
