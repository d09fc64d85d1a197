// Starts the local engines behind the AWS services Ringstore uses (docs/architecture.md, "The local cloud"): DynamoDB Local,
// ElasticMQ, s3rver and redis-server, in parallel, each on 127.0.0.1 and its own port.
//
// Measured on the 2-core build machine, all four in parallel: ~1.2-1.8 s warm (jars in vendorDir,
// ElasticMQ class-data archive trained); ~3 s on the run that trains the archive (and its stop takes
// ~3 s more while the JVM writes it); ~10 s on the very first start (Maven fetch, warm ~/.m2).
// Without the JVM tuning in java.ts the warm start was ~3 s.
import type { S3Event } from 'aws-lambda';
import { join } from 'node:path';
import { startDynamoDbLocal } from './dynamodb-local';
import { startElasticMq } from './elasticmq';
import { freePorts } from './free-port';
import { EngineStartError } from './ready';
import { findRedisServer, startRedis, type RedisCredentials, type StartedRedis } from './redis';
import { startS3, type StartedS3 } from './s3';
import type { DynamoDbJournal, StartedEngine } from './types';

export { localCredentials, localRegion } from './aws';
export { s3ClientOptions } from './s3';
export { EngineStartError } from './ready';
export type { DynamoDbJournal } from './types';

export type EngineName = 'dynamodb' | 'sqs' | 's3' | 'redis';

export interface EngineEndpoints {
  dynamodbEndpoint: string;
  /** Undefined when started without queues (StartEnginesOptions.queues). */
  sqsEndpoint?: string;
  s3Endpoint: string;
  /** Undefined when redis-server is not installed: the L2 cache is off. */
  redisUrl?: string;
  /** The one user the local cache lets in (with redisUrl). */
  redisCredentials?: RedisCredentials;
}

export interface RunningEngines extends EngineEndpoints {
  /** Stops every engine (SIGTERM, SIGKILL after a bounded wait); resolves when all have exited. Idempotent. */
  stop(): Promise<void>;
  /**
   * Subscribes to the S3 stand-in's object notifications (the Lambda `S3Event` shape, keys
   * form-encoded as S3 sends them), delivered after the response. Returns an unsubscribe function.
   */
  onS3Event(listener: (event: S3Event) => void): () => void;
}

export interface StartEnginesOptions {
  /** e.g. `.ringstore/data`; each engine persists under its own subfolder. */
  dataDir: string;
  /** e.g. `.ringstore/vendor`; jars are fetched here on first start. */
  vendorDir: string;
  /** 0 or absent = pick a free port. */
  ports?: Partial<Record<EngineName, number>>;
  /** One-line progress messages. */
  log?: (line: string) => void;
  /** DynamoDB Local's journal; `rollback` unless set. */
  dynamodbJournal?: DynamoDbJournal;
  /**
   * A DynamoDB Local already running elsewhere, by endpoint: used as it is, neither started nor stopped here. A test
   * run shares one among the clouds of a jest worker (test/support/shared-engines.ts), each cloud under a stage of
   * its own so that their tables do not meet.
   */
  running?: { dynamodb?: string };
  /**
   * Whether to run ElasticMQ (default true). Only cross-region DR sends to queues (a primary to its backup's key
   * queue, which the backup reads): a region without DR starts no JVM for them, about 2.5 CPU-s and 1.5 s saved.
   */
  queues?: boolean;
}

/** How many times an engine is started on a fresh port when the picked one was taken meanwhile. */
const PORT_ATTEMPTS = 3;

type Starter = (port: number) => Promise<StartedEngine>;

/** An engine the caller runs (StartEnginesOptions.running): used, never stopped here. */
const alreadyRunning = (name: EngineName, endpoint: string): Promise<StartedEngine> =>
  Promise.resolve({ name, endpoint, stop: () => Promise.resolve() });

/** Start-up duration of each engine, for the summary line. */
const startMs = new WeakMap<StartedEngine, number>();

async function startOnPort(start: Starter, fixedPort: number | undefined, pickedPort: number): Promise<StartedEngine> {
  const t0 = Date.now();
  const engine = await startOnPortUntimed(start, fixedPort, pickedPort);
  startMs.set(engine, Date.now() - t0);
  return engine;
}

async function startOnPortUntimed(start: Starter, fixedPort: number | undefined, pickedPort: number): Promise<StartedEngine> {
  if (fixedPort) return start(fixedPort);
  let port = pickedPort;
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(port);
    } catch (e) {
      // A port picked by us can be taken between the probe and the engine's bind; try another.
      const portRace = (e instanceof EngineStartError && e.exitedEarly) || (e as NodeJS.ErrnoException).code === 'EADDRINUSE';
      if (!portRace || attempt >= PORT_ATTEMPTS) throw e;
      const [fresh] = await freePorts(1);
      if (fresh === undefined) throw e;
      port = fresh;
    }
  }
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * Starts the local engines in parallel and resolves once every one answers a real request.
 * If any fails, the others are stopped and the error names each failure with the engine's output.
 * Registers no process signal handlers: the caller stops the engines on SIGINT/SIGTERM. The child
 * processes die with this process even when it is SIGKILLed.
 *
 * @example
 * const engines = await startEngines({ dataDir: '.ringstore/data', vendorDir: '.ringstore/vendor', log: console.log });
 * const ddb = new DynamoDBClient({ endpoint: engines.dynamodbEndpoint, region: localRegion, credentials: localCredentials });
 * await engines.stop();
 */
export async function startEngines(opts: StartEnginesOptions): Promise<RunningEngines> {
  const log = opts.log ?? (() => {});
  const started = Date.now();
  const ports = opts.ports ?? {};
  const [dynamodbPort, sqsPort, s3Port, redisPort] = await freePorts(4);
  if (dynamodbPort === undefined || sqsPort === undefined || s3Port === undefined || redisPort === undefined) {
    throw new Error('startEngines: could not pick free ports');
  }
  const dataDir = (name: string): string => join(opts.dataDir, name);
  const common = { vendorDir: opts.vendorDir, log };
  const journal = opts.dynamodbJournal ?? 'rollback';

  const redisServer = findRedisServer();
  if (!redisServer) log('L2 cache off: redis-server was not found on PATH');

  const starts: Array<Promise<StartedEngine | undefined>> = [
    opts.running?.dynamodb
      ? alreadyRunning('dynamodb', opts.running.dynamodb)
      : startOnPort((port) => startDynamoDbLocal({ ...common, dataDir: dataDir('dynamodb'), port, journal }), ports.dynamodb, dynamodbPort),
    opts.queues === false
      ? Promise.resolve(undefined)
      : startOnPort((port) => startElasticMq({ ...common, dataDir: dataDir('sqs'), port }), ports.sqs, sqsPort),
    startOnPort((port) => startS3({ dataDir: dataDir('s3'), port, log }), ports.s3, s3Port),
    redisServer
      ? startOnPort((port) => startRedis({ redisServer, dataDir: dataDir('redis'), port }), ports.redis, redisPort)
      : Promise.resolve(undefined),
  ];
  const results = await Promise.allSettled(starts);
  const engines = results.flatMap((r) => (r.status === 'fulfilled' && r.value ? [r.value] : []));
  const stopAll = async (): Promise<void> => {
    const stops = await Promise.allSettled(engines.map((e) => e.stop()));
    const failed = stops.flatMap((s) => (s.status === 'rejected' ? [s.reason instanceof Error ? s.reason.message : String(s.reason)] : []));
    if (failed.length > 0) throw new Error(`stopping the local engines failed: ${failed.join('; ')}`);
  };

  const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
  if (failures.length > 0) {
    await stopAll().catch(() => undefined);
    const messages = failures.map((f) => (f instanceof Error ? f.message : String(f)));
    throw new EngineStartError(`local engines failed to start:\n${messages.join('\n\n')}`, false, { cause: failures[0] });
  }

  const byName = (name: EngineName): StartedEngine | undefined => engines.find((e) => e.name === name);
  const must = (name: EngineName): StartedEngine => {
    const engine = byName(name);
    if (!engine) throw new Error(`startEngines: ${name} missing after start`);
    return engine;
  };
  const s3 = must('s3') as StartedS3;
  const redis = byName('redis') as StartedRedis | undefined;
  const running: RunningEngines = {
    dynamodbEndpoint: must('dynamodb').endpoint,
    ...(opts.queues === false ? {} : { sqsEndpoint: must('sqs').endpoint }),
    s3Endpoint: s3.endpoint,
    ...(redis ? { redisUrl: redis.endpoint, redisCredentials: redis.credentials } : {}),
    onS3Event: (listener) => s3.onEvent(listener),
    stop: (() => {
      let stopping: Promise<void> | undefined;
      return () => (stopping ??= stopAll());
    })(),
  };
  const took = (name: EngineName): string => {
    const engine = byName(name);
    const ms = engine && startMs.get(engine);
    return ms === undefined ? '' : ` (${seconds(ms)})`;
  };
  log(
    `local engines up in ${seconds(Date.now() - started)}: DynamoDB ${running.dynamodbEndpoint}${took('dynamodb')}, ` +
      `SQS ${running.sqsEndpoint ?? 'off (no DR)'}${took('sqs')}, S3 ${running.s3Endpoint}${took('s3')}, Redis ${running.redisUrl ?? 'off'}${took('redis')}`,
  );
  return running;
}
