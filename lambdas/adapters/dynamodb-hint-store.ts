// HintStore on the hints table: one partition per replica table, sorted by key then zero-padded version,
// so a replica's hints come back per key in version order (hinted handoff, docs/consistency.md).
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DeleteItemCommand, Entity, PutItemCommand, QueryCommand, Table, item, number, string } from 'dynamodb-toolbox';
import type { StoredItem, Hint, HintStore } from '../ports';
import { hintsSchema } from '../../schemas/topology';
import { awsCall } from './aws-errors';
import { storedItemAttributes, toCopiedAttributes, toStoredItem } from './dynamodb-item-codec';

/** Hints counted per target by a status query before it answers "at least this many". */
export const hintCountMax = 10_000;

function hintsTable(name: string, documentClient: DynamoDBDocumentClient) {
  return new Table({
    name,
    partitionKey: hintsSchema.partitionKey,
    sortKey: hintsSchema.sortKey,
    documentClient,
  });
}

function hintEntity(table: ReturnType<typeof hintsTable>) {
  return new Entity({
    name: 'hint',
    table,
    entityAttribute: false,
    timestamps: false,
    schema: item({ target: string().key(), sk: string().key(), createdAtMs: number(), ...storedItemAttributes() }),
  });
}

/** Versions sort as text only when they have the same width. */
function sortKeyOf(item: Pick<StoredItem, 'namespace' | 'key' | 'version'>): string {
  return `${item.namespace}#${item.key}#${String(item.version).padStart(15, '0')}`;
}

export class DynamoHintStore implements HintStore {
  private readonly table: ReturnType<typeof hintsTable>;
  private readonly hints: ReturnType<typeof hintEntity>;

  constructor(documentClient: DynamoDBDocumentClient, tableName: string) {
    this.table = hintsTable(tableName, documentClient);
    this.hints = hintEntity(this.table);
  }

  async add(hint: Hint): Promise<void> {
    await awsCall('hint write', () =>
      this.hints
        .build(PutItemCommand)
        .item({ target: hint.target, sk: sortKeyOf(hint.item), createdAtMs: hint.createdAtMs, ...toCopiedAttributes(hint.item) })
        .send(),
    );
  }

  async list(target: string, limit: number): Promise<Hint[]> {
    const { Items = [] } = await awsCall('hint listing', () =>
      this.table
        .build(QueryCommand)
        .entities(this.hints)
        .query({ partition: target })
        // Strongly consistent: a replay must see every hint written before it started.
        .options({ limit, consistent: true })
        .send(),
    );
    return Items.map(({ target: hintTarget, sk: _sk, createdAtMs, ...stored }) => ({
      target: hintTarget,
      createdAtMs,
      item: toStoredItem(stored),
    }));
  }

  async remove(hint: Hint): Promise<void> {
    await awsCall('hint removal', () =>
      this.hints
        .build(DeleteItemCommand)
        .key({ target: hint.target, sk: sortKeyOf(hint.item) })
        .send(),
    );
  }

  async count(target: string): Promise<number> {
    let total = 0;
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await awsCall('hint count', () =>
        this.table
          .build(QueryCommand)
          .query({ partition: target })
          .options({ select: 'COUNT', ...(startKey ? { exclusiveStartKey: startKey } : {}) })
          .send(),
      );
      total += page.Count ?? 0;
      startKey = page.LastEvaluatedKey;
    } while (startKey && total < hintCountMax);
    return total;
  }
}
