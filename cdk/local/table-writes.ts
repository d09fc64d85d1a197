// The writes the local cloud's own clients make, by table: what lets its stream pollers keep Lambda's pace of
// polls while a table is being written and slow down on a quiet one (stream-poller.ts, "quiet streams").
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** The commands that write items (the document client's as well as the base client's names). */
const writeCommand =
  /^(PutItem|UpdateItem|DeleteItem|BatchWriteItem|TransactWriteItems|Put|Update|Delete|BatchWrite|TransactWrite)Command$/;

interface WriteInput {
  TableName?: string;
  RequestItems?: Record<string, unknown>;
  TransactItems?: Partial<Record<'Put' | 'Update' | 'Delete' | 'ConditionCheck', { TableName?: string }>>[];
}

/** The tables a write request names (a batch or a transaction may name several). */
export function tablesWrittenBy(input: WriteInput): string[] {
  const tables = new Set<string>();
  if (input.TableName) tables.add(input.TableName);
  for (const table of Object.keys(input.RequestItems ?? {})) tables.add(table);
  for (const item of input.TransactItems ?? []) {
    for (const action of Object.values(item)) if (action.TableName) tables.add(action.TableName);
  }
  return [...tables];
}

/**
 * Counts, per table, the writes the watched clients made: a generation number that grows with each, and the
 * listeners to tell. A write is counted once it ended, failed or not (a write whose answer was lost may have
 * landed; a needless poll is all that over-counting costs).
 *
 * @example
 * const writes = new TableWrites();
 * writes.watch(documentClient(wiring));
 * const before = writes.generationOf('shard-0');  // ... later: writes.generationOf('shard-0') !== before
 */
export class TableWrites {
  readonly #generations = new Map<string, number>();
  readonly #listeners = new Map<string, Set<() => void>>();

  /** Counts the writes `client` makes from now on (a document client shares its base client's middleware stack). */
  watch(client: DynamoDBClient | DynamoDBDocumentClient): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        try {
          return await next(args);
        } finally {
          if (writeCommand.test(context.commandName ?? ''))
            for (const table of tablesWrittenBy(args.input as WriteInput)) this.#wrote(table);
        }
      },
      { step: 'initialize', name: 'ringstoreLocalTableWrites' },
    );
  }

  generationOf(table: string): number {
    return this.#generations.get(table) ?? 0;
  }

  /** Calls `listener` at the next write to `table`, once; answers a function that cancels it. */
  onNextWrite(table: string, listener: () => void): () => void {
    let listeners = this.#listeners.get(table);
    if (!listeners) this.#listeners.set(table, (listeners = new Set()));
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  #wrote(table: string): void {
    this.#generations.set(table, this.generationOf(table) + 1);
    const listeners = this.#listeners.get(table);
    if (!listeners || listeners.size === 0) return;
    this.#listeners.delete(table);
    for (const listener of listeners) listener();
  }
}
