// IAM principal mappings in the control table: one item per principal, keyed by its match ARN (no path).
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  DeleteItemCommand,
  Entity,
  type FormattedItem,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  item,
  string,
} from 'dynamodb-toolbox';
import { iamPrincipalPartition } from '../../schemas/topology';
import type { PrincipalMapping, PrincipalMappingStore } from '../ports';
import { awsCall, conditionalWrite } from './aws-errors';
import { controlEntityOptions, controlTable } from './dynamodb-control-table';

function principalEntity(tableName: string, documentClient: DynamoDBDocumentClient) {
  return new Entity({
    name: 'iamPrincipal',
    table: controlTable(tableName, documentClient),
    ...controlEntityOptions,
    schema: item({
      pk: string().key(),
      sk: string().key(),
      principalArn: string(),
      namespace: string(),
      role: string().enum('user', 'admin'),
      createdAt: string(),
      description: string().optional(),
    }),
  });
}

type PrincipalEntity = ReturnType<typeof principalEntity>;

function toMapping(stored: FormattedItem<PrincipalEntity>): PrincipalMapping {
  return {
    principalArn: stored.principalArn,
    matchArn: stored.sk,
    namespace: stored.namespace,
    role: stored.role,
    createdAt: stored.createdAt,
    ...(stored.description ? { description: stored.description } : {}),
  };
}

export class DynamoPrincipalMappingStore implements PrincipalMappingStore {
  private readonly principals: PrincipalEntity;

  constructor(documentClient: DynamoDBDocumentClient, tableName: string) {
    this.principals = principalEntity(tableName, documentClient);
  }

  async find(matchArn: string): Promise<PrincipalMapping | undefined> {
    const { Item } = await awsCall('IAM principal read', () =>
      this.principals.build(GetItemCommand).key({ pk: iamPrincipalPartition, sk: matchArn }).send(),
    );
    return Item ? toMapping(Item) : undefined;
  }

  create(mapping: PrincipalMapping): Promise<boolean> {
    const { matchArn, ...rest } = mapping;
    return conditionalWrite('IAM principal creation', () =>
      this.principals
        .build(PutItemCommand)
        .item({ pk: iamPrincipalPartition, sk: matchArn, ...rest })
        .options({ condition: { attr: 'pk', exists: false } })
        .send(),
    );
  }

  async delete(matchArn: string): Promise<PrincipalMapping | undefined> {
    const { Attributes } = await awsCall('IAM principal deletion', () =>
      this.principals.build(DeleteItemCommand).key({ pk: iamPrincipalPartition, sk: matchArn }).options({ returnValues: 'ALL_OLD' }).send(),
    );
    return Attributes ? toMapping(Attributes) : undefined;
  }

  async list(limit: number): Promise<PrincipalMapping[]> {
    const mappings: PrincipalMapping[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await awsCall('IAM principal listing', () =>
        this.principals.table
          .build(QueryCommand)
          .entities(this.principals)
          .query({ partition: iamPrincipalPartition })
          .options({ limit: limit - mappings.length, ...(startKey ? { exclusiveStartKey: startKey } : {}) })
          .send(),
      );
      mappings.push(...(page.Items ?? []).map(toMapping));
      startKey = page.LastEvaluatedKey;
    } while (startKey && mappings.length < limit);
    return mappings;
  }
}
