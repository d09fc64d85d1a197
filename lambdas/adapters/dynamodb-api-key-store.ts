// API keys in the control table: one item per key id, holding the sha256 of the secret, never the secret.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  Entity,
  type FormattedItem,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  item,
  string,
} from 'dynamodb-toolbox';
import { apiKeyPartition } from '../../schemas/topology';
import type { ApiKeyRecord, ApiKeyRotation, ApiKeyStore } from '../ports';
import { awsCall, conditionalWrite, isConditionalCheckFailure, translateAwsError } from './aws-errors';
import { controlEntityOptions, controlTable } from './dynamodb-control-table';

function apiKeyEntity(tableName: string, documentClient: DynamoDBDocumentClient) {
  return new Entity({
    name: 'apiKey',
    table: controlTable(tableName, documentClient),
    ...controlEntityOptions,
    schema: item({
      pk: string().key(),
      sk: string().key(),
      secretHash: string(),
      namespace: string(),
      role: string().enum('user', 'admin'),
      createdAt: string(),
      revokedAt: string().optional(),
      description: string().optional(),
      expiresAt: string().optional(),
      lastUsedAt: string().optional(),
      previousSecretHash: string().optional(),
      previousSecretExpiresAt: string().optional(),
      rotatedAt: string().optional(),
    }),
  });
}

type ApiKeyEntity = ReturnType<typeof apiKeyEntity>;

function toRecord(stored: FormattedItem<ApiKeyEntity>): ApiKeyRecord {
  return {
    keyId: stored.sk,
    secretHash: stored.secretHash,
    namespace: stored.namespace,
    role: stored.role,
    createdAt: stored.createdAt,
    ...(stored.revokedAt ? { revokedAt: stored.revokedAt } : {}),
    ...(stored.description ? { description: stored.description } : {}),
    ...(stored.expiresAt ? { expiresAt: stored.expiresAt } : {}),
    ...(stored.lastUsedAt ? { lastUsedAt: stored.lastUsedAt } : {}),
    ...(stored.previousSecretHash ? { previousSecretHash: stored.previousSecretHash } : {}),
    ...(stored.previousSecretExpiresAt ? { previousSecretExpiresAt: stored.previousSecretExpiresAt } : {}),
    ...(stored.rotatedAt ? { rotatedAt: stored.rotatedAt } : {}),
  };
}

export class DynamoApiKeyStore implements ApiKeyStore {
  private readonly apiKeys: ApiKeyEntity;

  constructor(documentClient: DynamoDBDocumentClient, tableName: string) {
    this.apiKeys = apiKeyEntity(tableName, documentClient);
  }

  async find(keyId: string): Promise<ApiKeyRecord | undefined> {
    const { Item } = await awsCall('API key read', () => this.apiKeys.build(GetItemCommand).key({ pk: apiKeyPartition, sk: keyId }).send());
    return Item ? toRecord(Item) : undefined;
  }

  async create(record: ApiKeyRecord): Promise<void> {
    const { keyId, ...rest } = record;
    await awsCall('API key creation', () =>
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
      return Attributes ? toRecord(Attributes) : undefined;
    } catch (error) {
      if (isConditionalCheckFailure(error)) return undefined;
      throw translateAwsError(error, 'API key revocation');
    }
  }

  async rotate(keyId: string, rotation: ApiKeyRotation, expectSecretHash: string): Promise<ApiKeyRecord | undefined> {
    try {
      const { Attributes } = await this.apiKeys
        .build(UpdateItemCommand)
        .item({ pk: apiKeyPartition, sk: keyId, ...rotation })
        .options({
          condition: {
            and: [
              { attr: 'secretHash', eq: expectSecretHash },
              { attr: 'revokedAt', exists: false },
            ],
          },
          returnValues: 'ALL_NEW',
        })
        .send();
      return Attributes ? toRecord(Attributes) : undefined;
    } catch (error) {
      if (isConditionalCheckFailure(error)) return undefined;
      throw translateAwsError(error, 'API key rotation');
    }
  }

  async recordUse(keyId: string, usedAt: string, notBefore: string): Promise<void> {
    // Conditional, so that the authorizers of a busy key write once a minute between them, not each;
    // ISO times of one format compare as strings. Only lastUsedAt is written (the IAM grant allows no other).
    await conditionalWrite('API key use', () =>
      this.apiKeys
        .build(UpdateItemCommand)
        .item({ pk: apiKeyPartition, sk: keyId, lastUsedAt: usedAt })
        .options({
          condition: {
            and: [
              { attr: 'pk', exists: true },
              {
                or: [
                  { attr: 'lastUsedAt', exists: false },
                  { attr: 'lastUsedAt', lte: notBefore },
                ],
              },
            ],
          },
        })
        .send(),
    );
  }

  async list(): Promise<ApiKeyRecord[]> {
    const records: ApiKeyRecord[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await awsCall('API key listing', () =>
        this.apiKeys.table
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
}
