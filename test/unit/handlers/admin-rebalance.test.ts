// The admin API's rebalance routes through the real admin handler (middy, errors, the router, the
// RebalanceService) on in-memory ports: what each route answers, and every way a request is refused.
import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { loadConfig } from '../../../lambdas/config';
import { adminHandler } from '../../../lambdas/handlers/admin';
import { adminDeps } from '../../../lambdas/wiring/admin-deps';
import { RebalanceService, type RebalanceLimits } from '../../../lambdas/core/rebalance-service';
import { initialRingState } from '../../../lambdas/core/ring';
import type { RebalanceStarter, RingState } from '../../../lambdas/ports';
import { Wiring } from '../../../lambdas/wiring/wiring';
import { envVars, rebalanceDefaults } from '../../../schemas/topology';
import { CountingIds, ManualClock, MemoryRebalanceJobs, MemoryShardStore } from '../../support/memory-ports';

/** A Lambda environment pointing at a closed port: nothing here may reach an engine. */
const env = { [envVars.dynamodbEndpoint]: 'http://127.0.0.1:9', AWS_REGION: 'eu-west-1' };

const limits: RebalanceLimits = {
  leaseWaitMs: 0,
  cutoverLeaseWaitMs: 0,
  ringRefreshWaitMs: 0,
  pageSize: 10,
  catchUpConcurrency: 2,
  stepBudgetMs: 60_000,
  verifyPassesMax: 2,
  cutoverRangesMax: rebalanceDefaults.cutoverRangesMax,
  cutoverKeysMax: rebalanceDefaults.cutoverKeysMax,
  cutoverConcurrency: rebalanceDefaults.cutoverConcurrency,
  defaultRateKeysPerSecond: rebalanceDefaults.defaultRateKeysPerSecond,
  backoffMs: { first: 1, max: 1 },
};

interface Call {
  method: 'GET' | 'POST' | 'PUT';
  resource: string;
  pathParameters?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  role?: 'admin' | 'user';
}

/** The admin handler over one in-memory ring (shards 0 to 3) and job store, with a recording workflow starter. */
function world(options: { starter?: 'recording' | 'none' | 'failing' } = {}) {
  const clock = new ManualClock();
  const rings = {
    state: initialRingState({ shardCount: 4, replicationFactor: 3, vnodesPerShard: 4, tableName: (id) => `shard-${id}` }),
    readRing: async () => structuredClone(rings.state),
    publishRing: async (next: RingState) => {
      if (rings.state.epoch !== next.epoch - 1) return false;
      rings.state = structuredClone(next);
      return true;
    },
  };
  const shards = new MemoryShardStore();
  const jobs = new MemoryRebalanceJobs();
  const unused = async (): Promise<never> => {
    throw new Error('the admin routes settle no transactions');
  };
  const service = new RebalanceService({
    rings,
    shards,
    ranges: shards,
    jobs,
    transactions: { findTransactions: unused, applyCommitted: unused },
    clock,
    sleep: async (ms) => void (clock.now += ms),
    tableOf: (id) => `shard-${id}`,
    limits,
  });
  const runs: Array<{ id: string; run: string }> = [];
  const starter: RebalanceStarter = {
    start: async (input) => {
      if (options.starter === 'failing') throw new Error('StartExecution: access denied');
      runs.push(input);
      return true;
    },
  };
  const logger = new Logger({ serviceName: 'ringstore', logLevel: 'SILENT' });
  const host = Wiring.create({ config: loadConfig(env), clock, ids: new CountingIds(), logger });
  const wired = options.starter === 'none' ? host : host.with({ rebalances: starter });
  // What the handler's builders would make from the config, replaced by in-memory ports.
  wired.shared('ringStore', () => rings);
  wired.shared('admin:rebalance', () => service);
  const handler = adminHandler(adminDeps(wired.forHandler('admin')));

  const call = async ({ method, resource, pathParameters, query, body, role = 'admin' }: Call) => {
    const event = {
      httpMethod: method,
      resource,
      path: resource.replace(/\{(\w+)\}/g, (_, name: string) => pathParameters?.[name] ?? ''),
      pathParameters: pathParameters ?? null,
      queryStringParameters: query ?? null,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? null : typeof body === 'string' ? body : JSON.stringify(body),
      isBase64Encoded: false,
      requestContext: { authorizer: { namespace: 'ops', role, keyId: 'k1' } },
    } as unknown as APIGatewayProxyEvent;
    const result = await handler(event, {} as Context);
    return { status: result.statusCode, body: JSON.parse(result.body) as Record<string, unknown> & { error?: Record<string, unknown> } };
  };
  const start = (body: unknown, role?: 'admin' | 'user') =>
    call({ method: 'POST', resource: '/v1/admin/rebalance', body, ...(role ? { role } : {}) });
  const status = (query?: Record<string, string>) => call({ method: 'GET', resource: '/v1/admin/rebalance', ...(query ? { query } : {}) });
  const act = (action: 'pause' | 'resume' | 'cancel', id: string) =>
    call({ method: 'POST', resource: `/v1/admin/rebalance/{id}/${action}`, pathParameters: { id } });
  const rate = (id: string, body: unknown) =>
    call({ method: 'PUT', resource: '/v1/admin/rebalance/{id}/rate', pathParameters: { id }, body });
  return { clock, rings, jobs, service, runs, call, start, status, act, rate };
}

describe('POST /v1/admin/rebalance', () => {
  it('adds shards with the ids after the highest, starts the workflow, and answers 202 with the status', async () => {
    // Prepare
    const { start, runs, rings, clock } = world();
    // Act
    const answer = await start({ add: 2, rateKeysPerSecond: 500 });
    // Assess
    expect(answer.status).toBe(202);
    const id = answer.body.id as string;
    expect(id).toMatch(/^rebalance-\d+-[0-9a-f]{8}$/);
    expect(answer.body).toMatchObject({
      status: 'running',
      change: { join: [4, 5], leave: [] },
      rateKeysPerSecond: 500,
      startedAt: new Date(clock.now).toISOString(),
      keysCopied: 0,
      progress: 0,
      revision: 1,
    });
    expect((answer.body.ranges as { total: number; planned: number }).total).toBeGreaterThan(0);
    expect(answer.body.ranges).toMatchObject({ planned: (answer.body.ranges as { total: number }).total, moving: 0, moved: 0 });
    expect(answer.body).not.toHaveProperty('rangeDetail');
    expect(runs).toEqual([{ id, run: `${id}-1` }]);
    expect(rings.state.shards.filter((shard) => shard.status === 'joining').map((shard) => shard.id)).toEqual([4, 5]);
  });

  it('removes shards at the default rate when none is given', async () => {
    const { start } = world();

    const answer = await start({ remove: [3] });

    expect(answer.status).toBe(202);
    expect(answer.body).toMatchObject({ change: { join: [], leave: [3] }, rateKeysPerSecond: rebalanceDefaults.defaultRateKeysPerSecond });
  });

  it.each([
    [{}, 'body: nothing to do: give add (how many shards to add) or remove (shard ids), or both'],
    [{ add: 0 }, `body add: must be an integer from 1 to ${rebalanceDefaults.shardsAddedMax}`],
    [{ add: rebalanceDefaults.shardsAddedMax + 1 }, `body add: must be an integer from 1 to ${rebalanceDefaults.shardsAddedMax}`],
    [{ add: 1.5 }, `body add: must be an integer from 1 to ${rebalanceDefaults.shardsAddedMax}`],
    [{ remove: [] }, 'body remove: must name at least one shard (leave it out to remove none)'],
    [{ remove: [2, 2] }, 'body remove: names a shard twice'],
    [{ remove: [-1] }, 'body remove.0: must be a shard id (an integer from 0)'],
    [{ add: 1, rateKeysPerSecond: -1 }, `body rateKeysPerSecond: must be an integer from 0 to ${rebalanceDefaults.rateKeysPerSecondMax}`],
    [
      { add: 1, rateKeysPerSecond: rebalanceDefaults.rateKeysPerSecondMax + 1 },
      `body rateKeysPerSecond: must be an integer from 0 to ${rebalanceDefaults.rateKeysPerSecondMax}`,
    ],
    [{ add: 1, shards: 2 }, 'body: unknown field shards'],
    ['{"add":', 'body is not valid JSON: expected a value at line 1, column 8'],
  ])('refuses %j with 400 request.invalid saying what is wrong, and starts nothing', async (body, message) => {
    const { start, runs, jobs } = world();

    const answer = await start(body);

    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: 'request.invalid', message });
    expect(runs).toEqual([]);
    expect(jobs.job).toBeUndefined();
  });

  it('answers 409 rebalance.refused for a change the ring cannot take', async () => {
    const { start, runs } = world();

    const unknown = await start({ remove: [9] });
    const tooFew = await start({ remove: [0, 1] });

    expect(unknown).toMatchObject({ status: 409, body: { error: { code: 'rebalance.refused', message: 'shard 9 is not on the ring' } } });
    expect(tooFew.status).toBe(409);
    expect(tooFew.body.error).toMatchObject({ code: 'rebalance.refused' });
    expect(tooFew.body.error?.message).toMatch(/2 shards would be left for replication factor 3/);
    expect(runs).toEqual([]);
  });

  it('answers 409 rebalance.conflict while another rebalance has not ended', async () => {
    const { start } = world();
    const first = await start({ add: 1 });

    const second = await start({ add: 1 });

    expect(second.status).toBe(409);
    expect(second.body.error).toMatchObject({ code: 'rebalance.conflict', details: { id: first.body.id, status: 'running' } });
  });

  it('answers 503 rebalance.unavailable, retryable, and starts nothing when no workflow can run', async () => {
    const { start, jobs, rings } = world({ starter: 'none' });
    const epoch = rings.state.epoch;

    const answer = await start({ add: 1 });

    expect(answer.status).toBe(503);
    expect(answer.body.error).toMatchObject({ code: 'rebalance.unavailable', retryable: true });
    expect(answer.body.error?.message).toMatch(/no rebalance workflow/);
    expect(jobs.job).toBeUndefined();
    expect(rings.state.epoch).toBe(epoch);
  });

  it('pauses the rebalance with the reason when its workflow cannot be started, so a resume can start it', async () => {
    const { start, jobs } = world({ starter: 'failing' });

    const answer = await start({ add: 1 });

    expect(answer.status).toBe(500);
    expect(jobs.job).toMatchObject({ status: 'paused', message: 'its workflow could not be started: StartExecution: access denied' });
  });

  it('refuses a user key with 403 auth.forbidden', async () => {
    const { start, call, jobs } = world();

    const answer = await start({ add: 1 }, 'user');
    const read = await call({ method: 'GET', resource: '/v1/admin/rebalance', role: 'user' });

    expect(answer).toMatchObject({ status: 403, body: { error: { code: 'auth.forbidden' } } });
    expect(read).toMatchObject({ status: 403, body: { error: { code: 'auth.forbidden' } } });
    expect(jobs.job).toBeUndefined();
  });
});

describe('GET /v1/admin/rebalance', () => {
  it('answers 404 rebalance.notFound when none ever ran', async () => {
    const { status } = world();

    expect(await status()).toMatchObject({ status: 404, body: { error: { code: 'rebalance.notFound' } } });
  });

  it('shows the status with readable times, and every range only with ?ranges=true', async () => {
    const { start, status, clock } = world();
    const { body: started } = await start({ add: 1 });
    clock.advanceSeconds(5);

    const plain = await status();
    const detailed = await status({ ranges: 'true' });

    expect(plain.status).toBe(200);
    expect(plain.body).toMatchObject({
      id: started.id,
      status: 'running',
      startedAt: started.startedAt,
      updatedAt: started.updatedAt,
      keysPerSecond: 0,
      change: { join: [4], leave: [] },
    });
    expect(plain.body).not.toHaveProperty('rangeDetail');
    expect(plain.body).not.toHaveProperty('startedAtMs');
    expect(plain.body).not.toHaveProperty('cursor');
    const detail = detailed.body.rangeDetail as Array<{ stage: string; to: number[] }>;
    expect(detail).toHaveLength((plain.body.ranges as { total: number }).total);
    expect(detail.every((range) => range.stage === 'planned' && range.to.includes(4))).toBe(true);
  });

  it('refuses a bad or unknown query parameter with 400', async () => {
    const { status } = world();

    const bad = await status({ ranges: 'yes' });
    const unknown = await status({ range: 'true' });

    expect(bad).toMatchObject({ status: 400, body: { error: { code: 'request.invalid', details: { field: 'ranges', in: 'query' } } } });
    expect(unknown).toMatchObject({
      status: 400,
      body: { error: { code: 'request.invalid', details: { field: 'range', suggestion: 'ranges' } } },
    });
  });
});

describe('POST /v1/admin/rebalance/{id}/pause | resume | cancel', () => {
  it('pauses, resumes with a new workflow run, and cancels', async () => {
    // Prepare
    const { start, act, service, runs } = world();
    const id = (await start({ add: 1 })).body.id as string;
    // Act
    const pause = await act('pause', id);
    await service.advance(id); // the workflow acts on the pause between two steps
    const resume = await act('resume', id);
    const cancel = await act('cancel', id);
    // Assess
    expect(pause).toMatchObject({ status: 202, body: { id, status: 'running', requested: 'pause' } });
    expect(resume.status).toBe(202);
    expect(resume.body).toMatchObject({ id, status: 'running' });
    expect(resume.body).not.toHaveProperty('requested');
    expect(cancel).toMatchObject({ status: 202, body: { id, requested: 'cancel' } });
    // A resume starts a run named after the job's revision; cancelling a running rebalance starts none.
    expect(runs).toEqual([
      { id, run: `${id}-1` },
      { id, run: `${id}-r${resume.body.revision as number}` },
    ]);
  });

  it('starts a run to cancel a paused rebalance', async () => {
    const { start, act, service, runs } = world();
    const id = (await start({ add: 1 })).body.id as string;
    await act('pause', id);
    await service.advance(id);

    const cancel = await act('cancel', id);

    expect(cancel.status).toBe(202);
    expect(runs.at(-1)).toEqual({ id, run: `${id}-r${cancel.body.revision as number}` });
  });

  it('answers 409 rebalance.conflict for an action its state does not allow', async () => {
    const { start, act } = world();
    const id = (await start({ add: 1 })).body.id as string;

    const resumeRunning = await act('resume', id);

    expect(resumeRunning.status).toBe(409);
    expect(resumeRunning.body.error).toMatchObject({ code: 'rebalance.conflict', details: { id, status: 'running' } });
    expect(resumeRunning.body.error?.message).toMatch(/only a paused rebalance resumes/);
  });

  it('answers 409 for a pause or a rate change once the rebalance has ended', async () => {
    const { start, act, rate, jobs } = world();
    const id = (await start({ add: 1 })).body.id as string;
    jobs.job = { ...jobs.job!, status: 'done', finishedAtMs: jobs.job!.startedAtMs + 1_000 };

    const pause = await act('pause', id);
    const newRate = await rate(id, { rateKeysPerSecond: 10 });

    expect(pause).toMatchObject({ status: 409, body: { error: { code: 'rebalance.conflict' } } });
    expect(newRate).toMatchObject({ status: 409, body: { error: { code: 'rebalance.conflict' } } });
  });

  it('answers 404 rebalance.notFound for an id that is not the current rebalance, and 400 for one that is no id', async () => {
    const { start, act, rate } = world();
    await start({ add: 1 });

    const unknown = await act('pause', 'rebalance-1-deadbeef');
    const unknownRate = await rate('rebalance-1-deadbeef', { rateKeysPerSecond: 10 });
    const malformed = await act('cancel', 'a/b');

    expect(unknown).toMatchObject({
      status: 404,
      body: { error: { code: 'rebalance.notFound', message: 'no rebalance rebalance-1-deadbeef' } },
    });
    expect(unknownRate).toMatchObject({ status: 404, body: { error: { code: 'rebalance.notFound' } } });
    expect(malformed).toMatchObject({ status: 400, body: { error: { code: 'request.invalid', details: { field: 'id', in: 'path' } } } });
  });

  it('answers 503 for a resume when no workflow can run, and leaves the rebalance paused', async () => {
    // Prepare: a paused rebalance, then a deployment that cannot start workflows.
    const running = world();
    const id = (await running.start({ add: 1 })).body.id as string;
    await running.act('pause', id);
    await running.service.advance(id);
    const none = world({ starter: 'none' });
    none.jobs.job = running.jobs.job;
    // Act
    const resume = await none.act('resume', id);
    // Assess
    expect(resume).toMatchObject({ status: 503, body: { error: { code: 'rebalance.unavailable' } } });
    expect(none.jobs.job).toMatchObject({ status: 'paused' });
  });

  it('refuses a user key with 403', async () => {
    const { start, call } = world();
    const id = (await start({ add: 1 })).body.id as string;

    const answer = await call({ method: 'POST', resource: '/v1/admin/rebalance/{id}/pause', pathParameters: { id }, role: 'user' });

    expect(answer).toMatchObject({ status: 403, body: { error: { code: 'auth.forbidden' } } });
  });
});

describe('PUT /v1/admin/rebalance/{id}/rate', () => {
  it('changes the rate of a running rebalance', async () => {
    const { start, rate, jobs } = world();
    const id = (await start({ add: 1 })).body.id as string;

    const answer = await rate(id, { rateKeysPerSecond: 0 });

    expect(answer).toMatchObject({ status: 200, body: { id, rateKeysPerSecond: 0 } });
    expect(jobs.job?.rateKeysPerSecond).toBe(0);
  });

  it.each([
    [{}, 'body rateKeysPerSecond: Invalid input: expected number, received undefined'],
    [{ rateKeysPerSecond: 'fast' }, 'body rateKeysPerSecond: Invalid input: expected number, received string'],
    [{ rateKeysPerSecond: 2.5 }, `body rateKeysPerSecond: must be an integer from 0 to ${rebalanceDefaults.rateKeysPerSecondMax}`],
    [{ rateKeysPerSecond: 10, add: 1 }, 'body: unknown field add'],
  ])('refuses %j with 400', async (body, message) => {
    const { start, rate, jobs } = world();
    const id = (await start({ add: 1 })).body.id as string;

    const answer = await rate(id, body);

    expect(answer).toMatchObject({ status: 400, body: { error: { code: 'request.invalid', message } } });
    expect(jobs.job?.rateKeysPerSecond).toBe(rebalanceDefaults.defaultRateKeysPerSecond);
  });
});
