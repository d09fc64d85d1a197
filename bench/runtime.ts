// What the benches measure through: the local cloud's own instances (the handlers' clients, caches and
// services), each taken from the view of the handler that uses it in the cloud.
import { kvReadHandler } from '../lambdas/handlers/kv-read';
import { kvWriteHandler } from '../lambdas/handlers/kv-write';
import { documentClient } from '../lambdas/wiring/clients';
import { apiKeyService, ringSource, shardHealth } from '../lambdas/wiring/control';
import { kvReadDeps, kvWriteDeps } from '../lambdas/wiring/data-api-deps';
import { hintStore, remoteCache, replicationStats } from '../lambdas/wiring/data';
import { kvService, maintenanceService, replicationService, transactionService } from '../lambdas/wiring/services';
import { s3Client } from '../lambdas/wiring/s3-client';
import type { Wiring } from '../lambdas/wiring/wiring';

/**
 * @example
 * const rt = benchRuntime(cloud.wiring);
 * const principal = await rt.apiKeys.authenticate(cloud.apiKey);
 */
export function benchRuntime(wiring: Wiring) {
  const kvRead = wiring.forHandler('kvRead');
  return {
    config: wiring.config,
    faults: wiring.faults,
    dynamodb: documentClient(wiring),
    s3: s3Client(wiring),
    l2: remoteCache(wiring),
    ring: ringSource(wiring),
    health: shardHealth(wiring),
    hints: hintStore(wiring),
    stats: replicationStats(wiring),
    apiKeys: apiKeyService(wiring),
    // The very services the handlers call: a held replication must be the replicator's.
    kv: kvService(kvRead),
    replication: replicationService(wiring.forHandler('replicator')),
    maintenance: maintenanceService(wiring.forHandler('maintenance')),
    txns: transactionService(wiring.forHandler('txnStep')),
    readHandler: kvReadHandler(kvReadDeps(kvRead)),
    writeHandler: kvWriteHandler(kvWriteDeps(wiring.forHandler('kvWrite'))),
  };
}

export type BenchRuntime = ReturnType<typeof benchRuntime>;
