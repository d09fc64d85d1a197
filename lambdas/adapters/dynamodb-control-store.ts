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
import type { ApiKeyRecord, ApiKeyStore, Clock, RingSource, Role } from '../ports';
import { controlSchema } from '../topology';
import { translateAwsError } from './aws-errors';

const ringKey = { pk: 'ring', sk: 'current' } as const;
const apiKeyPartition = 'apikeys';

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

export class DynamoControlStore implements ApiKeyStore {
  private readonly table: ReturnType<typeof controlTable>;
  private readonly rings: ReturnType<typeof ringEntity>;
  private readonly apiKeys: ReturnType<typeof apiKeyEntity>;

  constructor(documentClient: DynamoDBDocumentClient, tableName: string) {
    this.table = controlTable(tableName, documentClient);
    this.rings = ringEntity(this.table);
    this.apiKeys = apiKeyEntity(this.table);
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
