// The control table: the ring record (with its fencing epoch) and the hashed API keys.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  Entity,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  Table,
  UpdateItemCommand,
  item,
  list,
  map,
  number,
  string,
} from 'dynamodb-toolbox';
import { Ring, type RingState } from '../core/ring';
import type {
  ApiKeyRecord, ApiKeyStore, Clock, Consistency, NamespaceSettings, NamespaceSettingsStore, RingSource, Role, ShardHealth,
  ShardHealthStatus, ShardHealthStore,
} from '../ports';
import { controlSchema } from '../../schemas/topology';
import { translateAwsError } from './aws-errors';

const ringKey = { pk: 'ring', sk: 'current' } as const;
const apiKeyPartition = 'apikeys';
const healthPartition = 'shardHealth';
const namespacePartition = 'namespace';
const maintenanceKey = { pk: 'maintenance', sk: 'state' } as const;
const sweeperKey = { pk: 'txnSweeper', sk: 'state' } as const;

function controlTable(name: string, documentClient: DynamoDBDocumentClient) {
  return new Table({
    name,
    partitionKey: { name: controlSchema.partitionKey, type: 'string' },
    sortKey: { name: controlSchema.sortKey, type: 'string' },
    documentClient,
  });
}

function ringEntity(table: ReturnType<typeof controlTable>) {
  return new Entity({
    name: 'ring',
    table,
    entityAttribute: false,
    timestamps: false,
    schema: item({
      pk: string().key(),
      sk: string().key(),
      epoch: number(),
      replicationFactor: number(),
      vnodesPerShard: number(),
      shards: list(map({ id: number(), table: string(), status: string().enum('active') })),
    }),
  });
}

function apiKeyEntity(table: ReturnType<typeof controlTable>) {
  return new Entity({
    name: 'apiKey',
    table,
    entityAttribute: false,
    timestamps: false,
    schema: item({
      pk: string().key(),
      sk: string().key(),
      secretHash: string(),
      namespace: string(),
      role: string().enum('user', 'admin'),
      createdAt: string(),
      revokedAt: string().optional(),
      description: string().optional(),
    }),
  });
}

function healthEntity(table: ReturnType<typeof controlTable>) {
  return new Entity({
    name: 'shardHealth',
    table,
    entityAttribute: false,
    timestamps: false,
    schema: item({
      pk: string().key(),
      sk: string().key(),
      status: string().enum('available', 'unavailable', 'recovering'),
      sinceMs: number(),
      reason: string().optional(),
    }),
  });
}

function namespaceEntity(table: ReturnType<typeof controlTable>) {
  return new Entity({
    name: 'namespaceSettings',
    table,
    entityAttribute: false,
    timestamps: false,
    schema: item({
      pk: string().key(),
      sk: string().key(),
      readConsistency: string().enum('eventual', 'strong'),
      writeConsistency: string().enum('eventual', 'strong'),
    }),
  });
}

function maintenanceEntity(table: ReturnType<typeof controlTable>) {
  return new Entity({
    name: 'maintenance',
    table,
    entityAttribute: false,
    timestamps: false,
    schema: item({ pk: string().key(), sk: string().key(), nextRange: number(), lastReport: string() }),
  });
}

/** Where the maintenance job resumes, and what its last run did (JSON, for the status page). */
export interface MaintenanceState {
  nextRange: number;
  lastReport: unknown;
}

function sweeperEntity(table: ReturnType<typeof controlTable>) {
  return new Entity({
    name: 'txnSweeper',
    table,
    entityAttribute: false,
    timestamps: false,
    schema: item({ pk: string().key(), sk: string().key(), sweptUntilMs: number() }),
  });
}

export class DynamoControlStore implements ApiKeyStore, ShardHealthStore, NamespaceSettingsStore {
  private readonly table: ReturnType<typeof controlTable>;
  private readonly rings: ReturnType<typeof ringEntity>;
  private readonly apiKeys: ReturnType<typeof apiKeyEntity>;
  private readonly healthRecords: ReturnType<typeof healthEntity>;
  private readonly namespaces: ReturnType<typeof namespaceEntity>;
  private readonly maintenance: ReturnType<typeof maintenanceEntity>;
  private readonly sweeper: ReturnType<typeof sweeperEntity>;

  constructor(documentClient: DynamoDBDocumentClient, tableName: string) {
    this.table = controlTable(tableName, documentClient);
    this.rings = ringEntity(this.table);
    this.apiKeys = apiKeyEntity(this.table);
    this.healthRecords = healthEntity(this.table);
    this.namespaces = namespaceEntity(this.table);
    this.maintenance = maintenanceEntity(this.table);
    this.sweeper = sweeperEntity(this.table);
  }

  /** Where the transaction sweeper resumes: deadlines before this are done. */
  async readSweeperState(): Promise<{ sweptUntilMs: number } | undefined> {
    const { Item } = await this.call('sweeper state read', () => this.sweeper.build(GetItemCommand).key(sweeperKey).send());
    return Item ? { sweptUntilMs: Item.sweptUntilMs } : undefined;
  }

  async saveSweeperState(state: { sweptUntilMs: number }): Promise<void> {
    await this.call('sweeper state write', () => this.sweeper.build(PutItemCommand).item({ ...sweeperKey, ...state }).send());
  }

  async all(): Promise<Map<string, ShardHealth>> {
    const { Items = [] } = await this.call('shard health read', () =>
      this.table.build(QueryCommand).entities(this.healthRecords).query({ partition: healthPartition }).options({ consistent: true }).send(),
    );
    return new Map(
      Items.map((raw) => [
        raw.sk,
        { table: raw.sk, status: raw.status as ShardHealthStatus, sinceMs: raw.sinceMs, ...(raw.reason ? { reason: raw.reason } : {}) },
      ]),
    );
  }

  async markUnavailable(table: string, reason: string, nowMs: number): Promise<void> {
    // Only a change of status is written, so a burst of failed writes costs one control-table write.
    await this.transition(table, { status: 'unavailable', sinceMs: nowMs, reason: reason.slice(0, 500) }, {
      attr: 'status', ne: 'unavailable',
    });
  }

  beginRecovery(table: string, nowMs: number): Promise<boolean> {
    return this.transition(table, { status: 'recovering', sinceMs: nowMs }, { attr: 'status', eq: 'unavailable' });
  }

  completeRecovery(table: string, nowMs: number): Promise<boolean> {
    return this.transition(table, { status: 'available', sinceMs: nowMs }, { attr: 'status', eq: 'recovering' });
  }

  private async transition(
    table: string,
    next: { status: ShardHealthStatus; sinceMs: number; reason?: string },
    condition: { attr: 'status'; eq: ShardHealthStatus } | { attr: 'status'; ne: ShardHealthStatus },
  ): Promise<boolean> {
    try {
      await this.healthRecords
        .build(PutItemCommand)
        .item({ pk: healthPartition, sk: table, ...next })
        .options({ condition: 'ne' in condition ? { or: [{ attr: 'pk', exists: false }, condition] } : condition })
        .send();
      return true;
    } catch (error) {
      if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return false;
      throw translateAwsError(error, `shard health update of ${table}`);
    }
  }

  async settingsOf(namespace: string): Promise<NamespaceSettings | undefined> {
    const { Item } = await this.call('namespace settings read', () =>
      this.namespaces.build(GetItemCommand).key({ pk: namespacePartition, sk: namespace }).send(),
    );
    if (!Item) return undefined;
    return {
      namespace,
      readConsistency: Item.readConsistency as Consistency,
      writeConsistency: Item.writeConsistency as Consistency,
    };
  }

  async saveSettings(settings: NamespaceSettings): Promise<void> {
    await this.call('namespace settings write', () =>
      this.namespaces
        .build(PutItemCommand)
        .item({
          pk: namespacePartition, sk: settings.namespace,
          readConsistency: settings.readConsistency, writeConsistency: settings.writeConsistency,
        })
        .send(),
    );
  }

  async readMaintenanceState(): Promise<MaintenanceState | undefined> {
    const { Item } = await this.call('maintenance state read', () => this.maintenance.build(GetItemCommand).key(maintenanceKey).send());
    return Item ? { nextRange: Item.nextRange, lastReport: JSON.parse(Item.lastReport) as unknown } : undefined;
  }

  async saveMaintenanceState(state: MaintenanceState): Promise<void> {
    await this.call('maintenance state write', () =>
      this.maintenance
        .build(PutItemCommand)
        .item({ ...maintenanceKey, nextRange: state.nextRange, lastReport: JSON.stringify(state.lastReport) })
        .send(),
    );
  }

  async readRing(): Promise<RingState | undefined> {
    const { Item } = await this.call('ring read', () =>
      this.rings.build(GetItemCommand).key(ringKey).options({ consistent: true }).send(),
    );
    if (!Item) return undefined;
    const { epoch, replicationFactor, vnodesPerShard, shards } = Item;
    return { epoch, replicationFactor, vnodesPerShard, shards: shards.map((s) => ({ ...s, status: 'active' as const })) };
  }

  /** Stores `initial` unless a ring exists; returns the ring in force either way. */
  async ensureRing(initial: RingState): Promise<RingState> {
    try {
      await this.rings
        .build(PutItemCommand)
        .item({ ...ringKey, ...initial })
        .options({ condition: { attr: 'pk', exists: false } })
        .send();
      return initial;
    } catch (error) {
      if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw translateAwsError(error, 'ring creation');
      const current = await this.readRing();
      if (!current) throw translateAwsError(error, 'ring creation');
      return current;
    }
  }

  async find(keyId: string): Promise<ApiKeyRecord | undefined> {
    const { Item } = await this.call('API key read', () =>
      this.apiKeys.build(GetItemCommand).key({ pk: apiKeyPartition, sk: keyId }).send(),
    );
    return Item ? toRecord(Item) : undefined;
  }

  async create(record: ApiKeyRecord): Promise<void> {
    const { keyId, ...rest } = record;
    await this.call('API key creation', () =>
      this.apiKeys
        .build(PutItemCommand)
        .item({ pk: apiKeyPartition, sk: keyId, ...rest })
        .options({ condition: { attr: 'pk', exists: false } })
        .send(),
    );
  }

  async revoke(keyId: string, revokedAt: string): Promise<ApiKeyRecord | undefined> {
    try {
      const { Attributes } = await this.apiKeys
        .build(UpdateItemCommand)
        .item({ pk: apiKeyPartition, sk: keyId, revokedAt })
        .options({ condition: { attr: 'pk', exists: true }, returnValues: 'ALL_NEW' })
        .send();
      return Attributes ? toRecord(Attributes as Parameters<typeof toRecord>[0]) : undefined;
    } catch (error) {
      if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return undefined;
      throw translateAwsError(error, 'API key revocation');
    }
  }

  async list(): Promise<ApiKeyRecord[]> {
    const records: ApiKeyRecord[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.call('API key listing', () =>
        this.table
          .build(QueryCommand)
          .entities(this.apiKeys)
          .query({ partition: apiKeyPartition })
          .options(startKey ? { exclusiveStartKey: startKey } : {})
          .send(),
      );
      records.push(...(page.Items ?? []).map(toRecord));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return records;
  }

  private async call<T>(what: string, action: () => Promise<T>): Promise<T> {
    try {
      return await action();
    } catch (error) {
      throw translateAwsError(error, what);
    }
  }
}

function toRecord(raw: {
  sk: string;
  secretHash: string;
  namespace: string;
  role: string;
  createdAt: string;
  revokedAt?: string;
  description?: string;
}): ApiKeyRecord {
  return {
    keyId: raw.sk,
    secretHash: raw.secretHash,
    namespace: raw.namespace,
    role: raw.role as Role,
    createdAt: raw.createdAt,
    ...(raw.revokedAt ? { revokedAt: raw.revokedAt } : {}),
    ...(raw.description ? { description: raw.description } : {}),
  };
}

/** Bounded staleness of a handler's ring: how long a cached ring is trusted before re-reading. */
export const ringRefreshMs = 5_000;

/**
 * The ring from the control table, cached per handler instance and re-read after `refreshMs`.
 * Concurrent callers share one in-flight read. (Fencing of writes by epoch arrives with failover.)
 */
export class CachedRingSource implements RingSource {
  private cached?: { ring: Ring; readAtMs: number };
  private inFlight?: Promise<Ring>;

  constructor(
    private readonly control: Pick<DynamoControlStore, 'readRing'>,
    private readonly clock: Clock,
    private readonly refreshMs = ringRefreshMs,
  ) {}

  async current(): Promise<Ring> {
    const now = this.clock.nowMs();
    if (this.cached && now - this.cached.readAtMs < this.refreshMs) return this.cached.ring;
    this.inFlight ??= this.load(now).finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async load(now: number): Promise<Ring> {
    const state = await this.control.readRing();
    if (!state) throw translateAwsError(new Error('no ring in the control table: run the bootstrap'), 'ring read');
    // A re-read never goes back in time: a lagging read cannot replace a newer epoch.
    if (this.cached && this.cached.ring.epoch > state.epoch) return this.cached.ring;
    const ring = this.cached?.ring.epoch === state.epoch ? this.cached.ring : new Ring(state);
    this.cached = { ring, readAtMs: now };
    return ring;
  }
}
