// A capacity meter on a DynamoDB client: every request asks DynamoDB for its consumed capacity per
// table and index (`ReturnConsumedCapacity: INDEXES`), and the meter adds them up by what each table is
// (shards, transactions, control, hints). The capacity test and the benches read the same totals.
import type { ConsumedCapacity } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { namesFor } from '../../schemas/topology';

export type TableKind = 'shards' | 'txn' | 'control' | 'hints' | 'feed' | 'other';

/** Totals since the last reset: requests by command and table kind, units by table kind and index. */
export interface CapacityTotals {
  /** `PutItem shards` → requests. */
  requests: Record<string, number>;
  /** `shards` or `shards.byKey` → write units. */
  writeUnits: Record<string, number>;
  /** `shards` or `shards.byKey` → read units. */
  readUnits: Record<string, number>;
  /** `shards` → writes refused by their condition (billed by DynamoDB, which reports no units for them). */
  refusedWrites: Record<string, number>;
}

export interface CapacityMeter {
  /** Starts a new count (what was counted so far is dropped). */
  reset(): void;
  totals(): CapacityTotals;
  /** Resolves once no request was sent for `quietMs` (background work such as replication has settled). */
  quiet(quietMs: number, timeoutMs?: number): Promise<void>;
}

const readCommands = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);

/** What a table is, from its name (stage names as namesFor builds them). */
export function tableKindOf(stage: string): (tableName: string) => TableKind {
  const names = namesFor(stage);
  const shardPrefix = names.shardTable(0).replace(/0$/, '');
  return (tableName) => {
    if (tableName.startsWith(shardPrefix)) return 'shards';
    if (tableName === names.txnTable) return 'txn';
    if (tableName === names.controlTable) return 'control';
    if (tableName === names.hintsTable) return 'hints';
    if (tableName === names.feedTable) return 'feed';
    return 'other';
  };
}

const add = (into: Record<string, number>, name: string, amount: number | undefined) => {
  if (amount) into[name] = (into[name] ?? 0) + amount;
};

/**
 * Installs the meter on a client (the document client shares its base client's middleware stack).
 *
 * @example
 * const meter = meterCapacity(documentClient(cloud.wiring), 'local');
 * meter.reset(); await put(); await meter.quiet(500); meter.totals().writeUnits['shards.byKey'];
 */
export function meterCapacity(client: DynamoDBDocumentClient, stage: string): CapacityMeter {
  const kindOf = tableKindOf(stage);
  let totals: CapacityTotals = { requests: {}, writeUnits: {}, readUnits: {}, refusedWrites: {} };
  let lastRequestAt = performance.now();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      lastRequestAt = performance.now();
      const input = args.input as { TableName?: string; RequestItems?: object; TransactItems?: unknown[]; ReturnConsumedCapacity?: string };
      input.ReturnConsumedCapacity = 'INDEXES';
      const command = (context.commandName ?? 'Unknown').replace(/Command$/, '');
      // Counted before it is sent: a request refused by its condition is a request too. DynamoDB bills
      // a refused write but reports no units for it: it is counted apart, in refusedWrites.
      const tables = input.TableName ? [input.TableName] : Object.keys(input.RequestItems ?? {});
      // One request, counted once per kind of table it reaches (a batch may span several shard tables).
      for (const kind of new Set(tables.map(kindOf))) add(totals.requests, `${command} ${kind}`, 1);
      // DynamoDB Local reports no units for BatchGetItem: the keys are counted, the model prices them.
      for (const [table, request] of Object.entries(input.RequestItems ?? {}) as Array<[string, { Keys?: unknown[] }]>) {
        if (command === 'BatchGetItem') add(totals.requests, `${command} keys ${kindOf(table)}`, request.Keys?.length ?? 0);
      }
      if (input.TransactItems) {
        const kind = kindOf(transactTableOf(input.TransactItems));
        add(totals.requests, `${command} ${kind}`, 1);
        // DynamoDB Local's unit reports for transactions are not AWS's (2 per item per KB): the model prices the items.
        add(totals.requests, `${command} items ${kind}`, input.TransactItems.length);
      }
      const result = await next(args)
        .catch((error: unknown) => {
          if ((error as { name?: string }).name === 'ConditionalCheckFailedException') {
            for (const table of new Set(tables)) add(totals.refusedWrites, kindOf(table), 1);
          }
          throw error;
        })
        .finally(() => (lastRequestAt = performance.now()));
      const consumed = (result.output as { ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[] }).ConsumedCapacity;
      // DynamoDB Local reports BatchGetItem's units only sometimes: its keys are counted above instead.
      if (command === 'BatchGetItem') return result;
      const units = readCommands.has(command) ? totals.readUnits : totals.writeUnits;
      for (const entry of consumed === undefined ? [] : Array.isArray(consumed) ? consumed : [consumed]) {
        const kind = kindOf(entry.TableName ?? '');
        add(units, kind, entry.Table?.CapacityUnits ?? entry.Table?.WriteCapacityUnits ?? entry.Table?.ReadCapacityUnits);
        for (const [index, capacity] of Object.entries(entry.GlobalSecondaryIndexes ?? {})) {
          add(units, `${kind}.${index}`, capacity.CapacityUnits ?? capacity.WriteCapacityUnits ?? capacity.ReadCapacityUnits);
        }
      }
      return result;
    },
    { step: 'initialize', name: 'ringstoreCapacityMeter' },
  );
  return {
    reset: () => {
      totals = { requests: {}, writeUnits: {}, readUnits: {}, refusedWrites: {} };
    },
    totals: () => structuredClone(totals),
    quiet: async (quietMs, timeoutMs = 30_000) => {
      const deadline = performance.now() + timeoutMs;
      while (performance.now() - lastRequestAt < quietMs && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
  };
}

/** The table of a transaction's first item (every transaction Ringstore sends stays on one table). */
function transactTableOf(items: unknown[]): string {
  const first = items[0] as Record<string, { TableName?: string } | undefined> | undefined;
  return Object.values(first ?? {}).find((part) => part?.TableName)?.TableName ?? '';
}
