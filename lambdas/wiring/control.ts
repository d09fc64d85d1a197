// Builders of what lives in the control table: the ring, API keys, shard health, namespace settings and
// the scheduled jobs' state. Handlers that touch only the control table import only this module.
import { replicationDefaults } from '../../schemas/topology';
import { CachedShardHealth } from '../adapters/cached-shard-health';
import { DynamoApiKeyStore } from '../adapters/dynamodb-api-key-store';
import { DynamoAuditLog } from '../adapters/dynamodb-audit-log';
import { DynamoFailoverLog } from '../adapters/dynamodb-failover-log';
import { DynamoMaintenanceStateStore, DynamoSweeperStateStore } from '../adapters/dynamodb-job-state-stores';
import { DynamoNamespaceSettingsStore } from '../adapters/dynamodb-namespace-settings-store';
import { DynamoPrincipalMappingStore } from '../adapters/dynamodb-principal-store';
import { DynamoRingStore } from '../adapters/dynamodb-ring-store';
import { DynamoShardHealthStore } from '../adapters/dynamodb-shard-health-store';
import { ApiKeyService } from '../core/auth';
import { FailoverOnUnavailable } from '../core/failover-trigger';
import { IamPrincipalService } from '../core/iam-principals';
import { NamespaceSettingsService } from '../core/namespaces';
import { CachedRingSource } from '../core/ring-source';
import type {
  ApiKeyStore,
  AuditLog,
  FailoverLog,
  FailoverStarter,
  MaintenanceStateStore,
  NamespaceSettingsStore,
  PrincipalMappingStore,
  RingStore,
  ShardHealthStore,
  SweeperStateStore,
} from '../ports';
import { documentClient } from './clients';
import type { Wiring } from './wiring';

export function ringStore(wiring: Wiring): RingStore {
  return wiring.port('controlTable', 'read', 'ringStore', () => new DynamoRingStore(documentClient(wiring), wiring.config.controlTable));
}

/** The ring this instance routes with, cached per instance. */
export function ringSource(wiring: Wiring): CachedRingSource {
  return wiring.shared('ring', () => new CachedRingSource(ringStore(wiring), wiring.clock, wiring.config.ringRefreshMs));
}

function apiKeyStore(wiring: Wiring): ApiKeyStore {
  return wiring.port<ApiKeyStore>(
    'controlTable',
    'read',
    'apiKeyStore',
    () => new DynamoApiKeyStore(documentClient(wiring), wiring.config.controlTable),
  );
}

export function apiKeyService(wiring: Wiring): ApiKeyService {
  return wiring.perHandler('apiKeys', () => {
    const keys = apiKeyStore(wiring);
    return new ApiKeyService({
      keys,
      ids: wiring.ids,
      clock: wiring.clock,
      onUseNotRecorded: (error) => wiring.logger.warn('the last use of an API key could not be recorded', { error }),
    });
  });
}

/** IAM principal mappings (docs/security.md, "IAM authentication"): the API handlers read them, the admin handler manages them. */
export function iamPrincipalService(wiring: Wiring): IamPrincipalService {
  return wiring.perHandler('iamPrincipals', () => {
    const mappings = wiring.port<PrincipalMappingStore>(
      'controlTable',
      'read',
      'principalStore',
      () => new DynamoPrincipalMappingStore(documentClient(wiring), wiring.config.controlTable),
    );
    return new IamPrincipalService({
      mappings,
      keys: apiKeyStore(wiring),
      namespaces: namespaceSettingsStore(wiring),
      clock: wiring.clock,
    });
  });
}

/** The audit trail of admin operations (docs/security.md, "Audit"). */
export function auditLog(wiring: Wiring): AuditLog {
  return wiring.port<AuditLog>(
    'controlTable',
    'readWrite',
    'auditLog',
    () => new DynamoAuditLog(documentClient(wiring), wiring.config.controlTable),
  );
}

export function namespaceSettingsStore(wiring: Wiring): NamespaceSettingsStore {
  return wiring.port<NamespaceSettingsStore>(
    'controlTable',
    'read',
    'namespaceStore',
    () => new DynamoNamespaceSettingsStore(documentClient(wiring), wiring.config.controlTable),
  );
}

/** Namespace settings as requests see them (the authorizer); setting a storage quota needs `namespaceAdmin` (wiring/quotas.ts). */
export function namespaceSettings(wiring: Wiring): NamespaceSettingsService {
  return wiring.perHandler(
    'namespaces',
    () => new NamespaceSettingsService(namespaceSettingsStore(wiring), wiring.config.namespaceRateDefaults),
  );
}

/** Shard health with a short per-instance cache: every read path asks for it. */
export function shardHealth(wiring: Wiring): CachedShardHealth {
  return wiring.port('controlTable', 'read', 'health', () => {
    const store = new DynamoShardHealthStore(documentClient(wiring), wiring.config.controlTable);
    // With automatic failover on, marking a shard unavailable also starts its failover (once per
    // instance: the cache skips a shard it already knows is unavailable).
    const failovers = automaticFailoverStarter(wiring);
    const health = failovers
      ? new FailoverOnUnavailable(store, ringSource(wiring), failovers, (error) =>
          wiring.logger.warn('automatic failover could not start', { error }),
        )
      : store;
    return new CachedShardHealth(health, wiring.clock, replicationDefaults.healthRefreshMs);
  });
}

/**
 * What starts a failover when this handler finds a shard down, with automatic failover on: the host's
 * starter (the local cloud), or Step Functions when the config names the failover state machine. The
 * Step Functions client is loaded on the first start only, so the handlers that never start one do not
 * pay for it at cold start.
 */
export function automaticFailoverStarter(wiring: Wiring): FailoverStarter | undefined {
  if (!wiring.config.autoFailover) return undefined;
  if (wiring.failovers) return wiring.failovers;
  if (!wiring.config.failoverStateMachineArn || (wiring.spec && !wiring.spec.startsAutomaticFailovers && !wiring.spec.startsFailovers)) {
    return undefined;
  }
  return {
    start: async (request) => {
      const { failoverStarter } = await import('./orchestrator');
      const starter = failoverStarter(wiring);
      return starter ? starter.start(request) : false;
    },
  };
}

/**
 * The health records themselves, uncached and with no automatic failover attached: what a failover's
 * own steps read and mark (built apart from shardHealth, which the local cloud decorates only once
 * the failover starter exists, after the failover handler is built).
 */
export function shardHealthRecords(wiring: Wiring): ShardHealthStore {
  return wiring.port(
    'controlTable',
    'readWrite',
    'healthRecords',
    () => new DynamoShardHealthStore(documentClient(wiring), wiring.config.controlTable),
  );
}

export function maintenanceState(wiring: Wiring): MaintenanceStateStore {
  return wiring.port(
    'controlTable',
    'readWrite',
    'maintenanceState',
    () => new DynamoMaintenanceStateStore(documentClient(wiring), wiring.config.controlTable),
  );
}

export function sweeperState(wiring: Wiring): SweeperStateStore {
  return wiring.port(
    'controlTable',
    'readWrite',
    'sweeperState',
    () => new DynamoSweeperStateStore(documentClient(wiring), wiring.config.controlTable),
  );
}

/** The failover records (GET /v1/admin/failovers, and the workflow's own reports). */
export function failoverLog(wiring: Wiring): FailoverLog {
  return wiring.port(
    'controlTable',
    'readWrite',
    'failoverLog',
    () => new DynamoFailoverLog(documentClient(wiring), wiring.config.controlTable),
  );
}
