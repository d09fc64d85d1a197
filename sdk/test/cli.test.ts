// The `ringstore` CLI as users run it against the fake Ringstore, one command per run and whole sessions piped
// through stdin: its entry in this process, and the real bin spawned as a child process where the process itself
// is what a test shows (help and exit codes, a piped session, Ctrl-C).

import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeRingstore } from './support/fake-server';
import { BIN, type CliResult, runBin, runCli } from './support/run-cli';

jest.setTimeout(30_000);

describe('ringstore CLI', () => {
  let fake: FakeRingstore;
  let home: string;

  beforeEach(async () => {
    fake = await new FakeRingstore().start();
    home = await mkdtemp(join(tmpdir(), 'ringstore-cli-'));
  });

  afterEach(async () => {
    await fake.close();
    await rm(home, { recursive: true, force: true });
  });

  const configDir = (): string => join(home, 'config');

  const ringstore = (args: string[], options: { env?: Record<string, string>; input?: string } = {}): Promise<CliResult> =>
    runCli(home, args, options);
  /** As `ringstore`, through the real bin in a child process. */
  const bin = (args: string[], options: { env?: Record<string, string>; input?: string } = {}): Promise<CliResult> =>
    runBin(home, args, options);

  const connected = (): Record<string, string> => ({ RINGSTORE_ENDPOINT: fake.url, RINGSTORE_API_KEY: 'admin-key' });

  it('prints help and exits 0', async () => {
    const result = await bin(['help']);

    expect(result.code).toBe(0);
    for (const command of [
      'connect',
      'disconnect',
      'put',
      'get',
      'delete',
      'list',
      'keyrange',
      'failover',
      'dr',
      'rebalance',
      'txn',
      'quit',
    ]) {
      expect(result.stdout).toContain(command);
    }
  });

  it('connects, saves the connection owner-only, uses it, and disconnects', async () => {
    const connect = await ringstore(['connect', fake.url, 'admin-key']);
    const file = join(configDir(), 'cli.json');
    const saved = JSON.parse(await readFile(file, 'utf8')) as unknown;
    const mode = (await stat(file)).mode & 0o777;
    const put = await ringstore(['put', 'greeting', 'hello world']);
    const get = await ringstore(['get', 'greeting']);
    const disconnect = await ringstore(['disconnect']);
    const after = await ringstore(['get', 'greeting']);

    expect(connect).toMatchObject({ code: 0, stderr: '' });
    expect(connect.stdout).toContain(`connected to ${fake.url} (ring epoch 3, 4 shards)`);
    expect(saved).toEqual({ endpoint: fake.url, apiKey: 'admin-key' });
    expect(mode).toBe(0o600);
    expect(put).toMatchObject({ code: 0, stdout: 'stored greeting (version 1)\n' });
    expect(get).toMatchObject({ code: 0, stdout: 'hello world\n', stderr: '' });
    expect(disconnect).toMatchObject({ code: 0, stdout: 'disconnected\n' });
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(after.code).toBe(1);
    expect(after.stderr).toMatch(/^error: not connected/);
  });

  it('connects to a bare host:port, taking http:// on this machine', async () => {
    const hostAndPort = fake.url.replace(/^http:\/\//, '');
    const connect = await ringstore(['connect', hostAndPort, 'admin-key']);
    const saved = JSON.parse(await readFile(join(configDir(), 'cli.json'), 'utf8')) as unknown;

    expect(connect).toMatchObject({ code: 0, stderr: '' });
    expect(connect.stdout).toContain(`connected to ${fake.url} (ring epoch 3, 4 shards)`);
    expect(saved).toEqual({ endpoint: fake.url, apiKey: 'admin-key' });
  });

  it('puts a value read from standard input with @-, bytes as given', async () => {
    const put = await ringstore(['put', 'from-stdin', '@-'], { env: connected(), input: 'line one\nline two\n' });
    const get = await ringstore(['get', 'from-stdin'], { env: connected() });

    expect(put).toMatchObject({ code: 0, stdout: 'stored from-stdin (version 1)\n' });
    expect(get).toMatchObject({ code: 0, stdout: 'line one\nline two\n' });
  });

  it('refuses to save a connection the server rejects', async () => {
    const result = await ringstore(['connect', fake.url, 'wrong-key']);

    expect(result.code).toBe(1);
    expect(result.stderr).toBe('error: missing or unknown API key (auth.invalidKey)\n');
    await expect(stat(join(configDir(), 'cli.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('reports a missing key on one line and exits 1', async () => {
    const result = await bin(['get', 'x'], { env: connected() });

    expect(result).toEqual({ code: 1, stdout: '', stderr: 'error: key "x" not found (kv.notFound)\n' });
  });

  it('puts with --ttl and --content-type, lists, deletes', async () => {
    const put = await ringstore(['put', 'users/1', '{"n":1}', '--ttl', '60', '--content-type', 'application/json'], { env: connected() });
    await ringstore(['put', 'users/2', 'two'], { env: connected() });
    await ringstore(['put', 'other', 'x'], { env: connected() });
    const list = await ringstore(['list', 'users/'], { env: connected() });
    const deleted = await ringstore(['delete', 'users/1'], { env: connected() });
    const deleteAgain = await ringstore(['delete', 'users/1'], { env: connected() });

    expect(put.code).toBe(0);
    const request = fake.requests.find((r) => r.method === 'PUT');
    expect(request?.query.get('ttlSeconds')).toBe('60');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^KEY\s+VERSION\s+SIZE\s+CONTENT-TYPE\s+EXPIRES$/m);
    expect(list.stdout).toMatch(/^users\/1\s+1\s+7\s+application\/json\s+2030-01-01T00:01:00.000Z$/m);
    expect(list.stdout).toMatch(/^users\/2\s+1\s+3\s+/m);
    expect(list.stdout).not.toContain('other');
    expect(list.stdout).toContain('2 keys');
    expect(deleted).toMatchObject({ code: 0, stdout: 'deleted users/1 (version 2)\n' });
    expect(deleteAgain).toMatchObject({ code: 1, stderr: 'error: key "users/1" not found (kv.notFound)\n' });
  });

  it('list --limit says how to see the next keys, and --cursor continues there', async () => {
    const seed = ['a', 'b', 'c', 'd', 'e'].map((key) => `put users/${key} ${key}`).join('\n');
    await ringstore([], { env: connected(), input: `${seed}\n` });

    const first = await ringstore(['list', 'users/', '--limit', '2'], { env: connected() });
    const more = /^more: ringstore list users\/ --limit 2 --cursor (\S+)$/m.exec(first.stdout);
    const second = await ringstore(['list', 'users/', '--limit', '2', '--cursor', more?.[1] ?? 'missing'], { env: connected() });
    const lastCursor = /--cursor (\S+)$/m.exec(second.stdout)?.[1] ?? 'missing';
    const last = await ringstore(['list', 'users/', '--limit', '2', '--cursor', lastCursor], { env: connected() });
    const json = await ringstore(['list', 'users/', '--limit', '4', '--json'], { env: connected() });
    const everything = await ringstore(['list', 'users/'], { env: connected() });

    const keysOf = (text: string) => [...text.matchAll(/^(users\/\S+)\s/gm)].map((match) => match[1]);
    expect(first.code).toBe(0);
    expect(keysOf(first.stdout)).toEqual(['users/a', 'users/b']);
    expect(more).not.toBeNull();
    expect(keysOf(second.stdout)).toEqual(['users/c', 'users/d']);
    expect(keysOf(last.stdout)).toEqual(['users/e']);
    expect(last.stdout).not.toContain('more:');
    expect((JSON.parse(json.stdout) as Array<{ key: string }>).map((item) => item.key)).toEqual([
      'users/a',
      'users/b',
      'users/c',
      'users/d',
    ]);
    expect(json.stderr).toMatch(/^more: ringstore list users\/ --limit 4 --cursor \S+\n$/);
    expect(keysOf(everything.stdout)).toHaveLength(5);
    expect(everything.stdout).not.toContain('more:');
  });

  it('cuts a long key in the listing instead of padding every row to its width', async () => {
    const long = `logs/${'x'.repeat(200)}`;
    await ringstore([], { env: connected(), input: `put ${long} 1\nput logs/short 2\n` });

    const list = await ringstore(['list', 'logs/'], { env: connected() });
    const json = await ringstore(['list', 'logs/', '--json'], { env: connected() });

    const lines = list.stdout.split('\n');
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThan(120);
    expect(list.stdout).toContain(`logs/${'x'.repeat(42)}…`);
    expect(list.stdout).toMatch(/^logs\/short\s+1\s+1\s/m);
    expect(list.stdout).toContain('2 keys (1 cut to 48 characters; --json shows keys whole)');
    expect((JSON.parse(json.stdout) as Array<{ key: string }>).map((item) => item.key)).toContain(long);
  });

  it('stores a file with @path and writes a binary value with --out', async () => {
    const input = join(home, 'in.bin');
    const output = join(home, 'out.bin');
    const bytes = Buffer.from([0, 159, 146, 150, 255, 0, 1]);
    await writeFile(input, bytes);

    const put = await ringstore(['put', 'blob', `@${input}`], { env: connected() });
    const print = await ringstore(['get', 'blob'], { env: connected() });
    const save = await ringstore(['get', 'blob', '--out', output], { env: connected() });

    expect(put.code).toBe(0);
    expect(fake.store.get('test#blob')?.contentType).toBe('application/octet-stream');
    expect(print.code).toBe(1);
    expect(print.stderr).toContain('use --out <file>');
    expect(save.code).toBe(0);
    expect((await readFile(output)).equals(bytes)).toBe(true);
  });

  it('prints the ring with keyrange', async () => {
    const result = await ringstore(['keyrange'], { env: connected() });

    expect(result.code).toBe(0);
    expect(result.stdout).toContain('ring epoch 3, replication factor 3');
    expect(result.stdout).toMatch(/^\s+0\s+ringstore-test-shard-0\s+active\s+2\s+25\.0%$/m);
    expect(result.stdout).toMatch(/^\s+START\s+END\s+OWNER\s+REPLICAS$/m);
    expect(result.stdout).toMatch(/^\s+4294967295\s+536870911\s+0\s+0, 1, 2$/m);
    expect(result.stdout).not.toContain('warning');
  });

  it('starts a failover, moves ranges back, and lists both', async () => {
    const start = await ringstore(['failover', 'start', '1', '--reason', 'table throttled'], { env: connected() });
    const again = await ringstore(['failover', 'start', '1'], { env: connected() });
    const back = await ringstore(['failover', 'move-back', '1'], { env: connected() });
    const list = await ringstore(['failover', 'list'], { env: connected() });
    const json = await ringstore(['failover', 'list', '--json'], { env: connected() });
    const wrong = await ringstore(['failover', 'start', '9'], { env: connected() });

    expect(start).toMatchObject({ code: 0, stdout: 'failover shard-1-epoch-3 started; follow it with: ringstore failover list\n' });
    expect(again).toMatchObject({ code: 0, stdout: 'failover shard-1-epoch-3 was started before\n' });
    expect(back.stdout).toContain('move-back shard-1-epoch-3-moveback started');
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^ID\s+SHARD\s+ACTION\s+STATUS\s+REQUESTED\s+RANGES\s+NOTES$/m);
    expect(list.stdout).toMatch(/^shard-1-epoch-3-moveback\s+1\s+moveBack\s+completed\s+\S+\s+1 to 1\s*$/m);
    expect(list.stdout).toMatch(/^shard-1-epoch-3\s+1\s+failOver\s+completed\s+\S+\s+1 to 2\s+rejoined, 1 divergent$/m);
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({ id: 'shard-1-epoch-3-moveback', action: 'moveBack' }),
      expect.objectContaining({ id: 'shard-1-epoch-3', reason: 'table throttled', status: 'completed' }),
    ]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('shard 9 is not on the ring');
  });

  it('namespace set prints the settings and says when requests see them (the authorizer cache)', async () => {
    const set = await ringstore(['namespace', 'set', 'team', '--rate', '50', '--burst', '100'], { env: connected() });
    const get = await ringstore(['namespace', 'get', 'team'], { env: connected() });

    expect(set).toMatchObject({
      code: 0,
      stdout:
        'namespace team\nconsistency: reads eventual, writes eventual; DR mode key-sync\nrate: 50/s, burst 100\nstorage: no quota\n' +
        'takes effect within 60 s: requests keep the settings their key was authorized with until then\n',
    });
    // A read changes nothing, so it says nothing of the kind.
    expect(get.code).toBe(0);
    expect(get.stdout).not.toContain('takes effect');
  });

  it('shows the DR status, promotes the backup region, and prints the report with its lost keys', async () => {
    const before = await ringstore(['dr', 'report'], { env: connected() });
    const status = await ringstore(['dr', 'status'], { env: connected() });
    const promote = await ringstore(['dr', 'promote', '--reason', 'primary region lost'], { env: connected() });
    const again = await ringstore(['dr', 'promote'], { env: connected() });
    const report = await ringstore(['dr', 'report'], { env: connected() });
    const json = await ringstore(['dr', 'report', '--json'], { env: connected() });
    const after = await ringstore(['dr', 'status', '--json'], { env: connected() });
    const sync = await ringstore(['dr', 'sync'], { env: connected() });

    expect(before.code).toBe(1);
    expect(before.stderr).toContain('has not been promoted');
    expect(status).toMatchObject({ code: 0 });
    expect(status.stdout).toContain('backup; backup (epoch 0)');
    expect(status.stdout).toContain('pending keys: 2, oldest users/42 (120 ms); lost keys: 0');
    expect(promote.stdout).toBe('promotion promotion-epoch-0 started; follow it with: ringstore dr report\n');
    expect(again.stdout).toContain('was started before');
    expect(report.stdout).toContain('promotion promotion-epoch-0: completed (primary region lost)');
    expect(report.stdout).toContain('lost keys: 1');
    expect(report.stdout).toMatch(/^test\s+users\/42\s+7\s+\S+\s+-$/m);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'completed', lost: { count: 1 } });
    expect(JSON.parse(after.stdout)).toMatchObject({ role: 'backup', state: 'promoted' });
    expect(sync.stdout).toBe('initial sync running: 0 of 64 ranges, 0 keys shipped; follow it with: ringstore dr status\n');
  });

  it('reconciles a lost key: offer, list, a restore refused until offered and at a wrong version, then restored', async () => {
    const beforePromotion = await ringstore(['dr', 'offer'], { env: connected() });
    await ringstore(['dr', 'promote'], { env: connected() });
    const notOffered = await ringstore(['dr', 'restore', 'test', 'users/42', '7'], { env: connected() });
    const offer = await ringstore(['dr', 'offer'], { env: connected() });
    const lost = await ringstore(['dr', 'lost'], { env: connected() });
    const wrongVersion = await ringstore(['dr', 'restore', 'test', 'users/42', '7', '--expect-version', '5'], { env: connected() });
    const restore = await ringstore(['dr', 'restore', 'test', 'users/42', '7', '--expect-version', '6'], { env: connected() });
    const discard = await ringstore(['dr', 'discard', 'test', 'users/42', '7'], { env: connected() });
    const after = await ringstore(['dr', 'lost', '--json'], { env: connected() });
    const badVersion = await ringstore(['dr', 'discard', 'test', 'users/42', 'x'], { env: connected() });

    expect(beforePromotion.code).toBe(1);
    expect(beforePromotion.stderr).toContain('has not been promoted');
    expect(notOffered.stderr).toContain('was offered back');
    expect(offer.stdout).toContain('promotion promotion-epoch-0: 1 values offered back, 0 keys not held');
    expect(lost.stdout).toMatch(/^test\s+users\/42\s+7\s+\S+\s+5 B\s+6\s+-$/m);
    expect(wrongVersion.code).toBe(1);
    expect(wrongVersion.stderr).toContain('holds version 6 here, not 5');
    expect(restore.stdout).toBe('restored test users/42: the lost version 7 is now version 7\n');
    expect(discard.stderr).toContain('has no lost write at version 7');
    expect(JSON.parse(after.stdout)).toEqual({ entries: [] });
    expect(badVersion.stderr).toContain('expected an integer >= 0');
  });

  it('txn says deleted for a key it deleted', async () => {
    await ringstore(['put', 'gone', 'soon'], { env: connected() });

    const result = await ringstore(['txn', 'delete', 'gone', 'put', 'kept', 'here'], { env: connected() });

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^deleted\s+gone\s+version 2$/m);
    expect(result.stdout).toMatch(/^wrote\s+kept\s+version 1$/m);
  });

  it('adds shards and follows the rebalance to the end, one line per change when the output is no terminal', async () => {
    const result = await ringstore(['rebalance', 'add', '--count', '2', '--rate', '500'], { env: connected() });

    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const id = fake.rebalance?.id ?? '';
    const lines = result.stdout.split('\n');
    expect(lines.slice(0, 5)).toEqual([
      `rebalance ${id} started: add shards 4, 5, 6 ranges to move`,
      'running: 0/6 ranges moved, 0 keys copied, 0 keys/s, 0%',
      'running: 2/6 ranges moved, 3,000 keys copied, 500 keys/s, 33%, ETA 24s',
      'running: 4/6 ranges moved, 6,000 keys copied, 1,000 keys/s, 66%, ETA 12s',
      'done: 6/6 ranges moved, 9,000 keys copied, 1,500 keys/s, 100%',
    ]);
    expect(lines[5]).toMatch(new RegExp(`^rebalance ${id} done: 6 ranges moved, 9,000 keys copied in \\d+s$`));
    expect(fake.requests.find((request) => request.method === 'POST')?.body.toString('utf8')).toBe('{"add":2,"rateKeysPerSecond":500}');
    // Polled about once a second: three reads after the start, not a busy loop.
    expect(fake.requests.filter((request) => request.method === 'GET')).toHaveLength(3);
  });

  it('removes a shard without watching, shows, pauses, resumes, changes the rate and cancels the current rebalance', async () => {
    const remove = await ringstore(['rebalance', 'remove', '3', '--no-watch'], { env: connected() });
    const id = fake.rebalance?.id ?? '';
    fake.rebalanceRangesPerRead = 1;
    const status = await ringstore(['rebalance', 'status', '--ranges'], { env: connected() });
    const json = await ringstore(['rebalance', 'status', '--json'], { env: connected() });
    // Without an id, pause reads the current one first (a read of the fake moves a range).
    const pause = await ringstore(['rebalance', 'pause'], { env: connected() });
    const watchPaused = await ringstore(['rebalance', 'status', '--watch'], { env: connected() });
    const resume = await ringstore(['rebalance', 'resume', id, '--no-watch'], { env: connected() });
    const rate = await ringstore(['rebalance', 'rate', '0'], { env: connected() });
    const limited = await ringstore(['rebalance', 'rate', '20000', '--id', id], { env: connected() });
    const cancel = await ringstore(['rebalance', 'cancel'], { env: connected() });
    const cancelled = await ringstore(['rebalance', 'status'], { env: connected() });

    expect(remove).toMatchObject({
      code: 0,
      stdout: `rebalance ${id} started: remove shard 3, 6 ranges to move\nfollow it with: ringstore rebalance status --watch\n`,
    });
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`rebalance ${id}: running, remove shard 3\n`);
    expect(status.stdout).toContain('ranges:   1/6 moved (1 moving, 4 planned, 0 cleaned)\n');
    expect(status.stdout).toContain('keys:     1,500 copied, 250 keys/s; rate limit 2,000 keys/s\n');
    expect(status.stdout).toContain('progress: 16%, ETA 30s\n');
    expect(status.stdout).toMatch(/^START\s+END\s+FROM\s+TO\s+STAGE\s+COPIED$/m);
    expect(status.stdout).toMatch(/^4294967295\s+536870911\s+0,1,2\s+4,0,1\s+moved\s+1,500$/m);
    expect(JSON.parse(json.stdout)).toMatchObject({ id, status: 'running', change: { join: [], leave: [3] } });
    expect(pause).toMatchObject({
      code: 0,
      stdout: `pause of rebalance ${id} requested: it stops after its current step (ringstore rebalance status)\n`,
    });
    expect(watchPaused.code).toBe(0);
    expect(watchPaused.stdout).toMatch(new RegExp(`^rebalance ${id} paused at 3/6 ranges; go on with: ringstore rebalance resume$`, 'm'));
    expect(resume).toMatchObject({ code: 0, stdout: `rebalance ${id} resumed\n` });
    expect(rate).toMatchObject({ code: 0, stdout: `rebalance ${id} copies with no ceiling now\n` });
    expect(limited).toMatchObject({ code: 0, stdout: `rebalance ${id} copies at most 20,000 keys/s now\n` });
    expect(cancel).toMatchObject({
      code: 0,
      stdout: `cancel of rebalance ${id} requested: what moved is moved back (ringstore rebalance status --watch)\n`,
    });
    expect(cancelled.stdout).toContain(`rebalance ${id}: cancelled, remove shard 3\n`);
    expect(cancelled.stdout).toMatch(/^cancelled with \d of 6 ranges moved: the ranges above are the moves back$/m);
    const actions = fake.requests.filter((request) => request.method !== 'GET').map((request) => `${request.method} ${request.rawUrl}`);
    expect(actions).toEqual([
      'POST /v1/admin/rebalance',
      `POST /v1/admin/rebalance/${id}/pause`,
      `POST /v1/admin/rebalance/${id}/resume`,
      `PUT /v1/admin/rebalance/${id}/rate`,
      `PUT /v1/admin/rebalance/${id}/rate`,
      `POST /v1/admin/rebalance/${id}/cancel`,
    ]);
  });

  it('stops watching on Ctrl-C and says the rebalance goes on', async () => {
    await ringstore(['rebalance', 'add', '--no-watch'], { env: connected() });
    fake.rebalanceRangesPerRead = 0;
    const child = spawn(process.execPath, [BIN, 'rebalance', 'status', '--watch'], {
      cwd: home,
      env: { PATH: process.env.PATH ?? '', HOME: home, RINGSTORE_CONFIG_DIR: configDir(), ...connected() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));

    await new Promise<void>((resolve) =>
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
        if (stdout.includes('running:')) resolve();
      }),
    );
    child.kill('SIGINT');
    const code = await closed;

    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain(`stopped watching; rebalance ${fake.rebalance?.id ?? ''} goes on`);
    expect(fake.rebalance?.status).toBe('running');
    expect(fake.requests.some((request) => request.method === 'POST' && request.rawUrl !== '/v1/admin/rebalance')).toBe(false);
  });

  it('reports what is wrong with a rebalance command', async () => {
    const none = await ringstore(['rebalance', 'status'], { env: connected() });
    const noneToPause = await ringstore(['rebalance', 'pause'], { env: connected() });
    const badShard = await ringstore(['rebalance', 'remove', '1', 'x'], { env: connected() });
    const badRate = await ringstore(['rebalance', 'add', '--rate', '-5'], { env: connected() });
    const unknownShard = await ringstore(['rebalance', 'remove', '7'], { env: connected() });
    await ringstore(['rebalance', 'add', '--no-watch'], { env: connected() });
    const resumeRunning = await ringstore(['rebalance', 'resume'], { env: connected() });
    const asUser = await ringstore(['rebalance', 'status'], { env: { RINGSTORE_ENDPOINT: fake.url, RINGSTORE_API_KEY: 'user-key' } });

    expect(none.code).toBe(1);
    // The CLI names its own command, not the HTTP route the server's message names.
    expect(none.stderr).toBe(
      'error: no rebalance has run here: start one with `ringstore rebalance add` (or `ringstore rebalance remove <shard>`) (rebalance.notFound)\n',
    );
    expect(noneToPause.code).toBe(1);
    expect(noneToPause.stderr).toContain('rebalance.notFound');
    expect(badShard).toMatchObject({ code: 1, stderr: 'error: shard "x": expected an integer >= 0\n' });
    expect(badRate.code).toBe(1);
    expect(badRate.stderr).toContain("option '--rate <keysPerSecond>' argument '-5' is invalid");
    expect(unknownShard.code).toBe(1);
    expect(unknownShard.stderr).toContain('shard 7 is not on the ring');
    expect(resumeRunning.code).toBe(1);
    expect(resumeRunning.stderr).toContain('only a paused rebalance resumes');
    expect(asUser.code).toBe(1);
    expect(asUser.stderr).toMatch(/admin/);
    // Nothing was started by a refused command, only by the one good add.
    expect(fake.requests.filter((request) => request.method === 'POST' && request.rawUrl === '/v1/admin/rebalance')).toHaveLength(2);
  });

  it('refuses failover commands to a user key', async () => {
    const result = await ringstore(['failover', 'list'], { env: { RINGSTORE_ENDPOINT: fake.url, RINGSTORE_API_KEY: 'user-key' } });

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/admin/);
  });

  it('takes --endpoint/--api-key over the environment', async () => {
    const result = await ringstore(['--endpoint', fake.url, '--api-key', 'admin-key', 'put', 'k', 'v'], {
      env: { RINGSTORE_ENDPOINT: 'http://127.0.0.1:9', RINGSTORE_API_KEY: 'wrong' },
    });

    expect(result).toMatchObject({ code: 0, stdout: 'stored k (version 1)\n' });
  });

  it('reports usage errors with exit code 1', async () => {
    const unknown = await ringstore(['frobnicate']);
    const badTtl = await ringstore(['put', 'k', 'v', '--ttl', '0'], { env: connected() });

    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
    expect(badTtl.code).toBe(1);
    expect(badTtl.stderr).toContain('--ttl');
    expect(fake.requests.filter((r) => r.method === 'PUT')).toHaveLength(0);
  });

  it('runs a transaction from words, prints versions and values, and exits 1 naming the reason and key on abort', async () => {
    // Prepare
    await ringstore(['put', 'stock', '5'], { env: connected() });

    // Act
    const committed = await ringstore(['txn', 'get', 'stock', 'put', 'order/1', 'one item', 'if', '0', 'check', 'stock', '1'], {
      env: connected(),
    });
    const aborted = await ringstore(['txn', 'put', 'order/2', 'x', 'check', 'stock', '9'], { env: connected() });
    const usage = await ringstore(['txn', 'put', 'k'], { env: connected() });

    // Assess
    expect(committed.code).toBe(0);
    expect(committed.stdout).toMatch(/^committed fake-\S+ \(1 write, 1 read\)$/m);
    expect(committed.stdout).toMatch(/^wrote\s+order\/1\s+version 1$/m);
    expect(committed.stdout).toMatch(/^read\s+stock\s+version 1\s+5$/m);
    expect(fake.store.get('test#order/1')?.value.toString('utf8')).toBe('one item');
    expect(aborted.code).toBe(1);
    expect(aborted.stderr).toMatch(
      /^error: transaction aborted \(precondition\) on key "stock": nothing was written; .*\(kv\.preconditionFailed; txid fake-/,
    );
    expect(fake.store.has('test#order/2')).toBe(false);
    expect(usage).toMatchObject({ code: 1, stdout: '' });
    expect(usage.stderr).toContain('put k needs a value');
  });

  it('runs a transaction from a JSON file on stdin and prints --json as the REST API answers', async () => {
    const ops = {
      ops: [
        { op: 'put', key: 'bin', value: 'AAEC', encoding: 'base64' },
        { op: 'get', key: 'bin' },
      ],
      timeoutMs: 900,
    };

    const result = await ringstore(['txn', '--file', '-', '--json', '--consistency', 'strong'], {
      env: connected(),
      input: JSON.stringify(ops),
    });

    expect(result).toMatchObject({ code: 0, stderr: '' });
    const printed = JSON.parse(result.stdout) as { status: string; writes: unknown; reads: unknown };
    expect(printed).toMatchObject({
      status: 'committed',
      writes: [{ key: 'bin', version: 1 }],
      reads: [{ key: 'bin', found: true, value: 'AAEC', contentType: 'application/octet-stream' }],
    });
    const request = fake.requests.find((r) => r.pathname === '/v1/txn');
    expect(request?.query.get('consistency')).toBe('strong');
    expect(JSON.parse(request?.body.toString('utf8') ?? '')).toMatchObject({ timeoutMs: 900 });
  });

  it('runs piped commands line by line, continues after an error, stops at quit', async () => {
    const script = [
      `connect ${fake.url} admin-key`,
      '# a comment',
      '',
      'put "my key" "hello there"',
      'get "my key"',
      'get nope',
      'keyrange',
      'quit',
      'put after-quit x',
    ].join('\n');

    const result = await bin([], { input: `${script}\n` });

    expect(result.code).toBe(1); // one line failed
    expect(result.stdout).toContain('stored "my key" (version 1)');
    expect(result.stdout).toContain('hello there\n');
    expect(result.stdout).toContain('ring epoch 3');
    expect(result.stderr).toBe('error: key "nope" not found (kv.notFound)\n');
    expect(fake.store.has('test#after-quit')).toBe(false);
  });

  it('exits 0 when every piped command succeeds', async () => {
    const result = await ringstore([], { env: connected(), input: 'put a 1\nget a\nlist\n' });

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('1 key');
  });
});
