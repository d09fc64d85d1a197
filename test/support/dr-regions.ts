// Two in-memory regions linked for DR (docs/dr.md), shared by the DR unit suites: a primary whose
// shipper sends key messages to a queue double and values into transit, and a backup with its appliers,
// read gate and KV service. Each suite adds its own checks and helpers around them.
import { BackupApplier } from '../../lambdas/core/dr-applier';
import { PendingGate } from '../../lambdas/core/dr-pending-gate';
import { DrShipper } from '../../lambdas/core/dr-shipper';
import type { DrWriteGuard } from '../../lambdas/core/dr-promotion';
import { drReadGate, drWriteHooks } from '../../lambdas/core/dr-hooks';
import { KvService } from '../../lambdas/core/kv';
import type { Ring } from '../../lambdas/core/ring';
import type { BlobStore, DrMetrics, FaultInjector } from '../../lambdas/ports';
import type { limits as deploymentLimits } from '../../schemas/topology';
import {
  CountingIds,
  ManualClock,
  MemoryBlobStore,
  MemoryKeyChannel,
  MemoryPendingStore,
  MemoryShardStore,
  fixedRing,
  memoryReplication,
} from './memory-ports';

/** The link's value leg: uploads wait in transit until a test lets them arrive, in any order (or never). */
export class ValuesInTransit implements Pick<BlobStore, 'put'> {
  readonly inTransit: Array<{ objectKey: string; bytes: Uint8Array }> = [];
  async put(objectKey: string, bytes: Uint8Array): Promise<void> {
    this.inTransit.push({ objectKey, bytes });
  }
}

export interface DrRegionsOptions {
  ring: Ring;
  /** The primary's limits; the backup's too unless `backupLimits` says otherwise. */
  limits: typeof deploymentLimits;
  backupLimits?: typeof deploymentLimits;
  /** Whether the backup has been promoted (what its DR state says). */
  promoted: () => Promise<boolean>;
  /** The backup's permission to take writes (refused until promotion). */
  writeGuard: DrWriteGuard;
  /** A promoted backup's settling of a written lost key (reconciliation). */
  settleLost?: (namespace: string, key: string) => Promise<unknown>;
  faults?: FaultInjector;
  metrics?: DrMetrics;
  /** The clock both regions share (a new one by default). */
  clock?: ManualClock;
}

/**
 * Builds both regions on one manual clock.
 *
 * @example
 * const regions = memoryDrRegions({ ring, limits, promoted: async () => false, writeGuard });
 * await regions.primary.put('ns', 'a', { value, contentType: 'text/plain', drMode: 'key-sync' });
 */
export function memoryDrRegions(options: DrRegionsOptions) {
  const { ring, limits, faults } = options;
  const backupLimits = options.backupLimits ?? limits;
  const clock = options.clock ?? new ManualClock();
  const ids = new CountingIds();
  // The primary region
  const primaryShards = new MemoryShardStore();
  const primaryBlobs = new MemoryBlobStore();
  const keys = new MemoryKeyChannel();
  const transit = new ValuesInTransit();
  const shipper = new DrShipper({
    keys,
    backupValues: transit as unknown as BlobStore,
    blobs: primaryBlobs,
    limits: { shipConcurrency: 4 },
  });
  const primaryReplication = memoryReplication(primaryShards, clock);
  const primary = new KvService({
    shards: primaryShards,
    blobs: primaryBlobs,
    ring: fixedRing(ring),
    clock,
    ids,
    limits,
    replication: primaryReplication.replication,
    health: primaryReplication.health,
    writeHooks: drWriteHooks({ shipper, ids }),
  });
  // The backup region
  const backupShards = new MemoryShardStore();
  const backupBucket = new MemoryBlobStore();
  const pending = new MemoryPendingStore();
  const applier = new BackupApplier({
    pending,
    values: backupBucket,
    shards: backupShards,
    ring: fixedRing(ring),
    clock,
    limits: { inlineValueBytesMax: backupLimits.inlineValueBytesMax },
    promoted: options.promoted,
    ...(faults ? { faults } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  const gate = new PendingGate({
    pending,
    clock,
    // The gate's wait passes on the manual clock at once.
    sleep: async (ms) => void (clock.now += ms),
    limits: { pendingWaitMs: 1_000, pendingPollMs: 50 },
    promoted: options.promoted,
    ...(faults ? { faults } : {}),
  });
  const backupReplication = memoryReplication(backupShards, clock);
  const backup = new KvService({
    shards: backupShards,
    blobs: backupBucket,
    ring: fixedRing(ring),
    clock,
    ids,
    limits: backupLimits,
    replication: backupReplication.replication,
    health: backupReplication.health,
    readGate: drReadGate(gate),
    writeHooks: drWriteHooks({ ids, writeGuard: options.writeGuard, settleLost: options.settleLost }),
  });
  return {
    clock,
    ids,
    primaryShards,
    primaryBlobs,
    keys,
    transit,
    shipper,
    primary,
    backupShards,
    backupBucket,
    pending,
    applier,
    gate,
    backup,
  };
}
