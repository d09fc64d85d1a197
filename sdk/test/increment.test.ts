// increment and `ringstore incr` against the fake Ringstore: the request the SDK sends, the answer it reads, what it
// refuses before any request, that it never repeats an increment that may have applied, and the CLI's output.

import { ConflictError, IncrementCommand, PreconditionFailedError, RingstoreClient, ValidationError } from '../src';
import { cliFixture, clientFixture } from './support/cli-fixture';

jest.setTimeout(30_000);

describe('increment', () => {
  const fixture = clientFixture();
  const client = () => fixture.client();
  const fake = () => fixture.fake();

  it('adds to the counter (1 by default) and answers the new value with the version', async () => {
    const first = await client().increment('hits');
    const second = await client().increment('hits', 41, { consistency: 'strong' });

    expect([first, second]).toEqual([
      { key: 'hits', version: 1, consistency: 'eventual', value: 1 },
      { key: 'hits', version: 2, consistency: 'eventual', value: 42 },
    ]);
    const sent = fake().requests.at(-1)!;
    expect(`${sent.method} ${sent.rawUrl}`).toBe('POST /v1/kv/hits/increment?consistency=strong');
    expect(JSON.parse(sent.body.toString('utf8'))).toEqual({ by: 41 });
    expect(sent.headers['content-type']).toBe('application/json');
  });

  it('sends If-Match and If-None-Match as a put does, and throws the 412', async () => {
    await client().send(new IncrementCommand({ key: 'c', ifNoneMatch: '*' }));

    const stale = await client()
      .increment('c', 1, { ifMatch: 7 })
      .catch((caught: unknown) => caught);

    expect(fake().requests.at(-1)?.headers['if-match']).toBe('"7"');
    expect(stale).toBeInstanceOf(PreconditionFailedError);
  });

  it('throws the server refusal of a key that holds no integer as a ConflictError with its code', async () => {
    await client().put('name', 'Ada');

    const error = await client()
      .increment('name')
      .catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ code: 'kv.notAnInteger', status: 409 });
  });

  it.each([1.5, Number.MAX_SAFE_INTEGER + 1, Number.NaN])('refuses by = %p before any request', async (by) => {
    const requests = fake().requests.length;

    await expect(client().increment('k', by)).rejects.toBeInstanceOf(ValidationError);
    expect(fake().requests.length).toBe(requests);
  });

  it('never sends an increment twice after a failure that may have applied, but does after a 429', async () => {
    // Prepare: a client that would retry a read three times.
    fake().failNext.push({ status: 503, body: { error: { code: 'shard.unavailable', message: 'down', retryable: true } } });
    const retrying = new RingstoreClient({
      endpoint: fake().url,
      apiKey: 'user-key',
      maxAttempts: 3,
      sleep: async () => undefined,
    });
    const before = fake().requests.length;

    // Act
    const unavailable = await retrying.increment('k').catch((caught: unknown) => caught);
    fake().failNext.push({ status: 429, body: { error: { code: 'quota.rate', message: 'slow down', retryable: true } } });
    const afterThrottle = await retrying.increment('k');

    // Assess: the 503 is thrown after one request; the 429 is retried once and the increment applied once.
    expect(unavailable).toMatchObject({ code: 'shard.unavailable', status: 503 });
    expect(afterThrottle).toMatchObject({ version: 1, value: 1 });
    expect(fake().requests.length - before).toBe(3);
  });
});

describe('ringstore incr', () => {
  const { ringstore } = cliFixture('incr');

  it('prints the new value: 1 by default, then by the amount given, negative after --', async () => {
    const session = await ringstore([], { input: 'incr visits\nincr visits 5\nincr visits -- -10\n' });

    expect(session).toMatchObject({ code: 0, stderr: '' });
    expect(session.stdout).toBe('1\n6\n-4\n');
  });

  it('--json prints the answer; --if-match a stale version fails with the 412', async () => {
    const json = await ringstore(['incr', 'visits', '2', '--json']);
    const stale = await ringstore(['incr', 'visits', '--if-match', '7']);

    expect(JSON.parse(json.stdout)).toEqual({ key: 'visits', version: 1, consistency: 'eventual', value: 2 });
    expect(stale).toMatchObject({ code: 1, stdout: '' });
    expect(stale.stderr).toMatch(/\(kv\.preconditionFailed\)/);
  });

  it('refuses a by that is not an integer before any request, and says why a key holding text is refused', async () => {
    await ringstore(['put', 'name', 'Ada']);

    const bad = await ringstore(['incr', 'visits', '1.5']);
    const text = await ringstore(['incr', 'name']);

    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/'1\.5' is invalid for argument 'by'\. expected an integer from -9007199254740991 to 9007199254740991/);
    expect(text).toMatchObject({ code: 1, stdout: '' });
    expect(text.stderr).toMatch(/not a decimal integer.*\(kv\.notAnInteger\)/);
  });
});
