// The whole local region on one machine: engines, tables, ring, API keys, and the gateway in front of
// the in-process handlers. `npm start` and the integration tests both run this.
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoControlStore } from '../../lambdas/adapters/dynamodb-control-store';
import { ApiKeyService } from '../../lambdas/core/auth';
import { randomIds, systemClock } from '../../lambdas/runtime';
import { envVars, type HandlerName, handlers, limits, namesFor, replicationDefaults, routes, txnLimits } from '../../schemas/topology';
import { localCredentials, localRegion, startEngines, type RunningEngines } from './engines';
import { type GatewayHandlers, type RunningGateway, startGateway } from './gateway';
import { provision } from './provision';
import { startStreamPoller, type RunningStreamPoller } from './stream-poller';
import { startSchedule, type RunningSchedule } from './schedule';
import { localTransactionOrchestrator } from './state-machine';

export interface LocalCloudOptions {
  /** Where engines keep data and jars (`.ringstore/` by default). */
  home: string;
  /** Where engine jars are fetched (`<home>/vendor` by default); shared so a machine fetches them once. */
  vendorDir?: string;
  /** Gateway port; 0 picks a free one. */
  port: number;
  stage?: string;
  shardCount?: number;
  replicationFactor?: number;
  vnodesPerShard?: number;
  authorizerCacheTtlSeconds?: number;
  /** Arms crash points and shard outages through `PUT /_faults` (tests only). */
  faultInjection?: boolean;
  /** How often the maintenance job (hint replay, anti-entropy) runs; 0 turns the timer off. */
  maintenanceIntervalMs?: number;
  /** How often the transaction sweeper runs; 0 turns it off. */
  sweeperIntervalMs?: number;
  log?: (line: string) => void;
}

export interface LocalCloud {
  url: string;
  apiKey: string;
  adminKey: string;
  engines: RunningEngines;
  faultInjection: boolean;
  stop(): Promise<void>;
}

/** The local keys are kept (secret included) so restarts print the same keys; mode 0600. */
interface LocalKeysFile {
  apiKey: string;
  adminKey: string;
}

export const localNamespace = 'local';

async function ensureLocalKeys(home: string, service: ApiKeyService): Promise<LocalKeysFile> {
  const path = join(home, 'local-keys.json');
  const saved = await readFile(path, 'utf8').then((text) => JSON.parse(text) as LocalKeysFile, () => undefined);
  if (saved) {
    const valid = await Promise.all([saved.apiKey, saved.adminKey].map((key) => service.authenticate(key).then(() => true, () => false)));
    if (valid.every(Boolean)) return saved;
  }
  const user = await service.create({ namespace: localNamespace, role: 'user', description: 'local key created by npm start' });
  const admin = await service.create({ namespace: localNamespace, role: 'admin', description: 'local admin key created by npm start' });
  const keys = { apiKey: user.apiKey, adminKey: admin.apiKey };
  await writeFile(path, JSON.stringify(keys, null, 2));
  await chmod(path, 0o600);
  return keys;
}

export async function startLocalCloud(options: LocalCloudOptions): Promise<LocalCloud> {
  const log = options.log ?? (() => undefined);
  const stage = options.stage ?? 'local';
  const names = namesFor(stage);
  await mkdir(options.home, { recursive: true });
  const engines = await startEngines({ dataDir: join(options.home, 'data'), vendorDir: options.vendorDir ?? join(options.home, 'vendor'), log });
  let gateway: RunningGateway | undefined;
  let poller: RunningStreamPoller | undefined;
  let schedule: RunningSchedule | undefined;
  let sweeper: RunningSchedule | undefined;
  try {
    const env: Record<string, string> = {
      [envVars.stage]: stage,
      [envVars.blobBucket]: names.blobBucket,
      [envVars.dynamodbEndpoint]: engines.dynamodbEndpoint,
      [envVars.s3Endpoint]: engines.s3Endpoint,
      ...(engines.redisUrl ? { [envVars.redisUrl]: engines.redisUrl } : {}),
      ...(options.shardCount ? { [envVars.shardCount]: String(options.shardCount) } : {}),
      ...(options.replicationFactor ? { [envVars.replicationFactor]: String(options.replicationFactor) } : {}),
      ...(options.vnodesPerShard ? { [envVars.vnodesPerShard]: String(options.vnodesPerShard) } : {}),
      [envVars.faultInjection]: options.faultInjection ? '1' : '0',
      AWS_REGION: localRegion,
      AWS_ACCESS_KEY_ID: localCredentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: localCredentials.secretAccessKey,
      POWERTOOLS_SERVICE_NAME: 'ringstore',
      POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'WARN',
      AWS_LAMBDA_NODEJS_DISABLE_CALLBACK_WARNING: 'true',
    };
    // The handlers read their configuration from the environment, exactly as in Lambda.
    Object.assign(process.env, env);
    const { initialRingOf, loadConfig } = await import('../../lambdas/config');
    const config = loadConfig();

    const clientConfig = { region: localRegion, credentials: { ...localCredentials } };
    const dynamodb = new DynamoDBClient({ ...clientConfig, endpoint: engines.dynamodbEndpoint });
    const s3 = new S3Client({
      ...clientConfig, endpoint: engines.s3Endpoint, forcePathStyle: true,
      requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
    });
    const created = await provision({ dynamodb, s3, names, shardCount: config.shardCount });
    if (created.length) log(`created ${created.join(', ')}`);

    const control = new DynamoControlStore(DynamoDBDocumentClient.from(dynamodb), names.controlTable);
    const ring = await control.ensureRing(initialRingOf(config));
    if (ring.shards.length !== config.shardCount) {
      log(`the stored ring has ${ring.shards.length} shards (epoch ${ring.epoch}); ${config.shardCount} were configured: the stored ring wins`);
    }
    const keys = await ensureLocalKeys(options.home, new ApiKeyService({ keys: control, ids: randomIds, clock: systemClock }));

    const load = async <T>(name: HandlerName): Promise<T> => {
      const module = (await import(join('..', '..', handlers[name].entry.replace(/\.ts$/, '')))) as { handler: T };
      return module.handler;
    };
    const proxies: GatewayHandlers['proxies'] = {};
    for (const name of new Set(routes.map((route) => route.handler))) proxies[name] = await load(name);
    const gatewayHandlers: GatewayHandlers = { authorizer: await load('authorizer'), proxies };
    // The handlers share one runtime per process (as one Lambda instance would); its fault controller
    // is the one the gateway's /_faults drives.
    const { runtime } = await import('../../lambdas/runtime');
    const faults = runtime().faults;
    // POST /v1/txn runs the same ASL file CDK deploys, with its tasks mapped to the txnStep handler.
    runtime().orchestrator.current = localTransactionOrchestrator(await load('txnStep'), join(__dirname, '..', '..'));
    // The shard streams feed the replicator, as the event source mappings do in AWS.
    poller = await startStreamPoller({
      endpoint: engines.dynamodbEndpoint,
      tables: ring.shards.map((shard) => shard.table),
      handler: await load('replicator'),
      batchSize: replicationDefaults.streamBatchSize,
      checkpointFile: join(options.home, `stream-checkpoints-${stage}.json`),
      log,
    });
    schedule = startSchedule({
      handler: await load('maintenance'),
      name: 'maintenance',
      everyMs: options.maintenanceIntervalMs ?? replicationDefaults.localMaintenanceIntervalMs,
      log,
    });
    sweeper = startSchedule({
      handler: await load('txnSweeper'),
      name: 'txnSweeper',
      everyMs: options.sweeperIntervalMs ?? txnLimits.localSweeperIntervalMs,
      log,
    });
    gateway = await startGateway({
      port: options.port,
      stage,
      handlers: gatewayHandlers,
      authorizerCacheTtlSeconds: options.authorizerCacheTtlSeconds ?? limits.authorizerCacheTtlSeconds,
      ...(faults ? { faults } : {}),
      log,
    });
    dynamodb.destroy();
    s3.destroy();
    const running = { gateway, poller, schedule, sweeper };
    return {
      url: running.gateway.url,
      apiKey: keys.apiKey,
      adminKey: keys.adminKey,
      engines,
      faultInjection: Boolean(faults),
      stop: async () => {
        await running.gateway.stop();
        await running.schedule.stop();
        await running.sweeper.stop();
        await running.poller.stop();
        await engines.stop();
      },
    };
  } catch (error) {
    await gateway?.stop();
    await schedule?.stop();
    await sweeper?.stop();
    await poller?.stop();
    await engines.stop();
    throw error;
  }
}
