// `npm start`: the whole service on this machine. Prints the API URL and local keys; Ctrl-C stops everything.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import * as z from 'zod';
// The cloud and its engines are loaded once the command line and the port have been checked: a refusal
// or --help answers in a moment, not after the whole local cloud has been loaded.
import type { LocalCloud } from './cloud';
import { acceptDemotedFlag, demotedStartRefusal, demotionOf, forgetDemotion } from './demotion';
import { lockHome } from './home-lock';
import { stagePattern } from '../../schemas/topology';

const usage = [
  'usage: npm start [-- --regions 2] [-- --accept-demoted] [-- --fresh]',
  '  --regions 2        a primary and a DR backup region, each with its own engines (docs/dr.md)',
  '  --fresh            a throwaway run: its data in a new temporary directory, removed when it stops',
  `  ${acceptDemotedFlag}   start a demoted DR primary's data alone anyway`,
  'settings are environment variables (README, "Configuration"): RINGSTORE_PORT, RINGSTORE_HOME, …',
].join('\n');

/**
 * The command line, as environment entries: `--regions N` (or `--regions=N`) and `--accept-demoted`.
 * Anything else is refused with the usage: a flag given to npm without `--` (`npm start --regions 2`)
 * reaches this process as a stray `2`, and was silently ignored.
 */
function commandLine(args: readonly string[]): Record<string, string> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      options: {
        regions: { type: 'string' },
        'accept-demoted': { type: 'boolean' },
        fresh: { type: 'boolean' },
        help: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    });
  } catch (error) {
    // npm keeps a flag before `--` for itself (npm_config_<name>) and passes its value on as an argument.
    const npmKept = process.env.npm_config_regions !== undefined ? '; npm took --regions for itself: run npm start -- --regions 2' : '';
    console.error(`error: ${error instanceof Error ? error.message : String(error)}${npmKept}\n${usage}`);
    process.exit(2);
  }
  if (parsed.values.help) {
    console.log(usage);
    process.exit(0);
  }
  return {
    ...(parsed.values.regions === undefined ? {} : { RINGSTORE_REGIONS: parsed.values.regions }),
    ...(parsed.values['accept-demoted'] ? { RINGSTORE_ACCEPT_DEMOTED: '1' } : {}),
    ...(parsed.values.fresh ? { RINGSTORE_FRESH: '1' } : {}),
  };
}

/** Whether `port` can be listened on at 127.0.0.1 now (0: any port, always). */
function portFree(port: number): Promise<boolean> {
  if (port === 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

const settings = z
  .object({
    RINGSTORE_PORT: z.coerce.number().int().min(0).max(65535).default(4510),
    RINGSTORE_HOME: z.string().default(resolve(__dirname, '..', '..', '.ringstore')),
    RINGSTORE_VENDOR_DIR: z.string().optional(),
    RINGSTORE_SHARD_COUNT: z.coerce.number().int().min(1).max(64).optional(),
    /** Shard tables beyond the ring's, for a rebalance to add (docs/rebalancing.md). */
    RINGSTORE_SPARE_SHARDS: z.coerce.number().int().min(0).max(8).optional(),
    /** DynamoDB Local's journal: rollback, the engine's own (the default), or wal (engines/types.ts). */
    RINGSTORE_DYNAMODB_JOURNAL: z.enum(['wal', 'rollback']).default('rollback'),
    RINGSTORE_AUTH_CACHE_TTL_SECONDS: z.coerce.number().int().min(0).max(3600).optional(),
    RINGSTORE_FAULT_INJECTION: z.enum(['0', '1']).default('0'),
    RINGSTORE_AUTO_FAILOVER: z.enum(['0', '1']).default('1'),
    RINGSTORE_MAINTENANCE_INTERVAL_MS: z.coerce.number().int().min(0).max(3_600_000).optional(),
    /** How long the handlers trust a cached ring for eventual reads (lambdas/config.ts checks the bounds). */
    RINGSTORE_RING_REFRESH_MS: z.coerce.number().int().optional(),
    /** The change feed's retention, settle time, poll interval and least read interval (docs/watch.md; config.ts checks them). */
    RINGSTORE_WATCH_RETENTION_SECONDS: z.coerce.number().int().optional(),
    RINGSTORE_WATCH_SETTLE_MS: z.coerce.number().int().optional(),
    RINGSTORE_WATCH_POLL_MS: z.coerce.number().int().optional(),
    RINGSTORE_WATCH_READ_INTERVAL_MIN_MS: z.coerce.number().int().optional(),
    /** 2: a primary and a DR backup region (docs/dr.md), each with its own engines; also `npm start -- --regions 2`. */
    RINGSTORE_REGIONS: z.coerce.number().int().min(1).max(2).default(1),
    /** The link between two regions (Toxiproxy): latency each way, and a bandwidth limit (KB/s, unset: none). */
    RINGSTORE_LINK_LATENCY_MS: z.coerce.number().int().min(0).max(10_000).default(5),
    RINGSTORE_LINK_BANDWIDTH_KBPS: z.coerce.number().int().min(1).optional(),
    /** 1: start a demoted DR primary's data alone anyway (demotion.ts); also `npm start -- --accept-demoted`. */
    RINGSTORE_ACCEPT_DEMOTED: z.enum(['0', '1']).default('0'),
    /** 1: a throwaway run in a new temporary directory, removed when it stops (also `npm start -- --fresh`). */
    RINGSTORE_FRESH: z.enum(['0', '1']).default('0'),
    /**
     * A DynamoDB Local already running (a test run's, shared by its clouds): used as it is, neither started nor
     * stopped; give each cloud on it its own RINGSTORE_STAGE. (One region runs no queues, so no ElasticMQ.)
     */
    RINGSTORE_DYNAMODB_ENDPOINT: z.url().optional(),
    /** The stage the cloud's tables and queues are named by (`ringstore-<stage>-…`); `local` unless set. */
    RINGSTORE_STAGE: z.string().regex(stagePattern).optional(),
  })
  .safeParse({ ...process.env, ...commandLine(process.argv.slice(2)) });

// The SDK's notice that its 2027 releases need Node 22 is printed on every Node 20 start; the notice
// is in the README (Lambda runs Node 22), so the local cloud does not repeat it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

type Settings = Extract<typeof settings, { success: true }>['data'];
type Log = (line: string) => void;

/** The settings, or an exit naming each bad one; a fresh run's home is a new temporary directory. */
function environment(): { env: Settings; fresh: boolean } {
  if (!settings.success) {
    for (const issue of settings.error.issues) console.error(`error: ${issue.path.join('.')}: ${issue.message}`);
    process.exit(2);
  }
  if (settings.data.RINGSTORE_REGIONS === 2 && settings.data.RINGSTORE_DYNAMODB_ENDPOINT) {
    console.error('error: RINGSTORE_DYNAMODB_ENDPOINT takes one region: two regions each start their own engines');
    process.exit(2);
  }
  const fresh = settings.data.RINGSTORE_FRESH === '1';
  // A fresh run keeps its data in a new temporary directory, and the engine jars where a plain start keeps them.
  const env = fresh
    ? {
        ...settings.data,
        RINGSTORE_HOME: mkdtempSync(join(tmpdir(), 'ringstore-fresh-')),
        RINGSTORE_VENDOR_DIR: settings.data.RINGSTORE_VENDOR_DIR ?? join(settings.data.RINGSTORE_HOME, 'vendor'),
      }
    : settings.data;
  return { env, fresh };
}

/** Locks the home for this process (released at exit); a fresh run's home is removed at exit. */
function claimHome(env: Settings, fresh: boolean): { release(): void } {
  // Before any engine starts: a second start on the same directory is refused, not run beside the first.
  mkdirSync(env.RINGSTORE_HOME, { recursive: true });
  const lock = lockHome(env.RINGSTORE_HOME);
  process.on('exit', () => lock.release());
  // A fresh run's data goes however the run ends (a stop, a refusal, a failure), short of SIGKILL: then it
  // stays in the temporary directory.
  if (fresh) process.on('exit', () => rmSync(env.RINGSTORE_HOME, { recursive: true, force: true }));
  return lock;
}

/** Before any engine starts: a taken port is said at once (it used to surface as EADDRINUSE once the engines were up). */
async function refuseTakenPorts(env: Settings): Promise<void> {
  const ports =
    env.RINGSTORE_REGIONS === 2 && env.RINGSTORE_PORT !== 0 ? [env.RINGSTORE_PORT, env.RINGSTORE_PORT + 1] : [env.RINGSTORE_PORT];
  for (const port of ports) {
    if (await portFree(port)) continue;
    console.error(
      `error: port ${port} on 127.0.0.1 is taken (another npm start?): stop what holds it, or start on another port: ` +
        'RINGSTORE_PORT=0 npm start (any free port, printed) or RINGSTORE_PORT=4520 npm start',
    );
    process.exit(1);
  }
}

function cloudOptions(env: Settings, log: Log) {
  return {
    home: env.RINGSTORE_HOME,
    port: env.RINGSTORE_PORT,
    ...(env.RINGSTORE_VENDOR_DIR ? { vendorDir: env.RINGSTORE_VENDOR_DIR } : {}),
    ...(env.RINGSTORE_SHARD_COUNT ? { shardCount: env.RINGSTORE_SHARD_COUNT } : {}),
    ...(env.RINGSTORE_SPARE_SHARDS ? { spareShards: env.RINGSTORE_SPARE_SHARDS } : {}),
    dynamodbJournal: env.RINGSTORE_DYNAMODB_JOURNAL,
    ...(env.RINGSTORE_AUTH_CACHE_TTL_SECONDS !== undefined ? { authorizerCacheTtlSeconds: env.RINGSTORE_AUTH_CACHE_TTL_SECONDS } : {}),
    ...(env.RINGSTORE_MAINTENANCE_INTERVAL_MS !== undefined ? { maintenanceIntervalMs: env.RINGSTORE_MAINTENANCE_INTERVAL_MS } : {}),
    ...(env.RINGSTORE_RING_REFRESH_MS !== undefined ? { ringRefreshMs: env.RINGSTORE_RING_REFRESH_MS } : {}),
    watch: {
      ...(env.RINGSTORE_WATCH_RETENTION_SECONDS !== undefined ? { retentionSeconds: env.RINGSTORE_WATCH_RETENTION_SECONDS } : {}),
      ...(env.RINGSTORE_WATCH_SETTLE_MS !== undefined ? { settleMs: env.RINGSTORE_WATCH_SETTLE_MS } : {}),
      ...(env.RINGSTORE_WATCH_POLL_MS !== undefined ? { pollMs: env.RINGSTORE_WATCH_POLL_MS } : {}),
      ...(env.RINGSTORE_WATCH_READ_INTERVAL_MIN_MS !== undefined ? { readIntervalMinMs: env.RINGSTORE_WATCH_READ_INTERVAL_MIN_MS } : {}),
    },
    faultInjection: env.RINGSTORE_FAULT_INJECTION === '1',
    autoFailover: env.RINGSTORE_AUTO_FAILOVER === '1',
    ...(env.RINGSTORE_STAGE ? { stage: env.RINGSTORE_STAGE } : {}),
    ...(env.RINGSTORE_DYNAMODB_ENDPOINT ? { runningEngines: { dynamodb: env.RINGSTORE_DYNAMODB_ENDPOINT } } : {}),
    log,
  };
}

/** What `npm start` runs: the region (or both regions), and how to stop it all. */
interface Started {
  cloud: LocalCloud;
  backup?: LocalCloud;
  stopAll: () => Promise<void>;
}

async function startRegions(env: Settings, options: ReturnType<typeof cloudOptions>): Promise<Started> {
  // The backup's gateway listens on the next port when the primary's is fixed.
  const { startLocalRegions } = await import('./regions');
  const regions = await startLocalRegions({
    ...options,
    backupPort: env.RINGSTORE_PORT === 0 ? 0 : env.RINGSTORE_PORT + 1,
    link: {
      latencyMs: env.RINGSTORE_LINK_LATENCY_MS,
      ...(env.RINGSTORE_LINK_BANDWIDTH_KBPS === undefined ? {} : { bandwidthKBps: env.RINGSTORE_LINK_BANDWIDTH_KBPS }),
    },
  });
  return { cloud: regions.primary, backup: regions.backup, stopAll: () => regions.stop() };
}

async function startOneRegion(env: Settings, options: ReturnType<typeof cloudOptions>, log: Log): Promise<Started> {
  // Before any engine starts: a demoted primary's data is not made writable alone without being asked.
  const demotion = await demotionOf(env.RINGSTORE_HOME);
  if (demotion && env.RINGSTORE_ACCEPT_DEMOTED !== '1') {
    console.error(`error: ${demotedStartRefusal(env.RINGSTORE_HOME, demotion)}`);
    process.exit(1);
  }
  if (demotion) {
    await forgetDemotion(env.RINGSTORE_HOME);
    log(
      `${acceptDemotedFlag}: the demoted primary's data serves alone; the promoted region's writes since DR epoch ${demotion.epoch} are not in it`,
    );
  }
  const { startLocalCloud } = await import('./cloud');
  const cloud = await startLocalCloud(options);
  return { cloud, stopAll: () => cloud.stop() };
}

/**
 * Ctrl-C stops everything from the moment the API is announced: the handlers are in place before it is (a
 * SIGINT that came before them would end the process without stopping the engines).
 */
function stopOnSignals(stopAll: () => Promise<void>, lock: { release(): void }, started: number, log: Log): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping`);
    stopAll().then(
      () => {
        lock.release();
        log(`stopped after ${((Date.now() - started) / 1000).toFixed(1)} s`);
        process.exit(0);
      },
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

/** One fact per line, so scripts (and the integration tests) can read them. */
function printFacts({ cloud, backup }: Started): void {
  console.log(`API: ${cloud.url}`);
  console.log(`API key: ${cloud.apiKey}`);
  console.log(`Admin key: ${cloud.adminKey}`);
  // SigV4 credentials of the local IAM user, mapped to the same namespace (docs/security.md, "IAM authentication").
  console.log(`AWS access key id: ${cloud.iamUser.accessKeyId}`);
  console.log(`AWS secret access key: ${cloud.iamUser.secretAccessKey}`);
  console.log(`IAM principal: ${cloud.iamUser.arn}`);
  console.log(`Docs: ${cloud.url}/docs`);
  console.log(`DynamoDB: ${cloud.engines.dynamodbEndpoint}`);
  if (cloud.engines.redisUrl) console.log(`Redis: ${cloud.engines.redisUrl}`);
  if (cloud.faultInjection) console.log(`Faults: ${cloud.url}/_faults`);
  if (backup) {
    // The same keys work in both regions; the backup serves reads until it is promoted (docs/dr.md).
    console.log(`Backup API: ${backup.url}`);
    console.log(`Backup DynamoDB: ${backup.engines.dynamodbEndpoint}`);
  }
}

async function main(): Promise<void> {
  const { env, fresh } = environment();
  const started = Date.now();
  const log = (line: string) => console.error(`[ringstore] ${line}`);
  const lock = claimHome(env, fresh);
  await refuseTakenPorts(env);
  const options = cloudOptions(env, log);
  const running = env.RINGSTORE_REGIONS === 2 ? await startRegions(env, options) : await startOneRegion(env, options, log);
  stopOnSignals(running.stopAll, lock, started, log);
  log(
    `ready in ${((Date.now() - started) / 1000).toFixed(1)} s; data in ${env.RINGSTORE_HOME}${fresh ? ' (--fresh: removed when stopped)' : ''}`,
  );
  printFacts(running);
}

main().catch((error: unknown) => {
  console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
