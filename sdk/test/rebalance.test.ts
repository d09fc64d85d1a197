// The rebalance commands and their convenience methods against the fake Ringstore over real HTTP:
// what each sends, what it reads back, the errors it maps, and the input refused before any request.

import {
  CancelRebalanceCommand,
  ConflictError,
  DescribeRebalanceCommand,
  ForbiddenError,
  NotFoundError,
  PauseRebalanceCommand,
  ResumeRebalanceCommand,
  RingstoreClient,
  SetRebalanceRateCommand,
  StartRebalanceCommand,
  ValidationError,
} from '../src';
import { FakeRingstore } from './support/fake-server';

describe('rebalance commands', () => {
  let fake: FakeRingstore;
  let admin: RingstoreClient;

  beforeEach(async () => {
    fake = await new FakeRingstore().start();
    admin = new RingstoreClient({ endpoint: fake.url, apiKey: 'admin-key', sleep: async () => {} });
  });

  afterEach(async () => {
    await fake.close();
  });

  const sent = () => fake.requests.map((request) => ({ method: request.method, url: request.rawUrl, body: request.body.toString('utf8') }));

  it('starts a rebalance and follows it to the end', async () => {
    // Act
    const started = await admin.send(new StartRebalanceCommand({ add: 1, rateKeysPerSecond: 500 }));
    const midway = await admin.send(new DescribeRebalanceCommand());
    const detailed = await admin.describeRebalance({ ranges: true });
    const done = await admin.describeRebalance();

    // Assess
    expect(started).toMatchObject({ status: 'running', change: { join: [4], leave: [] }, rateKeysPerSecond: 500, progress: 0 });
    expect(started).not.toHaveProperty('rangeDetail');
    expect(midway).toMatchObject({ id: started.id, ranges: { total: 6, moved: 2 }, keysCopied: 3_000 });
    expect(midway.etaSeconds).toBeGreaterThan(0);
    expect(detailed.rangeDetail?.map((range) => range.stage)).toEqual(['moved', 'moved', 'moved', 'moved', 'copying', 'planned']);
    expect(done).toMatchObject({ status: 'done', progress: 1, ranges: { total: 6, cleaned: 6 } });
    expect(done.finishedAt).toEqual(expect.any(String));
    expect(sent()).toEqual([
      { method: 'POST', url: '/v1/admin/rebalance', body: '{"add":1,"rateKeysPerSecond":500}' },
      { method: 'GET', url: '/v1/admin/rebalance', body: '' },
      { method: 'GET', url: '/v1/admin/rebalance?ranges=true', body: '' },
      { method: 'GET', url: '/v1/admin/rebalance', body: '' },
    ]);
  });

  it('pauses, resumes, changes the rate and cancels by id, through commands and methods', async () => {
    const { id } = await admin.startRebalance({ remove: [3] });
    fake.rebalanceRangesPerRead = 0;

    const pause = await admin.send(new PauseRebalanceCommand({ id }));
    const paused = await admin.describeRebalance();
    const resume = await admin.send(new ResumeRebalanceCommand({ id }));
    const rate = await admin.send(new SetRebalanceRateCommand({ id, rateKeysPerSecond: 0 }));
    const cancel = await admin.send(new CancelRebalanceCommand({ id }));
    const cancelled = await admin.describeRebalance();

    expect(pause).toMatchObject({ status: 'running', requested: 'pause' });
    expect(paused.status).toBe('paused');
    expect(resume.status).toBe('running');
    expect(rate.rateKeysPerSecond).toBe(0);
    expect(cancel.requested).toBe('cancel');
    expect(cancelled).toMatchObject({ status: 'cancelled', cancelledFrom: { ranges: 6, moved: 0 } });
    expect(sent().filter((request) => request.method !== 'GET')).toEqual([
      { method: 'POST', url: '/v1/admin/rebalance', body: '{"remove":[3]}' },
      { method: 'POST', url: `/v1/admin/rebalance/${id}/pause`, body: '' },
      { method: 'POST', url: `/v1/admin/rebalance/${id}/resume`, body: '' },
      { method: 'PUT', url: `/v1/admin/rebalance/${id}/rate`, body: '{"rateKeysPerSecond":0}' },
      { method: 'POST', url: `/v1/admin/rebalance/${id}/cancel`, body: '' },
    ]);
  });

  it('percent-encodes the id in the path', async () => {
    await admin.pauseRebalance('a/b c').catch(() => undefined);
    await admin.setRebalanceRate('a/b c', 10).catch(() => undefined);

    expect(fake.requests.map((request) => request.rawUrl)).toEqual([
      '/v1/admin/rebalance/a%2Fb%20c/pause',
      '/v1/admin/rebalance/a%2Fb%20c/rate',
    ]);
  });

  it('maps the server’s refusals to typed errors', async () => {
    const none = await admin.describeRebalance().catch((error: unknown) => error);
    const { id } = await admin.startRebalance({ add: 1 });
    const resumeRunning = await admin.resumeRebalance(id).catch((error: unknown) => error);
    const unknown = await admin.cancelRebalance('rebalance-0-ffffffff').catch((error: unknown) => error);
    const user = new RingstoreClient({ endpoint: fake.url, apiKey: 'user-key', sleep: async () => {} });
    const forbidden = await user.describeRebalance().catch((error: unknown) => error);

    expect(none).toBeInstanceOf(NotFoundError);
    expect(none).toMatchObject({ code: 'rebalance.notFound', status: 404 });
    expect(resumeRunning).toBeInstanceOf(ConflictError);
    expect(resumeRunning).toMatchObject({ code: 'rebalance.conflict' });
    expect(unknown).toMatchObject({ code: 'rebalance.notFound' });
    expect(forbidden).toBeInstanceOf(ForbiddenError);
  });

  it.each([
    ['no change', (client: RingstoreClient) => client.send(new StartRebalanceCommand({})), /add \(a number of shards\) or remove/],
    ['a fractional add', (client: RingstoreClient) => client.send(new StartRebalanceCommand({ add: 1.5 })), /add must be an integer >= 1/],
    [
      'a negative shard id',
      (client: RingstoreClient) => client.send(new StartRebalanceCommand({ remove: [-1] })),
      /remove\[0\] must be an integer >= 0/,
    ],
    [
      'a negative start rate',
      (client: RingstoreClient) => client.send(new StartRebalanceCommand({ add: 1, rateKeysPerSecond: -1 })),
      /rateKeysPerSecond must be/,
    ],
    [
      'a rate that is no number',
      (client: RingstoreClient) => client.send(new SetRebalanceRateCommand({ id: 'r', rateKeysPerSecond: Number.NaN })),
      /rateKeysPerSecond/,
    ],
    ['an empty id', (client: RingstoreClient) => client.send(new PauseRebalanceCommand({ id: '' })), /a rebalance id is needed/],
  ])('refuses %s before any request', async (_, send, message) => {
    const error = await send(admin).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toMatch(message);
    expect(fake.requests).toHaveLength(0);
  });
});
