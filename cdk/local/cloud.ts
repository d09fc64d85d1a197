// The whole local region on one machine: engines, tables, ring, API keys, and the gateway in front of
// the in-process handlers. `npm start` and the integration tests both run this.
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { FaultController } from '../../lambdas/adapters/fault-injection';
import { initialRingOf, loadConfig, type RuntimeConfig } from '../../lambdas/config';
import type { ApiKeyService } from '../../lambdas/core/auth';
import { handlerFactories } from '../../lambdas/entries/handler-factories';
import { apiKeyService, iamPrincipalService, ringStore } from '../../lambdas/wiring/control';
import { isRingstoreError } from '../../lambdas/core/errors';
import type { IamPrincipalService } from '../../lambdas/core/iam-principals';
import { documentClient, moverDocumentClient } from '../../lambdas/wiring/clients';
import { closeConnections } from '../../lambdas/wiring/data';
import { redactingLogger, Wiring } from '../../lambdas/wiring/wiring';
import { envVars, type HandlerName, limits, type Names, namesFor, replicationDefaults, routes, txnLimits } from '../../schemas/topology';
import { type DynamoDbJournal, localCredentials, localRegion, startEngines, type RunningEngines } from './engines';
import { type GatewayHandlers, type RunningGateway, startGateway } from './gateway';
import { ensureLocalIamUser, LocalIam, localIamUserName, type LocalIamUser } from './local-iam';
import { provision } from './provision';
import { ensureKeyQueue, queuesOf, startBackupDeliveries } from './dr-region';
import { ResourceStack, startWithStack } from './resource-stack';
import { startStreamPoller, type StreamPollerOptions } from './stream-poller';
import { startSchedule } from './schedule';
import { TableWrites } from './table-writes';
import { localFailoverStarter, localPromotionStarter, localRebalanceStarter, localTransactionOrchestrator } from './state-machine';
import type { RingState } from '../../lambdas/ports';

export interface LocalCloudOptions {
  /** Where engines keep data and jars (`.ringstore/` by default). */
  home: string;
  /** Where engine jars are fetched (`<home>/vendor` by default); shared so a machine fetches them once. */
  vendorDir?: string;
  /** DynamoDB Local's journal; `rollback` unless set (engines/types.ts). */
  dynamodbJournal?: DynamoDbJournal;
  /** Engines already running, used and not started or stopped (engines/index.ts, `running`); give the cloud its own `stage`. */
  runningEngines?: { dynamodb?: string };
  /** Gateway port; 0 picks a free one. */
  port: number;
  stage?: string;
  shardCount?: number;
  replicationFactor?: number;
  vnodesPerShard?: number;
  authorizerCacheTtlSeconds?: number;
  /** Arms crash points and shard outages through `PUT /_faults` (tests only). */
  faultInjection?: boolean;
  /** A request that finds a shard unreachable starts its failover (docs/failover.md); on unless false. */
  autoFailover?: boolean;
  /** How often the maintenance job (hint replay, anti-entropy) runs; 0 turns the timer off. */
  maintenanceIntervalMs?: number;
  /** How long the handlers trust a cached ring for eventual reads (default ringRefreshMs): what a rebalance's cleanup waits out. */
  ringRefreshMs?: number;
  /** The change feed's settings where not the defaults (docs/watch.md, "Limits and settings"). */
  watch?: { retentionSeconds?: number; settleMs?: number; pollMs?: number; readIntervalMinMs?: number };
  /** How often the transaction sweeper runs; 0 turns it off. */
  sweeperIntervalMs?: number;
  /** False runs with no value cache (no L1, no Redis): every read reaches DynamoDB (the capacity test). */
  valueCache?: boolean;
  /**
   * Shard tables provisioned (and streamed) beyond `shardCount`, off the ring: what a rebalance adds
   * (docs/rebalancing.md). A fresh ring takes the first `shardCount` tables; a stored ring is kept as it is.
   */
  spareShards?: number;
  /**
   * Runs once the tables and the ring exist and before the stream pollers start, which then start past
   * the newest record: what it writes is not replicated (the rebalance benchmark seeds every copy itself).
   */
  beforeStreams?: (context: { dynamodbEndpoint: string; ring: RingState }) => Promise<void>;
  /**
   * This region's part in cross-region DR (docs/dr.md). A primary names the backup's key queue and bucket
   * and the endpoints that reach them (through the link between the regions); absent: no DR.
   */
  dr?:
    | { role: 'backup'; valueWaitMs?: number }
    | {
        role: 'primary';
        keyQueueUrl: string;
        bucket: string;
        sqsEndpoint: string;
        s3Endpoint: string;
        dynamodbEndpoint: string;
        /** The benchmark's baseline only (docs/dr.md). */
        shipOrder?: 'keyFirst' | 'together';
      };
  /**
   * Where the local IAM users live (`<iamHome>/iam/`), default `home`: two regions share the primary's, so
   * the one local user signs requests to both, as one IAM user does in every region of an account.
   */
  iamHome?: string;
  log?: (line: string) => void;
  /** The handlers' log level; default POWERTOOLS_LOG_LEVEL, else WARN. */
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
}

export interface LocalCloud {
  url: string;
  apiKey: string;
  adminKey: string;
  /** The local IAM user (SigV4 credentials), mapped to the local namespace as a user (docs/security.md). */
  iamUser: LocalIamUser;
  engines: RunningEngines;
  faultInjection: boolean;
  /** The process-wide instances every in-process handler uses (the bench measures through them). */
  wiring: Wiring;
  /** Resolves once the stream poller has handed the replicator every record written before the call. */
  replicationCaughtUp(): Promise<void>;
  /** DR: the backup's key queue (a backup region only). */
  drKeyQueue?: { url: string; arn: string };
  /**
   * DR: a primary resolves once the shipper has sent every write made before the call; a backup once its
   * key queue is empty and every value that arrived is applied. A region without DR resolves at once.
   */
  drCaughtUp(): Promise<void>;
  stop(): Promise<void>;
}

/** The local keys are kept (secret included) so restarts print the same keys; mode 0600. */
interface LocalKeysFile {
  apiKey: string;
  adminKey: string;
}

export const localNamespace = 'local';

/** The handlers' log level locally: WARN unless POWERTOOLS_LOG_LEVEL asks for another (Lambda reads it itself). */
function localLogLevel(requested: string | undefined): 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' {
  const level = requested?.toUpperCase();
  return level === 'DEBUG' || level === 'INFO' || level === 'ERROR' ? level : 'WARN';
}

async function ensureLocalKeys(home: string, service: ApiKeyService): Promise<LocalKeysFile> {
  const path = join(home, 'local-keys.json');
  const saved = await readFile(path, 'utf8').then(
    (text) => JSON.parse(text) as LocalKeysFile,
    () => undefined,
  );
  if (saved) {
    const valid = await Promise.all(
      [saved.apiKey, saved.adminKey].map((key) =>
        service.authenticate(key).then(
          () => true,
          () => false,
        ),
      ),
    );
    if (valid.every(Boolean)) return saved;
  }
  const user = await service.create({ namespace: localNamespace, role: 'user', description: 'local key created by npm start' });
  const admin = await service.create({ namespace: localNamespace, role: 'admin', description: 'local admin key created by npm start' });
  const keys = { apiKey: user.apiKey, adminKey: admin.apiKey };
  await writeFile(path, JSON.stringify(keys, null, 2));
  await chmod(path, 0o600);
  return keys;
}

/** The local IAM user, mapped to the local namespace with the user role (kept if mapped already). */
async function ensureLocalIamMapping(home: string, principals: IamPrincipalService): Promise<LocalIamUser> {
  const user = await ensureLocalIamUser(home, localIamUserName);
  try {
    await principals.create({
      principalArn: user.arn,
      namespace: localNamespace,
      role: 'user',
      description: 'local IAM user of npm start',
    });
  } catch (error) {
    if (!isRingstoreError(error, 'admin.principalExists')) throw error;
  }
  return user;
}

/** The DR part of a region's environment (lambdas/config.ts parses it). */
function drEnvOf(dr: LocalCloudOptions['dr'], keyQueue: { url: string } | undefined): Record<string, string> {
  if (!dr) return {};
  if (dr.role === 'backup') {
    return {
      [envVars.drRole]: 'backup',
      ...(keyQueue ? { [envVars.drKeyQueueUrl]: keyQueue.url } : {}),
      ...(dr.valueWaitMs === undefined ? {} : { [envVars.drValueWaitMs]: String(dr.valueWaitMs) }),
    };
  }
  return {
    [envVars.drRole]: 'primary',
    [envVars.drKeyQueueUrl]: dr.keyQueueUrl,
    [envVars.drBucket]: dr.bucket,
    [envVars.drRegion]: localRegion,
    [envVars.drSqsEndpoint]: dr.sqsEndpoint,
    [envVars.drS3Endpoint]: dr.s3Endpoint,
    [envVars.drDynamodbEndpoint]: dr.dynamodbEndpoint,
    ...(dr.shipOrder ? { [envVars.drShipOrder]: dr.shipOrder } : {}),
  };
}

/** What the start-up steps share: the options, the stack each pushes what it started onto, this stage's names. */
interface Start {
  options: LocalCloudOptions;
  stack: ResourceStack;
  log: (line: string) => void;
  stage: string;
  names: Names;
}

type HandlerOf<Name extends HandlerName> = ReturnType<(typeof handlerFactories)[Name]>;
/** Builds a handler over the region's one wiring. */
type BuildHandler = <Name extends HandlerName>(name: Name) => HandlerOf<Name>;

/**
 * Starts the region: engines, tables, wiring, data, then the stream pollers, the schedules and the gateway.
 * Each step pushes what it started onto one stack, which a failed start and `stop()` dispose in reverse: the
 * gateway, the failovers and promotions settled, the schedules, the deliveries, the connections, the engines.
 */
export async function startLocalCloud(options: LocalCloudOptions): Promise<LocalCloud> {
  const log = options.log ?? (() => undefined);
  const stage = options.stage ?? 'local';
  return startWithStack(log, async (stack) => {
    const start: Start = { options, stack, log, stage, names: namesFor(stage) };
    const engines = await startRegionEngines(start);
    // A backup's key queue exists before its handlers are configured: they name its URL.
    const drKeyQueue = options.dr?.role === 'backup' ? await ensureKeyQueue(queuesOf(engines), start.names) : undefined;
    const config = localConfigOf(start, engines, drKeyQueue);
    const tableCount = config.shardCount + (options.spareShards ?? 0);
    await provisionTables(start, engines, tableCount);
    const handlers = wireHandlers(start, config, drKeyQueue !== undefined);
    const data = await prepareData(start, engines, config, handlers.wiring);
    const gatewayHandlers = gatewayHandlersOf(handlers.build);
    const deliveries = await startDeliveries(start, {
      engines,
      build: handlers.build,
      ring: data.ring,
      tableCount,
      drKeyQueue,
      writes: handlers.writes,
    });
    startSchedules(start, handlers.build);
    // Stopping: once the gateway takes no more requests, the failovers and promotions they started finish
    // before the schedules and pollers stop.
    stack.defer(async () => {
      await handlers.failovers.settled();
      await handlers.promotions?.settled();
    });
    const gateway = await startLocalGateway(start, gatewayHandlers, handlers.faults);
    return {
      url: gateway.url,
      apiKey: data.keys.apiKey,
      adminKey: data.keys.adminKey,
      iamUser: data.iamUser,
      engines,
      faultInjection: Boolean(handlers.faults),
      wiring: handlers.wiring,
      replicationCaughtUp: async () => {
        await deliveries.txnPoller.caughtUp();
        await deliveries.poller.caughtUp();
      },
      ...(drKeyQueue ? { drKeyQueue } : {}),
      drCaughtUp: async () => {
        await deliveries.drPoller?.caughtUp();
        await deliveries.backupDeliveries?.drained();
      },
      // Idempotent: a test's teardown may stop a cloud its test already stopped (test/support/teardown.ts).
      stop: () => stack.disposeAll(),
    };
  });
}

async function startRegionEngines({ options, stack, log }: Start): Promise<RunningEngines> {
  await mkdir(options.home, { recursive: true });
  const engines = await startEngines({
    dataDir: join(options.home, 'data'),
    vendorDir: options.vendorDir ?? join(options.home, 'vendor'),
    log,
    ...(options.dynamodbJournal ? { dynamodbJournal: options.dynamodbJournal } : {}),
    ...(options.runningEngines ? { running: options.runningEngines } : {}),
    // Only cross-region DR uses queues (the backup's key queue).
    queues: options.dr !== undefined,
  });
  return stack.use(engines, (started) => started.stop());
}

/**
 * The configuration the handlers would read from their environment in Lambda, parsed by the same schema;
 * nothing is written to this process's environment.
 */
function localConfigOf({ options, stage, names }: Start, engines: RunningEngines, drKeyQueue: { url: string } | undefined): RuntimeConfig {
  const valueCache = options.valueCache !== false;
  return loadConfig({
    [envVars.stage]: stage,
    [envVars.blobBucket]: names.blobBucket,
    [envVars.dynamodbEndpoint]: engines.dynamodbEndpoint,
    [envVars.s3Endpoint]: engines.s3Endpoint,
    ...(engines.redisUrl && valueCache ? { [envVars.redisUrl]: engines.redisUrl } : {}),
    // The local cache lets in one ACL user: the handlers authenticate as it (IAM tokens in AWS, docs/security.md).
    ...(engines.redisCredentials && valueCache
      ? { [envVars.redisUser]: engines.redisCredentials.username, [envVars.redisPassword]: engines.redisCredentials.password }
      : {}),
    ...(valueCache ? {} : { [envVars.l1EntriesMax]: '0' }),
    ...(options.shardCount ? { [envVars.shardCount]: String(options.shardCount) } : {}),
    ...(options.replicationFactor ? { [envVars.replicationFactor]: String(options.replicationFactor) } : {}),
    ...(options.vnodesPerShard ? { [envVars.vnodesPerShard]: String(options.vnodesPerShard) } : {}),
    [envVars.faultInjection]: options.faultInjection ? '1' : '0',
    [envVars.autoFailover]: options.autoFailover === false ? '0' : '1',
    ...(options.ringRefreshMs === undefined ? {} : { [envVars.ringRefreshMs]: String(options.ringRefreshMs) }),
    ...watchEnvOf(options.watch),
    // A mapping is kept by the handlers as long as an authorizer answer by the gateway, as in AWS.
    ...(options.authorizerCacheTtlSeconds === undefined ? {} : { [envVars.iamCacheTtlSeconds]: String(options.authorizerCacheTtlSeconds) }),
    ...(engines.sqsEndpoint ? { [envVars.sqsEndpoint]: engines.sqsEndpoint } : {}),
    ...drEnvOf(options.dr, drKeyQueue),
    AWS_REGION: localRegion,
  });
}

/** The change feed's settings as the handlers' environment names them. */
function watchEnvOf(watch: LocalCloudOptions['watch']): Record<string, string> {
  const env: Record<string, string> = {};
  if (watch?.retentionSeconds !== undefined) env[envVars.watchRetentionSeconds] = String(watch.retentionSeconds);
  if (watch?.settleMs !== undefined) env[envVars.watchSettleMs] = String(watch.settleMs);
  if (watch?.pollMs !== undefined) env[envVars.watchPollMs] = String(watch.pollMs);
  if (watch?.readIntervalMinMs !== undefined) env[envVars.watchReadIntervalMinMs] = String(watch.readIntervalMinMs);
  return env;
}

/** Every shard table (spares included), the control tables and the buckets, created if missing. */
async function provisionTables({ options, names, log }: Start, engines: RunningEngines, tableCount: number): Promise<void> {
  const clientConfig = { region: localRegion, credentials: { ...localCredentials } };
  const dynamodb = new DynamoDBClient({ ...clientConfig, endpoint: engines.dynamodbEndpoint });
  const s3 = new S3Client({
    ...clientConfig,
    endpoint: engines.s3Endpoint,
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  try {
    const created = await provision({ dynamodb, s3, names, shardCount: tableCount, drBackup: options.dr?.role === 'backup' });
    if (created.length) log(`created ${created.join(', ')}`);
  } finally {
    dynamodb.destroy();
    s3.destroy();
  }
}

/**
 * One process plays every function, as one Lambda instance each would, sharing one set of clients and caches;
 * each handler sees it through its own HandlerSpec. The fault controller (driven by the gateway's /_faults)
 * and the state machine runners are passed in, never filled in later.
 */
function wireHandlers({ options, stack }: Start, config: RuntimeConfig, promoting: boolean) {
  const faults = config.faultInjection ? new FaultController() : undefined;
  const logger = redactingLogger({ logLevel: options.logLevel ?? localLogLevel(process.env.POWERTOOLS_LOG_LEVEL) });
  const base = { config, logger, awsCredentials: { ...localCredentials }, ...(faults ? { faults } : {}) };
  const buildOn = <Name extends HandlerName>(name: Name, host: Wiring) => handlerFactories[name](host.forHandler(name)) as HandlerOf<Name>;
  const root = join(__dirname, '..', '..');
  // POST /v1/txn runs the same ASL file CDK deploys, with its tasks mapped to the txnStep handler. Failovers
  // run the failover ASL file the same way, in the background, one per id. The starter is passed in before
  // any handler that uses shard health is built: the instances are shared, and shard health starts
  // failovers when it marks a shard down (with automatic failover on).
  const host = Wiring.create(base);
  const failovers = localFailoverStarter(buildOn('failoverStep', host), root);
  const withFailovers = host.with({ failovers });
  const orchestrator = localTransactionOrchestrator(buildOn('txnStep', withFailovers), root);
  // A backup region runs its promotion workflow the same way (docs/dr.md).
  const promotions = promoting ? localPromotionStarter(buildOn('drPromotionStep', withFailovers), root) : undefined;
  // Rebalances run the rebalance ASL file in the background, one run per start or resume (docs/rebalancing.md).
  const rebalances = localRebalanceStarter(buildOn('rebalanceStep', withFailovers), root);
  const wiring = stack.use(withFailovers.with({ orchestrator, rebalances, ...(promotions ? { promotions } : {}) }), closeConnections);
  const build: BuildHandler = (name) => buildOn(name, wiring);
  // What the handlers write (through the one client they share, and the rebalance's), for the stream pollers.
  const writes = new TableWrites();
  writes.watch(documentClient(wiring));
  writes.watch(moverDocumentClient(wiring));
  return { wiring, build, faults, failovers, promotions, writes };
}

/** The ring (a stored one wins), the local API keys and IAM user; then the caller's seeding, if any. */
async function prepareData({ options, log }: Start, engines: RunningEngines, config: RuntimeConfig, wiring: Wiring) {
  const ring = await ringStore(wiring).ensureRing(initialRingOf(config));
  if (ring.shards.length !== config.shardCount) {
    log(
      `the stored ring has ${ring.shards.length} shards (epoch ${ring.epoch}); ${config.shardCount} were configured: the stored ring wins`,
    );
  }
  const keys = await ensureLocalKeys(options.home, apiKeyService(wiring));
  const iamUser = await ensureLocalIamMapping(options.iamHome ?? options.home, iamPrincipalService(wiring));
  await options.beforeStreams?.({ dynamodbEndpoint: engines.dynamodbEndpoint, ring });
  return { ring, keys, iamUser };
}

function gatewayHandlersOf(build: BuildHandler): GatewayHandlers {
  const proxies: GatewayHandlers['proxies'] = {};
  for (const name of new Set(routes.map((route) => route.handler))) proxies[name] = build(name);
  return { authorizer: build('authorizer'), proxies };
}

/** What feeds the handlers, as event source mappings do in AWS: the tables' streams and a backup's DR deliveries. */
async function startDeliveries(
  { options, stack, stage, names, log }: Start,
  region: {
    engines: RunningEngines;
    build: BuildHandler;
    ring: RingState;
    tableCount: number;
    drKeyQueue: { url: string; arn: string } | undefined;
    writes: TableWrites;
  },
) {
  const { engines, build } = region;
  const startAt = options.beforeStreams ? ('latest' as const) : ('oldest' as const);
  // Every shard table is streamed, on the ring or not yet: a shard a rebalance adds (docs/rebalancing.md,
  // "Growing a deployment") is provisioned by `--shards` first, as CDK's `shardCount` deploys it in AWS.
  const shardTables = [
    ...new Set([
      ...region.ring.shards.map((shard) => shard.table),
      ...Array.from({ length: region.tableCount }, (_, id) => names.shardTable(id)),
    ]),
  ];
  const streamed = async (poller: Omit<StreamPollerOptions, 'endpoint' | 'batchSize' | 'log'>) =>
    stack.use(
      await startStreamPoller({
        endpoint: engines.dynamodbEndpoint,
        batchSize: replicationDefaults.streamBatchSize,
        log,
        writes: region.writes,
        ...poller,
      }),
      (started) => started.stop(),
    );
  // The shard streams feed the replicator.
  const checkpoints = (prefix: string) => join(options.home, `${prefix}stream-checkpoints-${stage}.json`);
  const poller = await streamed({ tables: shardTables, startAt, handler: build('replicator'), checkpointFile: checkpoints('') });
  // The transaction table's stream feeds the applier (eventual transactions are applied from it).
  const txnPoller = await streamed({ tables: [names.txnTable], handler: build('txnApplier'), checkpointFile: checkpoints('txn-') });
  // The shipper is the shard streams' second consumer, as a second event source mapping is in AWS.
  const drPoller =
    options.dr?.role === 'primary'
      ? await streamed({ tables: shardTables, startAt, handler: build('drShipper'), checkpointFile: checkpoints('dr-'), name: 'drShipper' })
      : undefined;
  const backupDeliveries = region.drKeyQueue
    ? stack.use(
        startBackupDeliveries({
          engines,
          queue: region.drKeyQueue,
          keyApplier: build('drKeyApplier'),
          valueApplier: build('drValueApplier'),
          log,
        }),
        (started) => started.stop(),
      )
    : undefined;
  return { poller, txnPoller, drPoller, backupDeliveries };
}

/** The maintenance job (hint replay, anti-entropy) and the transaction sweeper, as EventBridge schedules. */
function startSchedules({ options, stack, log }: Start, build: BuildHandler): void {
  const maintenance = startSchedule({
    handler: build('maintenance'),
    name: 'maintenance',
    everyMs: options.maintenanceIntervalMs ?? replicationDefaults.localMaintenanceIntervalMs,
    log,
  });
  stack.use(maintenance, (schedule) => schedule.stop());
  const sweeper = startSchedule({
    handler: build('txnSweeper'),
    name: 'txnSweeper',
    everyMs: options.sweeperIntervalMs ?? txnLimits.localSweeperIntervalMs,
    log,
  });
  stack.use(sweeper, (schedule) => schedule.stop());
}

async function startLocalGateway(
  { options, stack, stage, log }: Start,
  handlers: GatewayHandlers,
  faults: FaultController | undefined,
): Promise<RunningGateway> {
  const gateway = await startGateway({
    port: options.port,
    stage,
    handlers,
    authorizerCacheTtlSeconds: options.authorizerCacheTtlSeconds ?? limits.authorizerCacheTtlSeconds,
    iam: new LocalIam(options.iamHome ?? options.home),
    ...(faults ? { faults } : {}),
    log,
  });
  return stack.use(gateway, (started) => started.stop());
}
