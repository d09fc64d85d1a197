// What each operation costs DynamoDB, as the capacity test (test/capacity) counts it on DynamoDB Local
// through the REST API: requests by command and table kind, and write and read units by table and index.
// RF 3, 4 shards, 100-byte values, no value cache. The capacity model (docs/capacity.md) and the
// calculator (`npm run capacity`) are built on these numbers; the test keeps them true.

export interface OperationCost {
  /** `PutItem shards` → requests per operation. */
  requests: Record<string, number>;
  /** `shards` (the base tables) or `shards.byKey` (an index) → write units per operation. */
  writeUnits: Record<string, number>;
  readUnits: Record<string, number>;
  /** `shards` → writes refused by their condition per operation (billed as a write of the item's size). */
  refusedWrites: Record<string, number>;
}

/** The replication factor the costs were counted at (the model scales replica copies from it). */
export const measuredReplicationFactor = 3;

export const operationNames = [
  'put eventual, new key',
  'put eventual, overwrite',
  'put strong, new key',
  'put strong, overwrite',
  'put eventual, If-Match',
  'get eventual',
  'get strong',
  'delete eventual',
  'delete strong',
  'increment eventual',
  'increment strong',
  'list a page of 40 keys',
  'txn 3 puts on 1 shard',
  'txn 3 puts on 3 shards',
  'volume write 4 KiB, aligned',
  'volume write 4 KiB, unaligned',
  'volume read 4 KiB, aligned',
  'volume read 4 KiB, unaligned',
  'volume write 4 KiB, first after a snapshot',
  'volume snapshot read 4 KiB, changed since',
  'volume clone read 4 KiB, inherited',
] as const;

export type OperationName = (typeof operationNames)[number];

export const operationCosts: Record<OperationName, OperationCost> = {
  'put eventual, new key': {
    requests: { 'BatchWriteItem feed': 1, 'PutItem shards': 2, 'UpdateItem shards': 1 },
    writeUnits: { feed: 1, shards: 3, 'shards.byKey': 1, 'shards.byToken': 3 },
    readUnits: {},
    refusedWrites: {},
  },
  'put eventual, overwrite': {
    requests: { 'BatchWriteItem feed': 1, 'PutItem shards': 2, 'UpdateItem shards': 1 },
    writeUnits: { feed: 1, shards: 3, 'shards.byKey': 1, 'shards.byToken': 3 },
    readUnits: {},
    refusedWrites: {},
  },
  'put strong, new key': {
    requests: { 'BatchWriteItem feed': 1, 'PutItem shards': 4, 'UpdateItem shards': 1 },
    writeUnits: { feed: 1, shards: 3, 'shards.byKey': 1, 'shards.byToken': 3 },
    readUnits: {},
    refusedWrites: { shards: 2 },
  },
  'put strong, overwrite': {
    requests: { 'BatchWriteItem feed': 1, 'PutItem shards': 4, 'UpdateItem shards': 1 },
    writeUnits: { feed: 1, shards: 3, 'shards.byKey': 1, 'shards.byToken': 3 },
    readUnits: {},
    refusedWrites: { shards: 2 },
  },
  'put eventual, If-Match': {
    requests: { 'BatchWriteItem feed': 1, 'PutItem shards': 2, 'UpdateItem shards': 1 },
    writeUnits: { feed: 1, shards: 3, 'shards.byKey': 1, 'shards.byToken': 3 },
    readUnits: {},
    refusedWrites: {},
  },
  'get eventual': { requests: { 'GetItem shards': 1 }, writeUnits: {}, readUnits: { shards: 0.5 }, refusedWrites: {} },
  'get strong': { requests: { 'GetItem shards': 1 }, writeUnits: {}, readUnits: { shards: 1 }, refusedWrites: {} },
  'delete eventual': {
    requests: { 'BatchWriteItem feed': 1, 'PutItem shards': 2, 'UpdateItem shards': 1 },
    writeUnits: { feed: 1, shards: 3, 'shards.byKey': 1, 'shards.byToken': 3 },
    readUnits: {},
    refusedWrites: {},
  },
  'delete strong': {
    requests: { 'BatchWriteItem feed': 1, 'PutItem shards': 4, 'UpdateItem shards': 1 },
    writeUnits: { feed: 1, shards: 3, 'shards.byKey': 1, 'shards.byToken': 3 },
    readUnits: {},
    refusedWrites: { shards: 2 },
  },
  'increment eventual': {
    requests: { 'BatchWriteItem feed': 1, 'GetItem shards': 1, 'PutItem shards': 2, 'UpdateItem shards': 1 },
    writeUnits: { feed: 1, shards: 3, 'shards.byKey': 1, 'shards.byToken': 3 },
    readUnits: { shards: 1 },
    refusedWrites: {},
  },
  'increment strong': {
    requests: { 'BatchWriteItem feed': 1, 'GetItem shards': 1, 'PutItem shards': 4, 'UpdateItem shards': 1 },
    writeUnits: { feed: 1, shards: 3, 'shards.byKey': 1, 'shards.byToken': 3 },
    readUnits: { shards: 1 },
    refusedWrites: { shards: 2 },
  },
  'list a page of 40 keys': { requests: { 'Query shards': 32 }, writeUnits: {}, readUnits: { 'shards.byKey': 11.42 }, refusedWrites: {} },
  'txn 3 puts on 1 shard': {
    requests: {
      'BatchWriteItem feed': 1,
      'BatchGetItem keys shards': 3,
      'BatchGetItem shards': 1,
      'PutItem shards': 6,
      'TransactWriteItems items shards': 3,
      'TransactWriteItems shards': 1,
    },
    writeUnits: { feed: 3, shards: 10, 'shards.byKey': 4, 'shards.byToken': 10 },
    readUnits: {},
    refusedWrites: {},
  },
  'txn 3 puts on 3 shards': {
    requests: {
      'BatchWriteItem feed': 3,
      'BatchGetItem keys shards': 3,
      'BatchGetItem shards': 1,
      'PutItem shards': 6,
      'PutItem txn': 1,
      'UpdateItem shards': 6,
      'UpdateItem txn': 1,
    },
    writeUnits: { feed: 3, shards: 12, 'shards.byKey': 3, 'shards.byToken': 12, txn: 3, 'txn.byDeadline': 1 },
    readUnits: {},
    refusedWrites: {},
  },
  'volume write 4 KiB, aligned': {
    requests: {
      'BatchGetItem keys shards': 2,
      'BatchGetItem shards': 1,
      'GetItem shards': 1,
      'PutItem shards': 4,
      'TransactWriteItems items shards': 2,
      'TransactWriteItems shards': 1,
    },
    writeUnits: { shards: 34, 'shards.byKey': 4, 'shards.byToken': 6 },
    readUnits: { shards: 1 },
    refusedWrites: { shards: 2 },
  },
  'volume write 4 KiB, unaligned': {
    requests: {
      'BatchGetItem keys shards': 3,
      'BatchGetItem shards': 1,
      'GetItem shards': 1,
      'PutItem shards': 8,
      'TransactGetItems items shards': 2,
      'TransactGetItems shards': 1,
      'TransactWriteItems items shards': 3,
      'TransactWriteItems shards': 1,
    },
    writeUnits: { shards: 44, 'shards.byKey': 4, 'shards.byToken': 8 },
    readUnits: { shards: 9 },
    refusedWrites: { shards: 4 },
  },
  'volume read 4 KiB, aligned': {
    requests: { 'BatchGetItem keys shards': 1, 'BatchGetItem shards': 1, 'GetItem shards': 1 },
    writeUnits: {},
    readUnits: { shards: 1 },
    refusedWrites: {},
  },
  'volume read 4 KiB, unaligned': {
    requests: { 'GetItem shards': 1, 'TransactGetItems items shards': 2, 'TransactGetItems shards': 1 },
    writeUnits: {},
    readUnits: { shards: 9 },
    refusedWrites: {},
  },
  // The record's read; the block's (its copy index is in its content type); the fence's once per generation (so 1 in 6
  // here: each of the six writes follows its own snapshot's preparation, all six before the first); the copy's
  // transaction; the change's.
  'volume write 4 KiB, first after a snapshot': {
    requests: {
      'BatchGetItem keys shards': 5,
      'BatchGetItem shards': 3,
      'GetItem shards': 1.17,
      'PutItem shards': 8,
      'TransactWriteItems items shards': 4,
      'TransactWriteItems shards': 2,
    },
    writeUnits: { shards: 68, 'shards.byKey': 8, 'shards.byToken': 12 },
    readUnits: { shards: 1.17 },
    refusedWrites: { shards: 4 },
  },
  'volume snapshot read 4 KiB, changed since': {
    requests: { 'BatchGetItem keys shards': 2, 'BatchGetItem shards': 2, 'GetItem shards': 1 },
    writeUnits: {},
    readUnits: { shards: 1 },
    refusedWrites: {},
  },
  // The clone's record and its block (absent: never written), then its origin's record and the block as the snapshot
  // holds it (unchanged since: the block itself).
  'volume clone read 4 KiB, inherited': {
    requests: { 'BatchGetItem keys shards': 2, 'BatchGetItem shards': 2, 'GetItem shards': 2 },
    writeUnits: {},
    readUnits: { shards: 2 },
    refusedWrites: {},
  },
};

/** The measured costs as this module's source, for a change that moves them. */
export function costsAsSource(measured: ReadonlyMap<OperationName, OperationCost>): string {
  const lines = [...measured].map(([name, cost]) => `  '${name}': ${JSON.stringify(cost)},`);
  return ['export const operationCosts: Record<OperationName, OperationCost> = {', ...lines, '};'].join('\n');
}
