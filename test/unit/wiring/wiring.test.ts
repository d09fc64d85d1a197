// The composition root: instances built once and shared, each handler's view limited to its HandlerSpec,
// and every handler buildable from a Lambda environment without touching an engine.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { FaultController } from '../../../lambdas/adapters/fault-injection';
import { loadConfig } from '../../../lambdas/config';
import { isRingstoreError } from '../../../lambdas/core/errors';
import { ringLeaseMs, ringRefreshMs } from '../../../lambdas/core/ring-source';
import { handlerFactories } from '../../../lambdas/entries/handler-factories';
import { documentClient } from '../../../lambdas/wiring/clients';
import { apiKeyService, automaticFailoverStarter, ringSource } from '../../../lambdas/wiring/control';
import { blobStore, closeConnections, hintStore, shardStore, txnRecordStore } from '../../../lambdas/wiring/data';
import { orchestrator } from '../../../lambdas/wiring/orchestrator';
import { kvService } from '../../../lambdas/wiring/services';
import { Wiring } from '../../../lambdas/wiring/wiring';
import { envVars, type HandlerName, handlers } from '../../../schemas/topology';

/** A Lambda environment pointing at a closed port: building must not need an engine. */
const lambdaEnv = {
  [envVars.dynamodbEndpoint]: 'http://127.0.0.1:9',
  [envVars.s3Endpoint]: 'http://127.0.0.1:9',
  [envVars.txnStateMachineArn]: 'arn:aws:states:us-east-1:000000000000:stateMachine:ringstore-local-txn',
  AWS_REGION: 'us-east-1',
};

const handlerNames = Object.keys(handlers) as HandlerName[];

describe('Wiring', () => {
  it('gives the handlers that find shards down a failover starter only with automatic failover on and a state machine named', () => {
    const failoverArn = 'arn:aws:states:us-east-1:000000000000:stateMachine:ringstore-local-failover';
    const on = Wiring.create({ config: loadConfig({ ...lambdaEnv, [envVars.failoverStateMachineArn]: failoverArn }) });
    const off = Wiring.create({
      config: loadConfig({ ...lambdaEnv, [envVars.failoverStateMachineArn]: failoverArn, [envVars.autoFailover]: '0' }),
    });
    const unnamed = Wiring.create({ config: loadConfig(lambdaEnv) });

    expect(automaticFailoverStarter(on.forHandler('kvWrite'))).toBeDefined();
    expect(automaticFailoverStarter(on.forHandler('maintenance'))).toBeDefined();
    expect(automaticFailoverStarter(on.forHandler('authorizer'))).toBeUndefined();
    expect(automaticFailoverStarter(off.forHandler('kvWrite'))).toBeUndefined();
    expect(automaticFailoverStarter(unnamed.forHandler('kvWrite'))).toBeUndefined();
  });

  it('builds each instance once and shares it between the views of one process', () => {
    const host = Wiring.create({ config: loadConfig(lambdaEnv) });

    const kvRead = host.forHandler('kvRead');
    const kvWrite = host.forHandler('kvWrite');

    expect(documentClient(kvRead)).toBe(documentClient(kvWrite));
    expect(shardStore(kvRead)).toBe(shardStore(kvWrite));
    expect(ringSource(kvRead)).toBe(ringSource(host));
  });

  it('builds services per handler, so a service built with one spec is never handed to another', () => {
    const host = Wiring.create({ config: loadConfig(lambdaEnv) });

    const read = kvService(host.forHandler('kvRead'));
    const write = kvService(host.forHandler('kvWrite'));

    expect(read).not.toBe(write);
    expect(kvService(host.forHandler('kvRead'))).toBe(read);
  });

  it('gives a handler a denied stand-in for what its spec does not declare, which fails naming the spec', async () => {
    const host = Wiring.create({ config: loadConfig(lambdaEnv) });
    const kvRead = host.forHandler('kvRead');
    expect(handlers.kvRead.hintsTable).toBe('none');

    const hints = hintStore(kvRead);

    await expect(hints.count('ringstore-local-shard-0')).rejects.toThrow(/kvRead may not use hintsTable/);
    const error: unknown = await hints.count('ringstore-local-shard-0').catch((caught: unknown) => caught);
    expect(isRingstoreError(error, 'internal')).toBe(true);
    // The same store is real for a handler that declares it.
    expect(hintStore(host.forHandler('kvWrite'))).not.toBe(hints);
  });

  it('lets handlers that resolve transaction intents reach the transaction table, and no handler without a spec for it', () => {
    const host = Wiring.create({ config: loadConfig(lambdaEnv) });

    for (const name of handlerNames) {
      const declared = handlers[name].txnTable ?? 'none';
      const records = txnRecordStore(host.forHandler(name));
      expect({ name, real: records === txnRecordStore(host) }).toEqual({ name, real: declared !== 'none' });
    }
    // Reads and writes resolve the intents they meet: reading the record and deciding an expired one.
    expect(handlers.kvRead.txnTable).toBe('readWrite');
    expect(handlers.kvWrite.txnTable).toBe('readWrite');
  });

  it('refuses the orchestrator to a handler whose spec does not start transactions', () => {
    const host = Wiring.create({ config: loadConfig(lambdaEnv) });

    expect(() => orchestrator(host.forHandler('kvWrite'))).toThrow(/kvWrite may not start transactions/);
    expect(orchestrator(host.forHandler('txn'))).toBeDefined();
  });

  it('uses the orchestrator the host passes in instead of building a Step Functions one', () => {
    const passed = { run: jest.fn() };
    const host = Wiring.create({ config: loadConfig({ ...lambdaEnv, [envVars.txnStateMachineArn]: undefined }) }).with({
      orchestrator: passed,
    });

    expect(orchestrator(host.forHandler('txn'))).toBe(passed);
  });

  it('trusts a cached ring for eventual reads 5 s unless configured, and refuses a refresh shorter than the write lease', () => {
    expect(loadConfig(lambdaEnv).ringRefreshMs).toBe(ringRefreshMs);
    expect(loadConfig({ ...lambdaEnv, [envVars.ringRefreshMs]: '1000' }).ringRefreshMs).toBe(1000);
    expect(() => loadConfig({ ...lambdaEnv, [envVars.ringRefreshMs]: String(ringLeaseMs - 1) })).toThrow(envVars.ringRefreshMs);
  });

  it("spaces a waiting watcher's reads 100 ms apart unless configured, and refuses a spacing longer than the poll interval", () => {
    expect(loadConfig(lambdaEnv).watch).toMatchObject({ pollMs: 250, readIntervalMinMs: 100 });
    const spaced = loadConfig({ ...lambdaEnv, [envVars.watchPollMs]: '1000', [envVars.watchReadIntervalMinMs]: '1000' }).watch;
    expect(spaced).toMatchObject({ pollMs: 1000, readIntervalMinMs: 1000 });
    expect(() => loadConfig({ ...lambdaEnv, [envVars.watchReadIntervalMinMs]: '251' })).toThrow(envVars.watchReadIntervalMinMs);
  });

  it('refuses a fault controller unless the configuration allows fault injection', () => {
    expect(() => Wiring.create({ config: loadConfig(lambdaEnv), faults: new FaultController() })).toThrow(/does not allow fault injection/);
    expect(() =>
      Wiring.create({ config: loadConfig({ ...lambdaEnv, [envVars.faultInjection]: '1' }), faults: new FaultController() }),
    ).not.toThrow();
  });

  it.each(handlerNames.map((name) => [name]))(
    'builds the %s handler from a Lambda environment without reaching an engine',
    async (name) => {
      // A DR handler runs only in a region of its role (docs/dr.md), whose environment names the DR resources.
      const role = handlers[name].drRole;
      const drEnv =
        role === 'primary'
          ? {
              [envVars.drRole]: role,
              [envVars.drKeyQueueUrl]: 'https://sqs.eu-west-1.amazonaws.com/1/q.fifo',
              [envVars.drBucket]: 'backup-bucket',
            }
          : role === 'backup'
            ? { [envVars.drRole]: role, [envVars.drKeyQueueUrl]: 'https://sqs.eu-west-2.amazonaws.com/1/q.fifo' }
            : {};
      const wiring = Wiring.forLambda(name, { ...lambdaEnv, ...drEnv });

      const handler = handlerFactories[name](wiring);

      expect(typeof handler).toBe('function');
      await closeConnections(wiring);
    },
  );

  it('builds nothing a handler does not ask for', () => {
    const wiring = Wiring.forLambda('authorizer', lambdaEnv);

    apiKeyService(wiring);

    expect(wiring.built('dynamodb')).toBeDefined();
    for (const unused of ['s3', 'sfn', 'l2', 'shards', 'kvRead:kv']) expect(wiring.built(unused)).toBeUndefined();
  });

  it("builds the admin handler's services at init, and a workflow starter or DR store only on the request that needs it", async () => {
    // Prepare: both workflows named, so a starter would be a Step Functions client
    const wiring = Wiring.forLambda('admin', {
      ...lambdaEnv,
      [envVars.failoverStateMachineArn]: 'arn:aws:states:us-east-1:000000000000:stateMachine:ringstore-local-failover',
      [envVars.rebalanceStateMachineArn]: 'arn:aws:states:us-east-1:000000000000:stateMachine:ringstore-local-rebalance',
    });

    // Act
    handlerFactories.admin(wiring);

    // Assess
    expect(wiring.built('admin:maintenance')).toBeDefined();
    expect(wiring.built('admin:rebalance')).toBeDefined();
    for (const unused of ['failoverStarter', 'rebalanceStarter', 'sfn', 'promotionLog', 'drSync'])
      expect(wiring.built(unused)).toBeUndefined();
    await closeConnections(wiring);
  });

  it('builds the S3 client only when a blob call needs it, not with the KV service', async () => {
    const credentials = { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'example' };
    const wiring = Wiring.create({ config: loadConfig(lambdaEnv), awsCredentials: credentials }).forHandler('kvWrite');

    kvService(wiring);
    expect(wiring.built('s3')).toBeUndefined();

    // A presigned URL needs no engine: the first blob call loads the S3 adapter and builds the client.
    const url = await blobStore(wiring).presignGet('some/object', { expiresInSeconds: 60 });
    expect(url).toContain('some/object');
    expect(wiring.built('s3')).toBeDefined();
    await closeConnections(wiring);
  });

  it('builds its AWS clients without the logger middleware, which would mask every call for a logger they do not have', async () => {
    const wiring = Wiring.create({ config: loadConfig(lambdaEnv) }).forHandler('kvWrite');
    const stacks = {
      dynamodb: documentClient(wiring).middlewareStack.identify(),
      s3: (await import('../../../lambdas/wiring/s3-client')).s3Client(wiring).middlewareStack.identify(),
      untouched: new DynamoDBClient({}).middlewareStack.identify(),
    };

    const logging = (names: string[]) => names.filter((name) => name.startsWith('loggerMiddleware'));
    expect({ dynamodb: logging(stacks.dynamodb), s3: logging(stacks.s3) }).toEqual({ dynamodb: [], s3: [] });
    // The name removed is the SDK's own: a client built as the SDK builds it has it.
    expect(logging(stacks.untouched)).toHaveLength(1);
    await closeConnections(wiring);
  });
});
