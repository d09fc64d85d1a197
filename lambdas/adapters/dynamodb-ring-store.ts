// The ring record of the control table (one item, fenced by its epoch).
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Entity, GetItemCommand, PutItemCommand, boolean, item, list, map, number, string } from 'dynamodb-toolbox';
import type { RingState, RingStore } from '../ports';
import { invariant } from '../core/errors';
import { awsCall, conditionalWrite } from './aws-errors';
import { controlEntityOptions, controlTable } from './dynamodb-control-table';

const ringKey = { pk: 'ring', sk: 'current' } as const;

function ringEntity(tableName: string, documentClient: DynamoDBDocumentClient) {
  return new Entity({
    name: 'ring',
    table: controlTable(tableName, documentClient),
    ...controlEntityOptions,
    schema: item({
      pk: string().key(),
      sk: string().key(),
      epoch: number(),
      replicationFactor: number(),
      vnodesPerShard: number(),
      shards: list(map({ id: number(), table: string(), status: string().enum('active', 'joining', 'leaving') })),
      owners: list(map({ end: number(), owner: number() })).optional(),
      fenced: list(number()).optional(),
      fencedAt: list(map({ end: number(), epoch: number() })).optional(),
      changedBy: string().optional(),
      rejoining: list(map({ shard: number(), failover: string(), ends: list(number()) })).optional(),
      addedReplicas: list(map({ end: number(), shard: number(), failover: string(), ready: boolean() })).optional(),
      rebalance: string().optional(),
      moves: list(map({ end: number(), phase: string().enum('copying', 'moved') })).optional(),
    }),
  });
}

export class DynamoRingStore implements RingStore {
  private readonly rings: ReturnType<typeof ringEntity>;

  constructor(documentClient: DynamoDBDocumentClient, tableName: string) {
    this.rings = ringEntity(tableName, documentClient);
  }

  async readRing(): Promise<RingState | undefined> {
    const { Item } = await awsCall('ring read', () => this.rings.build(GetItemCommand).key(ringKey).options({ consistent: true }).send());
    if (!Item) return undefined;
    const {
      epoch,
      replicationFactor,
      vnodesPerShard,
      shards,
      owners,
      fenced,
      fencedAt,
      changedBy,
      rejoining,
      addedReplicas,
      rebalance,
      moves,
    } = Item;
    return {
      epoch,
      replicationFactor,
      vnodesPerShard,
      shards,
      ...(owners && owners.length > 0 ? { owners } : {}),
      ...(fenced && fenced.length > 0 ? { fenced } : {}),
      ...(fencedAt && fencedAt.length > 0 ? { fencedAt } : {}),
      ...(changedBy === undefined ? {} : { changedBy }),
      ...(rejoining && rejoining.length > 0 ? { rejoining } : {}),
      ...(addedReplicas && addedReplicas.length > 0 ? { addedReplicas } : {}),
      ...(rebalance === undefined ? {} : { rebalance }),
      ...(moves && moves.length > 0 ? { moves } : {}),
    };
  }

  async publishRing(next: RingState): Promise<boolean> {
    invariant(Number.isInteger(next.epoch) && next.epoch > 1, `a published ring follows another (epoch ${next.epoch})`);
    return conditionalWrite(`ring publication at epoch ${next.epoch}`, () =>
      this.rings
        .build(PutItemCommand)
        .item({ ...ringKey, ...next })
        .options({ condition: { attr: 'epoch', eq: next.epoch - 1 } })
        .send(),
    );
  }

  async ensureRing(initial: RingState): Promise<RingState> {
    const created = await conditionalWrite('ring creation', () =>
      this.rings
        .build(PutItemCommand)
        .item({ ...ringKey, ...initial })
        .options({ condition: { attr: 'pk', exists: false } })
        .send(),
    );
    if (created) return initial;
    const current = await this.readRing();
    // The condition failed because a ring exists; it cannot have vanished since, short of a deleted table.
    if (!current) throw new Error('ring creation failed: the ring record exists but could not be read back');
    return current;
  }
}
