// What operators see of the handlers (docs/operations.md, "Metrics" and "Tracing and request ids"): the EMF
// lines Powertools prints in Lambda, captured from stdout, and the request id every API answer returns.
import { Logger } from '@aws-lambda-powertools/logger';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { CacheStats } from '../../../lambdas/adapters/cache-metrics';
import { powertoolsMetrics, publishGathered } from '../../../lambdas/adapters/powertools-metrics';
import { ReplicationStats } from '../../../lambdas/adapters/replication-metrics';
import { TxnStats } from '../../../lambdas/adapters/txn-metrics';
import { loadConfig } from '../../../lambdas/config';
import { cacheKeyOf, L1Cache } from '../../../lambdas/core/l1-cache';
import { MaintenanceService } from '../../../lambdas/core/maintenance';
import { initialRingState } from '../../../lambdas/core/ring';
import { TwoLevelCache } from '../../../lambdas/core/two-level-cache';
import { observe } from '../../../lambdas/handlers/observe';
import { ringHandler } from '../../../lambdas/handlers/ring';
import { txnHandler } from '../../../lambdas/handlers/txn';
import { TransactionService } from '../../../lambdas/core/transactions';
import { requestIdHeader } from '../../../lambdas/http/request-id';
import type { CacheEntry, RemoteCache } from '../../../lambdas/ports';
import { txnDeps } from '../../../lambdas/wiring/data-api-deps';
import { observeDeps } from '../../../lambdas/wiring/observability';
import { ringDeps } from '../../../lambdas/wiring/request-deps';
import { Wiring } from '../../../lambdas/wiring/wiring';
import { envVars } from '../../../schemas/topology';
import {
  CountingIds,
  ManualClock,
  MemoryHealthStore,
  MemoryHintStore,
  MemoryShardStore,
  MemoryTxnRecords,
  memoryReplication,
  staticRing,
  testTxnLimits,
} from '../../support/memory-ports';
import { handoffOnlyLimits } from '../../support/maintenance';

/** A Lambda's environment (metrics on) pointing at a closed port: nothing here may reach an engine. */
const lambdaEnv = {
  [envVars.dynamodbEndpoint]: 'http://127.0.0.1:9',
  AWS_REGION: 'eu-west-1',
  AWS_LAMBDA_FUNCTION_NAME: 'ringstore-test-ring',
};

interface EmfLine {
  _aws: { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }> };
  [field: string]: unknown;
}

/** Runs `act` and returns the JSON lines it printed (Powertools' EMF and log lines). */
async function printed(act: () => unknown): Promise<Array<Record<string, unknown>>> {
  const lines: string[] = [];
  const capture = (chunk: string | Uint8Array) => {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    return true;
  };
  // Powertools' own consoles: metrics and info lines on stdout, error lines on stderr.
  const spies = [
    jest.spyOn(process.stdout, 'write').mockImplementation(capture),
    jest.spyOn(process.stderr, 'write').mockImplementation(capture),
  ];
  try {
    await act();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

const emfLines = (lines: Array<Record<string, unknown>>) => lines.filter((line): line is EmfLine => '_aws' in line);

/** The EMF line that declares `metric`, with the dimension names it is published under. */
function metricLine(lines: Array<Record<string, unknown>>, metric: string, dimensions: string[]): EmfLine | undefined {
  return emfLines(lines).find((line) =>
    line._aws.CloudWatchMetrics.some(
      (directive) =>
        directive.Metrics.some((m) => m.Name === metric) &&
        directive.Dimensions.some((set) => set.length === dimensions.length && dimensions.every((name) => set.includes(name))),
    ),
  );
}

const context = (awsRequestId = 'invocation-1'): Context => ({ awsRequestId, functionName: 'ring' }) as Context;

function ringEvent(overrides: Partial<APIGatewayProxyEvent> = {}): APIGatewayProxyEvent {
  return {
    httpMethod: 'GET',
    resource: '/v1/ring',
    path: '/v1/ring',
    headers: {},
    queryStringParameters: null,
    pathParameters: null,
    body: null,
    isBase64Encoded: false,
    requestContext: { requestId: 'apigw-req-1', authorizer: { namespace: 'ns', role: 'user', keyId: 'k1', principalId: 'k1' } },
    ...overrides,
  } as unknown as APIGatewayProxyEvent;
}

/** The ring handler as Lambda runs it (observed, metrics on, tracing off: no X-Ray daemon here), over an in-memory ring. */
function observedRing(options: { ringFails?: boolean } = {}) {
  const state = initialRingState({ shardCount: 4, replicationFactor: 3, vnodesPerShard: 4, tableName: (id) => `shard-${id}` });
  const rings = {
    readRing: async () => {
      if (options.ringFails) throw new Error('control table exploded');
      return structuredClone(state);
    },
    publishRing: async () => false,
  };
  const logger = new Logger({ serviceName: 'ringstore', logLevel: 'ERROR' });
  const wiring = Wiring.create({ config: loadConfig(lambdaEnv), clock: new ManualClock(), logger }).forHandler('ring');
  wiring.shared('ringStore', () => rings);
  wiring.shared('tracer', () => new Tracer({ serviceName: 'ringstore', enabled: false }));
  return observe(ringHandler(ringDeps(wiring)), observeDeps(wiring));
}

describe('API answers', () => {
  it('return API Gateway’s request id in x-request-id and count the request per operation', async () => {
    // Prepare
    const handler = observedRing();
    let response: APIGatewayProxyResult | undefined;

    // Act
    const lines = await printed(async () => (response = await handler(ringEvent(), context())));

    // Assess
    expect(response?.statusCode).toBe(200);
    expect(response?.headers?.[requestIdHeader]).toBe('apigw-req-1');
    const requests = metricLine(lines, 'Requests', ['service', 'Operation']);
    expect(requests).toMatchObject({ Operation: 'describeRing', Requests: 1, service: 'ringstore' });
    expect(requests?._aws.CloudWatchMetrics[0]?.Namespace).toBe('Ringstore');
    expect(requests?.RequestDuration).toEqual(expect.any(Number));
    expect(metricLine(lines, 'Errors', ['service', 'Operation', 'Code'])).toBeUndefined();
  });

  it('stamp a 4xx answer too, and count it as an error of its code', async () => {
    // Prepare: a query parameter GET /v1/ring does not take (a 400 naming it)
    const handler = observedRing();
    let response: APIGatewayProxyResult | undefined;

    // Act
    const lines = await printed(async () => (response = await handler(ringEvent({ queryStringParameters: { epoch: '3' } }), context())));

    // Assess
    expect(response?.statusCode).toBe(400);
    expect(response?.headers?.[requestIdHeader]).toBe('apigw-req-1');
    const code = (JSON.parse(response?.body ?? '{}') as { error: { code: string } }).error.code;
    expect(metricLine(lines, 'Errors', ['service', 'Operation', 'Code'])).toMatchObject({
      Operation: 'describeRing',
      Code: code,
      Errors: 1,
    });
    expect(metricLine(lines, 'Requests', ['service', 'Operation'])).toMatchObject({ Requests: 1 });
  });

  it('name the invocation’s id when the event carries no request context (a direct invoke)', async () => {
    // Prepare: no authorizer context either, so the handler refuses it (401), which is stamped all the same
    const handler = observedRing();
    let response: APIGatewayProxyResult | undefined;

    // Act
    await printed(
      async () =>
        (response = await handler(
          ringEvent({ requestContext: undefined as unknown as APIGatewayProxyEvent['requestContext'] }),
          context('inv-9'),
        )),
    );

    // Assess
    expect(response?.statusCode).toBe(401);
    expect(response?.headers?.[requestIdHeader]).toBe('inv-9');
  });

  it('log a failed request with the same id as its correlation id, and answer 500 with it', async () => {
    // Prepare
    const handler = observedRing({ ringFails: true });
    let response: APIGatewayProxyResult | undefined;

    // Act
    const lines = await printed(async () => (response = await handler(ringEvent(), context())));

    // Assess
    expect(response?.statusCode).toBe(500);
    expect(response?.headers?.[requestIdHeader]).toBe('apigw-req-1');
    const failure = lines.find((line) => line.message === 'request failed');
    expect(failure).toMatchObject({ correlation_id: 'apigw-req-1', function_request_id: 'invocation-1' });
    expect(metricLine(lines, 'Errors', ['service', 'Operation', 'Code'])).toMatchObject({ Code: 'internal' });
  });

  it('count a handler that throws past its error middleware as the 502 API Gateway answers, and let it throw', async () => {
    // Prepare: a crashed function (an injected crash point propagates like this)
    const wiring = Wiring.create({ config: loadConfig(lambdaEnv), logger: new Logger({ logLevel: 'SILENT' }) }).forHandler('ring');
    wiring.shared('tracer', () => new Tracer({ enabled: false }));
    const crashing = middy<APIGatewayProxyEvent, APIGatewayProxyResult>().handler(async () => {
      throw new Error('crashed');
    });
    const handler = observe(crashing, observeDeps(wiring));

    // Act
    let thrown: unknown;
    const lines = await printed(async () => handler(ringEvent(), context()).catch((error: unknown) => (thrown = error)));

    // Assess
    expect(thrown).toBeInstanceOf(Error);
    expect(metricLine(lines, 'Errors', ['service', 'Operation', 'Code'])).toMatchObject({ Operation: 'describeRing', Code: 'internal' });
  });
});

describe('cache metrics', () => {
  /** An L2 that holds what it is given, like Redis with its version guard left out. */
  function memoryL2(): RemoteCache {
    const entries = new Map<string, CacheEntry>();
    return {
      get: async (key) => entries.get(key),
      put: async (key, entry) => {
        entries.set(key, entry);
        return true;
      },
    };
  }

  it('count hits by level and misses, published as CacheHits per Level and CacheMisses', async () => {
    // Prepare: an entry in L2 only, then read three times
    const clock = new ManualClock();
    const stats = new CacheStats(powertoolsMetrics());
    const l2 = memoryL2();
    const entry: CacheEntry = { version: 1, tombstone: false, contentType: 'text/plain', size: 1, sha256: 'x', value: new Uint8Array([1]) };
    await l2.put(cacheKeyOf('ns', 'k'), entry, 1_000);
    const cache = new TwoLevelCache(new L1Cache({ policy: 'lru', entriesMax: 10, bytesMax: 1_000, ttlMs: 1_000, clock }), l2, 1_000, stats);

    // Act: an L2 hit (L1 learns it), an L1 hit, a miss
    const lines = await printed(async () => {
      await cache.get('ns', 'k');
      await cache.get('ns', 'k');
      await cache.get('ns', 'absent');
      stats.failed('get');
      stats.publish();
    });

    // Assess
    expect(stats.counts).toEqual({ l1: 1, l2: 1, miss: 1, errors: 1 });
    expect(metricLine(lines, 'CacheHits', ['service', 'Level'])).toBeDefined();
    const levels = emfLines(lines)
      .filter((line) => 'CacheHits' in line)
      .map((line) => [line.Level, line.CacheHits]);
    expect(levels).toEqual(
      expect.arrayContaining([
        ['L1', 1],
        ['L2', 1],
      ]),
    );
    expect(metricLine(lines, 'CacheMisses', ['service'])).toMatchObject({ CacheMisses: 1, CacheErrors: 1 });
  });
});

describe('transaction metrics', () => {
  it('publish each outcome with its status and path, its duration, and an abort with its reason', async () => {
    // Prepare
    const stats = new TxnStats(powertoolsMetrics());

    // Act
    const lines = await printed(() => {
      stats.ended({ status: 'committed', txid: 't1', writes: [], reads: [] }, 'stateMachine', 42);
      stats.ended({ status: 'aborted', txid: 't2', reason: 'conflict', message: 'locked' }, 'oneShard', 7);
    });

    // Assess
    const committed = emfLines(lines).filter((line) => line.Status === 'committed' && line.Path === 'stateMachine');
    expect(committed).toEqual([expect.objectContaining({ Transactions: 1 }), expect.objectContaining({ TransactionDuration: 42 })]);
    expect(metricLine(lines, 'TransactionAborts', ['service', 'Reason'])).toMatchObject({ Reason: 'conflict', TransactionAborts: 1 });
    expect(stats.outcomes).toEqual(
      new Map([
        ['committed', 1],
        ['aborted:conflict', 1],
      ]),
    );
  });

  it('are emitted by POST /v1/txn as it answers: a commit, and an abort with its reason', async () => {
    // Prepare: the txn handler as Lambda runs it, over in-memory shards, run by the service in process
    const clock = new ManualClock();
    const shards = new MemoryShardStore();
    const txns = new TransactionService({
      shards,
      records: new MemoryTxnRecords(),
      ring: staticRing(),
      clock,
      ids: new CountingIds(),
      replication: memoryReplication(shards, clock).replication,
      limits: testTxnLimits,
    });
    const wiring = Wiring.create({
      config: loadConfig(lambdaEnv),
      clock,
      logger: new Logger({ logLevel: 'SILENT' }),
      orchestrator: { run: (execution) => txns.runInProcess(execution) },
    }).forHandler('txn');
    wiring.shared('txn:txns', () => txns);
    wiring.shared('tracer', () => new Tracer({ enabled: false }));
    const handler = observe(txnHandler(txnDeps(wiring)), observeDeps(wiring));
    const transact = (ops: unknown[]) =>
      handler(
        ringEvent({
          httpMethod: 'POST',
          resource: '/v1/txn',
          path: '/v1/txn',
          body: JSON.stringify({ ops }),
          headers: { 'content-type': 'application/json' },
        }),
        context(),
      );
    const answers: number[] = [];

    // Act: two writes, then a check of a version the key never had
    const lines = await printed(async () => {
      answers.push(
        (
          await transact([
            { op: 'put', key: 'a', value: '1' },
            { op: 'put', key: 'b', value: '2' },
          ])
        ).statusCode,
      );
      answers.push(
        (
          await transact([
            { op: 'check', key: 'a', ifVersion: 7 },
            { op: 'put', key: 'c', value: '3' },
          ])
        ).statusCode,
      );
    });

    // Assess
    expect(answers[0]).toBe(200);
    expect(answers[1]).toBeGreaterThanOrEqual(400);
    const outcomes = emfLines(lines)
      .filter((line) => 'Transactions' in line)
      .map((line) => line.Status);
    expect(outcomes).toEqual(['committed', 'aborted']);
    expect(metricLine(lines, 'TransactionAborts', ['service', 'Reason'])).toMatchObject({ Reason: 'precondition' });
    expect(emfLines(lines).filter((line) => 'TransactionDuration' in line)).toHaveLength(2);
  });

  it('publish the sweeper’s recoveries and how far behind its walk is', async () => {
    const stats = new TxnStats(powertoolsMetrics());
    const lines = await printed(() => {
      stats.swept({ aborted: 2, rolledForward: 1, cleared: 0, behindMs: 90_000 });
      stats.publish();
    });
    expect(metricLine(lines, 'TxnSweeperBacklog', ['service'])).toMatchObject({
      TxnSweeperBacklog: 90_000,
      TxnSweeperAborted: 2,
      TxnSweeperRolledForward: 1,
      TxnSweeperCleared: 0,
    });
  });
});

describe('hint backlog', () => {
  /**
   * A maintenance service with metrics over in-memory stores, where shard-1 does not answer and holds `shard1Hints`
   * hints and shard-0 (which answers) `shard0Hints`; `counted` lists the tables whose log it counted.
   */
  async function backlogWorld({ shard0Hints, shard1Hints }: { shard0Hints: number; shard1Hints: number }) {
    const clock = new ManualClock();
    const shards = new MemoryShardStore();
    const hints = new MemoryHintStore();
    const health = new MemoryHealthStore();
    const stats = new ReplicationStats(powertoolsMetrics());
    const item = { namespace: 'ns', key: 'a', version: 1, contentType: 'text/plain', size: 1, sha256: 'x', modifiedAtMs: clock.now };
    for (const [target, count] of [
      ['shard-0', shard0Hints],
      ['shard-1', shard1Hints],
    ] as const) {
      for (let version = 1; version <= count; version += 1) {
        await hints.add({ target, item: { ...item, version }, createdAtMs: clock.now } as never);
      }
    }
    await health.markUnavailable('shard-1', 'down', clock.now);
    shards.down.add('shard-1');
    const counted: string[] = [];
    const count = hints.count.bind(hints);
    hints.count = async (target: string) => {
      counted.push(target);
      return count(target);
    };
    let saved: unknown;
    const maintenance = new MaintenanceService({
      shards,
      hints,
      health,
      clock,
      metrics: stats,
      state: { readMaintenanceState: async () => saved as never, saveMaintenanceState: async (state) => void (saved = state) },
      limits: handoffOnlyLimits,
    });
    return { maintenance, stats, counted };
  }

  it('is published per shard table and in total after every maintenance run', async () => {
    // Prepare: two hints waiting for shard-1, whose table does not answer (they stay)
    const { maintenance, stats } = await backlogWorld({ shard0Hints: 0, shard1Hints: 2 });

    // Act
    const lines = await printed(async () => {
      await maintenance.run(await staticRing().current());
      stats.publish();
    });

    // Assess
    expect(stats.pendingHints.get('shard-1')).toBe(2);
    expect(stats.pendingHints.get('shard-0')).toBe(0);
    const perTable = emfLines(lines).filter((line) => line.Table === 'shard-1');
    expect(perTable).toEqual([expect.objectContaining({ HintsPending: 2 })]);
    expect(metricLine(lines, 'HintsPending', ['service'])).toMatchObject({ HintsPending: [0, 2, 0, 0] });
  });

  it('counts only the logs replay did not empty: a drained log is reported empty without a query', async () => {
    // Prepare: a hint for shard-0, which answers (replay drains it), and one for shard-1, which does not
    const { maintenance, stats, counted } = await backlogWorld({ shard0Hints: 1, shard1Hints: 1 });

    // Act
    await maintenance.run(await staticRing().current());

    // Assess: the down shard's log is counted (its hint stays); the others were replayed to the end
    expect(counted).toEqual(['shard-1']);
    expect([...stats.pendingHints]).toEqual([
      ['shard-0', 0],
      ['shard-1', 1],
      ['shard-2', 0],
      ['shard-3', 0],
    ]);
  });
});

describe('publishing', () => {
  it('prints nothing for an invocation that observed nothing (Powertools would warn on every empty flush)', async () => {
    const metrics = powertoolsMetrics();
    const lines = await printed(() => publishGathered(metrics));
    expect(lines).toEqual([]);
  });
});

/** How long the child process waits for the tracer to load in Lambda mode before it reports it did not. */
const xrayLoadWaitMs = 20_000;

describe('the X-Ray SDK', () => {
  /**
   * Whether building the kvRead handler (as the local cloud does, or as Lambda does with `inLambda`) loads
   * aws-xray-sdk-core, in a process of its own: its async hook slows every await of the process tenfold.
   */
  function loadsXray(inLambda: boolean): boolean {
    const script = `
      const { handlerFactories } = require('./lambdas/entries/handler-factories');
      const { Wiring } = require('./lambdas/wiring/wiring');
      const { loadConfig } = require('./lambdas/config');
      const env = { ${envVars.dynamodbEndpoint}: 'http://127.0.0.1:9', AWS_REGION: 'eu-west-1'${inLambda ? ", AWS_LAMBDA_FUNCTION_NAME: 'f'" : ''} };
      const wiring = Wiring.create({ config: loadConfig(env) });
      handlerFactories.kvRead(wiring.forHandler('kvRead'));
      const loaded = () => Object.keys(require.cache).some((path) => path.includes('aws-xray-sdk-core'));
      // In Lambda the tracer loads in the background at init: wait for it (bounded); elsewhere nothing starts it.
      const deadline = Date.now() + ${xrayLoadWaitMs};
      const check = () => (loaded() || !${inLambda} || Date.now() > deadline ? console.log(loaded()) : setTimeout(check, 20));
      setImmediate(check);
    `;
    const output = execFileSync(process.execPath, ['--import', 'tsx', '-e', script], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return output.trim().endsWith('true');
  }

  it('is loaded in Lambda, at init, and never outside it (the local cloud, the bench, the tests)', () => {
    expect(loadsXray(false)).toBe(false);
    expect(loadsXray(true)).toBe(true);
  }, 60_000);
});

describe('docs/operations.md', () => {
  it('documents every metric name the adapters publish', () => {
    // Prepare: the literal names passed to addMetric or to a helper before their unit
    const adapters = join(__dirname, '..', '..', '..', 'lambdas', 'adapters');
    const sources = readdirSync(adapters)
      .filter((file) => file.endsWith('-metrics.ts'))
      .map((file) => readFileSync(join(adapters, file), 'utf8'))
      .join('\n');
    const names = new Set([...sources.matchAll(/addMetric\('(\w+)'|'(\w+)',\s*MetricUnit\./g)].map((match) => match[1] ?? match[2]));
    const docs = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'operations.md'), 'utf8');

    // Assess
    expect(names.size).toBeGreaterThan(20);
    expect([...names].filter((name) => !docs.includes(`\`${name}\``))).toEqual([]);
  });
});
