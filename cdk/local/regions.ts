// Two local regions for cross-region disaster recovery (docs/dr.md): a backup region and a primary that
// ships to it, each with its own engines (so a disaster is a killed set of engines), the primary's
// traffic to the backup's queue and bucket going through the link between them.
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoApiKeyStore } from '../../lambdas/adapters/dynamodb-api-key-store';
import { namesFor } from '../../schemas/topology';
import { type LocalCloud, type LocalCloudOptions, startLocalCloud } from './cloud';
import { queuesOf } from './dr-region';
import { recordDemotionIfFenced } from './demotion';
import { localCredentials, localRegion } from './engines';
import { type RegionLink, startRegionLink } from './link';
import { type ResourceStack, startWithStack } from './resource-stack';
import { DEFAULT_BIN_DIR } from './engines/toxiproxy';

/** How often the regions look for a promotion of the backup, to mark the primary's home demoted (demotion.ts). */
const demotionCheckMs = 5_000;

/** The backup's engines the primary reaches: its key queue, its bucket, its DR state. */
export interface RegionEndpoints {
  sqsEndpoint: string;
  s3Endpoint: string;
  dynamodbEndpoint: string;
}

export interface LocalRegionsOptions extends Omit<LocalCloudOptions, 'dr' | 'port'> {
  /** The primary's gateway port (0: a free one); the backup's is `backupPort` (0 by default). */
  port: number;
  backupPort?: number;
  /** How long a promotion of the backup waits for values in transit (default drDefaults.valueWaitMs). */
  valueWaitMs?: number;
  /** How the primary ships: `together` is the benchmark's baseline (docs/dr.md). */
  shipOrder?: 'keyFirst' | 'together';
  /**
   * The network between the regions (docs/dr.md, "Locally"): Toxiproxy with this latency (default 5 ms
   * each way) and bandwidth (default unlimited); false: direct, no proxy.
   */
  link?: false | { latencyMs?: number; bandwidthKBps?: number };
  /** Where toxiproxy-server is built and kept (default `.ringstore/bin` of the repository). */
  binDir?: string;
}

export interface LocalRegions {
  primary: LocalCloud;
  backup: LocalCloud;
  /** The link the primary reaches the backup through (latency, bandwidth, cut and heal); undefined when direct. */
  link: RegionLink | undefined;
  /** Resolves once every write made in the primary before the call is applied (or pending) in the backup. */
  drCaughtUp(): Promise<void>;
  /** Copies the primary's API keys created since the start to the backup. */
  syncApiKeys(): Promise<void>;
  /**
   * Starts the primary region again over its data (after a disaster stopped its engines), reaching the
   * backup through the same link: the old primary's return (docs/dr.md, "Reconciliation"). `primary` is
   * the new one afterwards.
   */
  restartPrimary(): Promise<LocalCloud>;
  stop(): Promise<void>;
}

/**
 * Starts the backup region, then the primary shipping to it. The primary's API keys are copied to the
 * backup (as a deployment keeps them in both regions), so one key reads both; the local IAM user is one
 * for both regions, mapped in each.
 *
 * @example
 * const regions = await startLocalRegions({ home: '.ringstore', port: 4510 });
 * console.log(regions.primary.url, regions.backup.url);
 */
export async function startLocalRegions(options: LocalRegionsOptions): Promise<LocalRegions> {
  const log = options.log ?? (() => undefined);
  const { link: linkOptions, binDir, backupPort, valueWaitMs, shipOrder, ...shared } = options;
  // One jar cache for both regions (the backup's home is a subfolder).
  shared.vendorDir ??= join(options.home, 'vendor');
  // Stopping disposes in reverse: the demotion check, the primary, the link, the backup.
  return startWithStack(log, async (stack) => {
    const backupCloud = await startLocalCloud({
      ...shared,
      home: join(options.home, 'backup'),
      // The primary's local IAM user, mapped in the backup too: the same credentials sign for both regions.
      iamHome: options.home,
      port: backupPort ?? 0,
      dr: { role: 'backup', ...(valueWaitMs === undefined ? {} : { valueWaitMs }) },
      log: (line) => log(`backup: ${line}`),
    });
    const backup = stack.use(backupCloud, (cloud) => cloud.stop());
    const { link, through } = await startLinkTo(backup, { linkOptions, binDir, log }, stack);
    const keyQueue = backup.drKeyQueue;
    if (!keyQueue) throw new Error('the backup region has no key queue');
    const startPrimary = () =>
      startLocalCloud({
        ...shared,
        dr: {
          role: 'primary',
          keyQueueUrl: keyQueue.url,
          bucket: namesFor(options.stage).blobBucket,
          ...through,
          ...(shipOrder ? { shipOrder } : {}),
        },
        log: (line) => log(`primary: ${line}`),
      });
    // Once the backup fences the primary (a promotion, a drill), the primary's home is marked, so a later
    // start of that data alone is refused (demotion.ts): checked now, while both run, and at the stop.
    const markIfDemoted = () =>
      recordDemotionIfFenced({
        primaryHome: options.home,
        backupHome: join(options.home, 'backup'),
        dynamodbEndpoint: backup.engines.dynamodbEndpoint,
        ...(options.stage === undefined ? {} : { stage: options.stage }),
      }).catch((error: unknown) => log(`could not check whether the backup was promoted: ${String(error)}`));
    const regions: LocalRegions = {
      primary: await startPrimary(),
      backup,
      link,
      syncApiKeys: () => copyApiKeys(regions.primary, backup, options.stage),
      drCaughtUp: async () => {
        await regions.primary.drCaughtUp();
        await backup.drCaughtUp();
      },
      restartPrimary: async () => {
        await regions.primary.stop().catch(() => undefined);
        regions.primary = await startPrimary();
        return regions.primary;
      },
      stop: () => stack.disposeAll(),
    };
    // Whichever primary runs at the stop: restartPrimary replaces it.
    stack.defer(() => regions.primary.stop());
    await copyApiKeys(regions.primary, backup, options.stage);
    await markIfDemoted();
    stack.defer(markIfDemoted);
    const demotionCheck = setInterval(() => void markIfDemoted(), demotionCheckMs);
    demotionCheck.unref();
    stack.defer(() => clearInterval(demotionCheck));
    return regions;
  });
}

/** The link to the backup's engines (pushed onto `stack`), and the endpoints the primary reaches them at. */
async function startLinkTo(
  backup: LocalCloud,
  { linkOptions, binDir, log }: { linkOptions: LocalRegionsOptions['link']; binDir: string | undefined; log: (line: string) => void },
  stack: ResourceStack,
): Promise<{ link: RegionLink | undefined; through: RegionEndpoints }> {
  const direct: RegionEndpoints = {
    sqsEndpoint: queuesOf(backup.engines),
    s3Endpoint: backup.engines.s3Endpoint,
    dynamodbEndpoint: backup.engines.dynamodbEndpoint,
  };
  if (linkOptions === false) return { link: undefined, through: direct };
  const started = await startRegionLink({
    binDir: binDir ?? DEFAULT_BIN_DIR,
    upstreams: { sqs: direct.sqsEndpoint, s3: direct.s3Endpoint, dynamodb: direct.dynamodbEndpoint },
    ...(linkOptions?.latencyMs === undefined ? {} : { latencyMs: linkOptions.latencyMs }),
    ...(linkOptions?.bandwidthKBps === undefined ? {} : { bandwidthKBps: linkOptions.bandwidthKBps }),
    log,
  });
  const link = stack.use(started, (running) => running.stop());
  return {
    link,
    through: { sqsEndpoint: link.endpoints.sqs!, s3Endpoint: link.endpoints.s3!, dynamodbEndpoint: link.endpoints.dynamodb! },
  };
}

/** The primary's API keys (hashed records) into the backup's control table: one key works in both. */
async function copyApiKeys(primary: LocalCloud, backup: LocalCloud, stage: string | undefined): Promise<void> {
  const names = namesFor(stage);
  const clients = [primary, backup].map(
    (cloud) => new DynamoDBClient({ region: localRegion, credentials: { ...localCredentials }, endpoint: cloud.engines.dynamodbEndpoint }),
  );
  try {
    const [from, to] = clients.map((client) => new DynamoApiKeyStore(DynamoDBDocumentClient.from(client), names.controlTable));
    const have = new Set((await to!.list()).map((record) => record.keyId));
    for (const record of await from!.list()) if (!have.has(record.keyId)) await to!.create(record);
  } finally {
    for (const client of clients) client.destroy();
  }
}
