// Builders of cross-region disaster recovery (docs/dr.md): the primary's link to the backup region (its
// key queue and bucket) and shipper, the backup's pending table, appliers and read gate.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { drDefaults, envVars, limits } from '../../schemas/topology';
import { DeferredBlobStore } from '../adapters/deferred-blob-store';
import { DynamoDrStateStore, DynamoDrSyncStateStore, DynamoPromotionLog } from '../adapters/dynamodb-dr-state';
import { DynamoPendingStore } from '../adapters/dynamodb-pending-store';
import { DrStats } from '../adapters/dr-metrics';
import { powertoolsMetrics } from '../adapters/powertools-metrics';
import { BackupApplier, type PendingSweepReport } from '../core/dr-applier';
import { InitialSync } from '../core/dr-initial-sync';
import { NoticeSettler } from '../core/dr-notice-settler';
import { tokenOf } from '../core/ring';
import { PendingGate } from '../core/dr-pending-gate';
import { DrShipper } from '../core/dr-shipper';
import { BackupWritePermit, type DrWriteGuard, PrimaryLease, PromotionService } from '../core/dr-promotion';
import { settleLostKey } from '../core/dr-reconcile';
import { drReadGate, drTxnHooks, drWriteHooks } from '../core/dr-hooks';
import type { ReadGate, WriteHooks } from '../core/write-hooks';
import type { TxnHooks } from '../core/txn-hooks';
import { RingstoreError } from '../core/errors';
import type {
  BlobStore,
  DrKeyChannel,
  DrStateStore,
  DrSyncStateStore,
  KeyQueueProbe,
  PendingStore,
  PromotionLog,
  PromotionStarter,
} from '../ports';
import { clientOptions, documentClient, withoutRequestLogging } from './clients';
import { ringSource } from './control';
import { blobStore, shardStore } from './data';
import { loadOnce } from '../core/load-once';
import { sleep, type Wiring } from './wiring';

/** The fault injector, passed to the core only when present. */
const injected = (wiring: Wiring) => (wiring.faults ? { faults: wiring.faults } : {});

/** The primary's DR settings; refused in a region that is no DR primary, or to a handler without the link. */
function primaryConfig(wiring: Wiring) {
  const { dr } = wiring.config;
  if (dr.role !== 'primary') throw new RingstoreError('internal', `the DR link exists only in a DR primary (this region is ${dr.role})`);
  wiring.assertDeclared('drLink', 'use the DR link');
  return dr;
}

/** The backup region's key queue. The SQS client is loaded on the first message (kvWrite's cold start). */
export function drKeyChannel(wiring: Wiring): DrKeyChannel {
  const dr = primaryConfig(wiring);
  return wiring.shared('drKeys', () => {
    const channel = loadOnce(async () => {
      const [{ SQSClient }, { SqsDrKeyChannel }] = await Promise.all([
        import('@aws-sdk/client-sqs'),
        import('../adapters/sqs-dr-key-channel'),
      ]);
      const client = withoutRequestLogging(new SQSClient({ ...clientOptions(wiring, dr.sqsEndpoint), region: dr.region }));
      return new SqsDrKeyChannel(client, dr.keyQueueUrl);
    });
    return { send: async (messages) => (await channel()).send(messages) };
  });
}

/** The backup region's bucket, where the primary's values travel to (the S3 client is loaded on first use). */
export function backupValueStore(wiring: Wiring): BlobStore {
  const dr = primaryConfig(wiring);
  return wiring.shared(
    'drValues',
    () =>
      new DeferredBlobStore(async () => {
        const [{ S3BlobStore }, { S3Client }] = await Promise.all([import('../adapters/s3-blob-store'), import('@aws-sdk/client-s3')]);
        const client = withoutRequestLogging(
          new S3Client({
            ...clientOptions(wiring, dr.s3Endpoint),
            region: dr.region,
            forcePathStyle: Boolean(dr.s3Endpoint),
            requestChecksumCalculation: 'WHEN_REQUIRED',
            responseChecksumValidation: 'WHEN_REQUIRED',
          }),
        );
        return new S3BlobStore(client, dr.bucket, client, {
          fromBytes: drDefaults.multipartFromBytes,
          partBytes: drDefaults.multipartPartBytes,
          concurrency: drDefaults.multipartConcurrency,
        });
      }),
  );
}

/** The primary's shipper: key messages, then values, to the backup region. */
export function drShipper(wiring: Wiring): DrShipper {
  const dr = primaryConfig(wiring);
  return wiring.perHandler(
    'drShipper',
    () =>
      new DrShipper({
        keys: drKeyChannel(wiring),
        backupValues: backupValueStore(wiring),
        blobs: blobStore(wiring),
        limits: { shipConcurrency: drDefaults.shipConcurrency },
        order: dr.shipOrder,
        metrics: drStats(wiring),
        clock: wiring.clock,
        ...injected(wiring),
      }),
  );
}

/** The shipper for the write path of key-sync namespaces: only in a DR primary, only for handlers with the link. */
export function keySyncShipper(wiring: Wiring): DrShipper | undefined {
  if (wiring.config.dr.role !== 'primary' || (wiring.spec && !wiring.spec.drLink)) return undefined;
  return drShipper(wiring);
}

export function pendingStore(wiring: Wiring): PendingStore {
  const { dr } = wiring.config;
  if (dr.role !== 'backup')
    throw new RingstoreError('internal', `the pending table exists only in a DR backup (this region is ${dr.role})`);
  return wiring.port('pendingTable', 'read', 'pending', () => new DynamoPendingStore(documentClient(wiring), dr.pendingTable));
}

export function backupApplier(wiring: Wiring): BackupApplier {
  return wiring.perHandler(
    'backupApplier',
    () =>
      new BackupApplier({
        pending: pendingStore(wiring),
        values: blobStore(wiring),
        shards: shardStore(wiring),
        ring: ringSource(wiring),
        clock: wiring.clock,
        limits: { inlineValueBytesMax: limits.inlineValueBytesMax },
        metrics: drStats(wiring),
        onCorrupt: (entry, actual) =>
          wiring.logger.error('a value arrived whose sha256 does not match its key message: not applied, the key stays pending', {
            key: entry.key,
            namespace: entry.namespace,
            version: entry.version,
            expected: entry.sha256,
            actual,
          }),
        // Read fresh for every shipment until the promotion is seen (a state never moves back).
        promoted: promotedCheck(wiring, 0),
        ...injected(wiring),
      }),
  );
}

/**
 * Whether this backup region has been promoted, read again once the last read is older than
 * `maxAgeMs`; once seen promoted, that answer is kept (the state never moves back).
 */
function promotedCheck(wiring: Wiring, maxAgeMs: number): () => Promise<boolean> {
  const store = drStateStore(wiring);
  let last: { atMs: number; promoted: boolean } | undefined;
  return async () => {
    const now = wiring.clock.monotonicMs();
    if (last && (last.promoted || now - last.atMs < maxAgeMs)) return last.promoted;
    last = { atMs: now, promoted: (await store.read())?.state === 'promoted' };
    return last.promoted;
  };
}

/** The backup region's read gate; undefined in any other region. */
export function pendingGate(wiring: Wiring): PendingGate | undefined {
  if (wiring.config.dr.role !== 'backup') return undefined;
  return wiring.perHandler(
    'pendingGate',
    () =>
      new PendingGate({
        pending: pendingStore(wiring),
        clock: wiring.clock,
        sleep,
        limits: { pendingWaitMs: drDefaults.pendingWaitMs, pendingPollMs: drDefaults.pendingPollMs },
        promoted: promotedCheck(wiring, drDefaults.stateRefreshMs),
        ...injected(wiring),
      }),
  );
}

/** The backup's DR state: its own control table in a backup, the backup's (across the link) in a primary. */
export function drStateStore(wiring: Wiring): DrStateStore {
  const { dr } = wiring.config;
  if (dr.role === 'backup') {
    return wiring.port('controlTable', 'read', 'drState', () => new DynamoDrStateStore(documentClient(wiring), wiring.config.controlTable));
  }
  if (dr.role === 'primary') {
    return wiring.shared('backupDrState', () => new DynamoDrStateStore(backupControlClient(wiring), dr.controlTable));
  }
  throw new RingstoreError('internal', 'a region without DR has no DR state');
}

/** A primary's client of the backup region's DynamoDB (its control table: DR state, promotion reports). */
function backupControlClient(wiring: Wiring): DynamoDBDocumentClient {
  const { dr } = wiring.config;
  if (dr.role !== 'primary')
    throw new RingstoreError('internal', `only a DR primary reads its backup's control table (this region is ${dr.role})`);
  return wiring.shared('backupControlClient', () =>
    DynamoDBDocumentClient.from(
      withoutRequestLogging(new DynamoDBClient({ ...clientOptions(wiring, dr.dynamodbEndpoint), region: dr.region })),
    ),
  );
}

/** A primary's view of its backup's promotions (their reports name the lost keys it may offer back). */
export function backupPromotionLog(wiring: Wiring): PromotionLog {
  const { dr } = wiring.config;
  if (dr.role !== 'primary')
    throw new RingstoreError('internal', `only a DR primary reads its backup's promotions (this region is ${dr.role})`);
  return wiring.shared('backupPromotionLog', () => new DynamoPromotionLog(backupControlClient(wiring), dr.controlTable));
}

/**
 * Whether this region may acknowledge writes: a primary's lease from its backup, a backup's promotion;
 * undefined without DR. Every handler that writes for a client holds it (kvWrite; transactions to come).
 */
export function drWriteGuard(wiring: Wiring): DrWriteGuard | undefined {
  const { dr } = wiring.config;
  if (dr.role === 'none') return undefined;
  return wiring.shared('drWriteGuard', () =>
    dr.role === 'primary'
      ? new PrimaryLease({ state: drStateStore(wiring), clock: wiring.clock, leaseMs: drDefaults.leaseMs })
      : new BackupWritePermit({ state: drStateStore(wiring), clock: wiring.clock, refreshMs: drDefaults.stateRefreshMs }),
  );
}

/** The depth of the backup's key queue (SQS, loaded on first use: the promotion and the DR status ask). */
export function keyQueueProbe(wiring: Wiring): KeyQueueProbe {
  const { dr } = wiring.config;
  if (dr.role !== 'backup' || !dr.keyQueueUrl)
    throw new RingstoreError('internal', `no key queue to probe: ${envVars.drKeyQueueUrl} is not set`);
  wiring.assertDeclared('drKeyQueueDepth', 'read the key queue');
  const queueUrl = dr.keyQueueUrl;
  return wiring.shared('keyQueueProbe', () => {
    // A failed load is tried again on the next call (it was kept for the instance's lifetime).
    const probe = loadOnce(async () => {
      const [{ SQSClient }, { SqsKeyQueueProbe }] = await Promise.all([
        import('@aws-sdk/client-sqs'),
        import('../adapters/sqs-key-queue-probe'),
      ]);
      return new SqsKeyQueueProbe(withoutRequestLogging(new SQSClient(clientOptions(wiring, wiring.config.sqsEndpoint))), queueUrl);
    });
    return { depth: async () => (await probe()).depth() };
  });
}

export function promotionService(wiring: Wiring): PromotionService {
  const { dr } = wiring.config;
  if (dr.role !== 'backup') throw new RingstoreError('internal', `only a DR backup is promoted (this region is ${dr.role})`);
  return wiring.perHandler(
    'promotion',
    () =>
      new PromotionService({
        state: drStateStore(wiring),
        pending: pendingStore(wiring),
        queue: keyQueueProbe(wiring),
        log: promotionLog(wiring),
        clock: wiring.clock,
        sleep,
        limits: {
          leaseWaitMs: drDefaults.leaseMs + drDefaults.leaseMarginMs,
          drainTimeoutMs: drDefaults.drainTimeoutMs,
          valueWaitMs: dr.valueWaitMs,
          pollMs: drDefaults.promotionPollMs,
          lostReportedMax: drDefaults.lostReportedMax,
          scanPageSize: drDefaults.scanPageSize,
        },
        metrics: drStats(wiring),
        settle: () => backupApplier(wiring).retryPending({ olderThanMs: 0, pageSize: drDefaults.scanPageSize, pagesMax: Infinity }),
      }),
  );
}

export function promotionLog(wiring: Wiring) {
  return wiring.port(
    'controlTable',
    'read',
    'promotionLog',
    () => new DynamoPromotionLog(documentClient(wiring), wiring.config.controlTable),
  );
}

/**
 * What starts a backup's promotion: the host's runner (locally); in AWS the backup stack's state machine,
 * named by RINGSTORE_DR_PROMOTION_STATE_MACHINE_ARN, whose Step Functions client loads on the first start.
 */
export function promotionStarter(wiring: Wiring): PromotionStarter | undefined {
  if (wiring.spec && !wiring.spec.startsPromotions) {
    throw new RingstoreError(
      'internal',
      `handler ${wiring.spec.name} may not start promotions: its HandlerSpec does not say startsPromotions`,
    );
  }
  if (wiring.promotions) return wiring.promotions;
  const { dr } = wiring.config;
  if (dr.role !== 'backup' || !dr.promotionStateMachineArn) return undefined;
  return {
    start: async (request) => {
      const { sfnPromotionStarter } = await import('./orchestrator');
      const starter = sfnPromotionStarter(wiring);
      if (!starter) throw new RingstoreError('internal', 'no promotion state machine in this deployment (docs/dr.md)');
      return starter.start(request);
    },
  };
}

/** DR observations; published as CloudWatch metrics (EMF lines) only inside Lambda. */
export function drStats(wiring: Wiring): DrStats {
  return wiring.shared('drStats', () => new DrStats(wiring.config.inLambda ? powertoolsMetrics() : undefined));
}

/** A DR backup's sweep of old pending entries (run by maintenance); undefined in any other region. */
export function pendingSweep(wiring: Wiring): (() => Promise<PendingSweepReport>) | undefined {
  if (wiring.config.dr.role !== 'backup') return undefined;
  const applier = backupApplier(wiring);
  return () =>
    applier.retryPending({ olderThanMs: drDefaults.sweepAfterMs, pageSize: drDefaults.scanPageSize, pagesMax: drDefaults.sweepPagesMax });
}

/** The primary's initial-sync progress (its own control table). */
export function drSyncState(wiring: Wiring): DrSyncStateStore {
  return wiring.port(
    'controlTable',
    'read',
    'drSync',
    () => new DynamoDrSyncStateStore(documentClient(wiring), wiring.config.controlTable),
  );
}

/** The primary's settling of old write notices in its backup (maintenance); undefined in any other region. */
export function noticeSettler(wiring: Wiring): NoticeSettler | undefined {
  const { dr } = wiring.config;
  if (dr.role !== 'primary') return undefined;
  return wiring.perHandler('noticeSettler', () => {
    const shards = shardStore(wiring);
    const ring = ringSource(wiring);
    return new NoticeSettler({
      backupPending: new DynamoPendingStore(backupControlClient(wiring), dr.pendingTable),
      readOwner: async (namespace, key) => {
        const owner = (await ring.current()).ownerOf(tokenOf(namespace, key));
        return shards.get(owner.table, namespace, key, { consistent: true });
      },
      keys: drKeyChannel(wiring),
      clock: wiring.clock,
      limits: { settleAfterMs: drDefaults.noticeSettleAfterMs, pageSize: drDefaults.scanPageSize, pagesMax: drDefaults.sweepPagesMax },
    });
  });
}

/** The primary's initial sync, shipped by maintenance; undefined in any other region. */
export function initialSync(wiring: Wiring): InitialSync | undefined {
  if (wiring.config.dr.role !== 'primary') return undefined;
  return wiring.perHandler(
    'initialSync',
    () =>
      new InitialSync({
        shipper: drShipper(wiring),
        shards: shardStore(wiring),
        state: drSyncState(wiring),
        clock: wiring.clock,
        limits: { rangesPerRun: drDefaults.syncRangesPerRun, readConcurrency: drDefaults.shipConcurrency },
      }),
  );
}

/**
 * A promoted backup's settling of lost keys on every write (docs/dr.md, "Reconciliation"): the write's
 * key has its lost entries removed; undefined in any other region.
 */
export function lostKeySettler(wiring: Wiring): ((namespace: string, key: string) => Promise<number>) | undefined {
  if (wiring.config.dr.role !== 'backup') return undefined;
  const deps = { pending: pendingStore(wiring), values: blobStore(wiring) };
  return (namespace, key) => settleLostKey(deps, namespace, key);
}

/** What DR adds around the KV path in this region (dr-hooks.ts): none without DR. */
/** What DR adds around a transaction in this region (dr-hooks.ts), or undefined outside DR. */
export function drTxnHooksOf(wiring: Wiring): TxnHooks | undefined {
  const writeGuard = drWriteGuard(wiring);
  const shipper = keySyncShipper(wiring);
  const lostKeys = pendingGate(wiring);
  return writeGuard || shipper || lostKeys ? drTxnHooks({ writeGuard, shipper, lostKeys, clock: wiring.clock }) : undefined;
}

export function drKvHooks(wiring: Wiring): { writeHooks?: WriteHooks; readGate?: ReadGate } {
  const shipper = keySyncShipper(wiring);
  const writeGuard = drWriteGuard(wiring);
  const settleLost = lostKeySettler(wiring);
  const gate = pendingGate(wiring);
  const writes =
    shipper || writeGuard || settleLost ? { writeHooks: drWriteHooks({ shipper, ids: wiring.ids, writeGuard, settleLost }) } : {};
  return { ...writes, ...(gate ? { readGate: drReadGate(gate) } : {}) };
}
