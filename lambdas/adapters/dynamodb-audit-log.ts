// The audit trail in the control table: one item per admin operation in the audit partition, sorted by
// time then request id, read newest first with a cursor.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Entity, type FormattedItem, PutItemCommand, QueryCommand, item, map, number, string } from 'dynamodb-toolbox';
import { auditPartition } from '../../schemas/topology';
import { RingstoreError } from '../core/errors';
import type { AuditEntry, AuditLog, AuditPage } from '../ports';
import { awsCall } from './aws-errors';
import { controlEntityOptions, controlTable } from './dynamodb-control-table';

function auditEntity(tableName: string, documentClient: DynamoDBDocumentClient) {
  return new Entity({
    name: 'auditEntry',
    table: controlTable(tableName, documentClient),
    ...controlEntityOptions,
    schema: item({
      pk: string().key(),
      sk: string().key(),
      at: string(),
      requestId: string(),
      actor: map({ keyId: string(), namespace: string(), role: string() }),
      operation: string(),
      targetJson: string(),
      request: string().optional(),
      outcome: string().enum('succeeded', 'failed'),
      status: number(),
      errorCode: string().optional(),
    }),
  });
}

type AuditEntity = ReturnType<typeof auditEntity>;

function toEntry(stored: FormattedItem<AuditEntity>): AuditEntry {
  return {
    at: stored.at,
    requestId: stored.requestId,
    actor: stored.actor,
    operation: stored.operation,
    target: JSON.parse(stored.targetJson) as Record<string, string>,
    ...(stored.request === undefined ? {} : { request: stored.request }),
    outcome: stored.outcome,
    status: stored.status,
    ...(stored.errorCode === undefined ? {} : { errorCode: stored.errorCode }),
  };
}

/** The cursor is the last sort key shown, opaque to clients. */
const encodeCursor = (sk: string) => Buffer.from(sk, 'utf8').toString('base64url');

function decodeCursor(cursor: string): string {
  const sk = Buffer.from(cursor, 'base64url').toString('utf8');
  // A sort key starts with an ISO time: anything else was not made here.
  if (!/^\d{4}-\d{2}-\d{2}T/.test(sk)) {
    throw new RingstoreError('request.invalid', 'query cursor: not a cursor of this listing', {
      details: { field: 'cursor', in: 'query' },
    });
  }
  return sk;
}

export class DynamoAuditLog implements AuditLog {
  private readonly entries: AuditEntity;

  constructor(documentClient: DynamoDBDocumentClient, tableName: string) {
    this.entries = auditEntity(tableName, documentClient);
  }

  async record(entry: AuditEntry): Promise<void> {
    const { target, ...rest } = entry;
    await awsCall('audit write', () =>
      this.entries
        .build(PutItemCommand)
        .item({ pk: auditPartition, sk: `${entry.at}#${entry.requestId}`, ...rest, targetJson: JSON.stringify(target) })
        .send(),
    );
  }

  async list(query: { limit: number; cursor?: string }): Promise<AuditPage> {
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const page = await awsCall('audit listing', () =>
      this.entries.table
        .build(QueryCommand)
        .entities(this.entries)
        .query({ partition: auditPartition })
        .options({
          reverse: true,
          limit: query.limit,
          consistent: true,
          ...(after === undefined ? {} : { exclusiveStartKey: { pk: auditPartition, sk: after } }),
        })
        .send(),
    );
    const entries = (page.Items ?? []).map(toEntry);
    const last: unknown = page.LastEvaluatedKey?.sk;
    return typeof last === 'string' ? { entries, cursor: encodeCursor(last) } : { entries };
  }
}
