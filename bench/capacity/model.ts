// The capacity model of one deployment (docs/capacity.md): for a ring size, replication factor and
// traffic mix, the load on every limit AWS puts in the way (partitions, table quotas, Lambda
// concurrency, API Gateway's rate, Express workflow starts), which one is reached first and at what
// rate, and the cost per million operations at on-demand prices. Pure: `npm run capacity` prints it.
//
// The DynamoDB units per operation are the ones the capacity test counts (operation-costs.ts); the
// service limits and prices are AWS's published defaults (us-east-1, November 2026), and the Lambda
// durations are assumptions a user replaces with their own CloudWatch figures.
import { handlers, replicationDefaults, shardSchema, txnSchema, watchDefaults } from '../../schemas/topology';
import { type OperationCost, type OperationName, measuredReplicationFactor, operationCosts } from './operation-costs';

/** AWS's default limits that bound one deployment; every one can be raised (docs/capacity.md says how). */
export const awsLimits = {
  /** Write units per second one DynamoDB partition takes (of a table or an index). */
  partitionWriteUnits: 1_000,
  partitionReadUnits: 3_000,
  /** On-demand throughput per table (each index has the same), an adjustable account quota. */
  tableWriteUnits: 40_000,
  tableReadUnits: 40_000,
  /** Concurrent Lambda executions per account and region. */
  lambdaConcurrency: 1_000,
  /** API Gateway requests per second per account and region (REST APIs, steady state). */
  apiRequestsPerSecond: 10_000,
  /** Express workflow starts per second (StartExecution and StartSyncExecution, refill rate). */
  expressStartsPerSecond: 6_000,
} as const;

/** On-demand prices, US dollars. */
export const prices = {
  perMillionWriteUnits: 0.625,
  perMillionReadUnits: 0.125,
  perMillionApiRequests: 3.5,
  perMillionLambdaRequests: 0.2,
  /** Per GB-second, arm64. */
  lambdaGbSecond: 0.0000133334,
  perMillionExpressRequests: 1.0,
  /** Express duration per GB-second (billed in 100 ms, 64 MB minimum). */
  expressGbSecond: 0.00001667,
  /** ElastiCache Serverless (Valkey): per million ECPUs (a GET or SET of up to 1 KB is one). */
  perMillionCacheEcpus: 0.0023,
} as const;

/** The operations of a traffic mix, each measured as an operation of the capacity test. */
export const mixOperations = {
  getEventual: 'get eventual',
  getStrong: 'get strong',
  putEventual: 'put eventual, overwrite',
  putStrong: 'put strong, overwrite',
  deleteEventual: 'delete eventual',
  list: 'list a page of 40 keys',
  txn1Shard: 'txn 3 puts on 1 shard',
  txn3Shards: 'txn 3 puts on 3 shards',
} as const satisfies Record<string, OperationName>;

export type MixOperation = keyof typeof mixOperations;

/** How long each Lambda invocation of an operation runs on AWS, ms (assumptions; replace with your p50s). */
export const assumedDurationsMs: Record<MixOperation, number> = {
  getEventual: 8,
  getStrong: 10,
  putEventual: 15,
  putStrong: 30,
  deleteEventual: 15,
  list: 60,
  // One shard: a batch read and one atomic write in the handler. Several: the handler waits for the
  // whole synchronous execution, whose steps each run about as long as a PUT.
  txn1Shard: 25,
  txn3Shards: 100,
};
const txnStepDurationMs = 15;
/** Replicator CPU per stream record (two conditional PutItems in parallel), ms. */
const replicatorMsPerRecord = 6;

export interface Deployment {
  shards: number;
  replicationFactor: number;
}

export interface Traffic {
  opsPerSecond: number;
  /** Share of each operation; normalised to 1. */
  mix: Partial<Record<MixOperation, number>>;
  /** Bytes per value (the item is about 200 bytes more). */
  valueBytes: number;
  /** Share of the traffic that the busiest namespace sends (1: a single tenant). */
  busiestNamespaceShare: number;
  /** Share of eventual GETs the value cache answers (no DynamoDB read). */
  cacheHitRatio: number;
}

export interface LimitLoad {
  limit: string;
  /** Load at the given traffic, in the limit's unit. */
  load: number;
  capacity: number;
  unit: string;
  /** What a user changes to go past it. */
  remedy: string;
}

export interface CapacityReport {
  limits: Array<LimitLoad & { utilisation: number; ceilingOpsPerSecond: number }>;
  bottleneck: LimitLoad & { utilisation: number; ceilingOpsPerSecond: number };
  perOperation: Array<{ operation: MixOperation; ringstoreUsdPerMillion: number; dynamodbUsdPerMillion: number; ratio: number }>;
  mixUsdPerMillion: number;
}

const sum = (values: Iterable<number>) => [...values].reduce((total, value) => total + value, 0);

/** Item bytes → write units per copy (1 KB each) and read units per strong read (4 KB each). */
function sizeFactors(valueBytes: number) {
  const itemBytes = Math.min(valueBytes, 350_000) + 200;
  return { write: Math.ceil(itemBytes / 1024), read: Math.ceil(itemBytes / 4096) };
}

/**
 * An operation's DynamoDB units at this value size and replication factor: base-table units scale with
 * the item, index entries do not; replica copies (the successful replica PutItems) scale with RF - 1.
 */
export function unitsPerOperation(cost: OperationCost, valueBytes: number, replicationFactor: number) {
  const factors = sizeFactors(valueBytes);
  const copies = (replicationFactor - 1) / (measuredReplicationFactor - 1);
  const refusedPerCopy = cost.refusedWrites.shards ?? 0;
  // Each successful replica PutItem wrote one base item and one token index entry.
  const replicaPuts = (cost.requests['PutItem shards'] ?? 0) - refusedPerCopy;
  // A transactional write is billed two units per item per KB on the table; its index entries are
  // priced as ordinary writes (one each). DynamoDB Local reports other figures for transactions.
  const atomicItems = cost.requests['TransactWriteItems items shards'] ?? 0;
  const ownerBase = atomicItems > 0 ? 2 * atomicItems : (cost.writeUnits.shards ?? 0) - replicaPuts;
  const ownerToken = atomicItems > 0 ? atomicItems : (cost.writeUnits['shards.byToken'] ?? 0) - replicaPuts;
  const shardTableWrites = (ownerBase + replicaPuts * copies + refusedPerCopy * copies) * factors.write;
  const tokenIndexWrites = ownerToken + replicaPuts * copies;
  const listingIndexWrites = atomicItems > 0 ? atomicItems : (cost.writeUnits['shards.byKey'] ?? 0);
  const txnRecordWrites = cost.writeUnits.txn ?? 0;
  const deadlineIndexWrites = cost.writeUnits['txn.byDeadline'] ?? 0;
  // One entry per owner write, its value inline only when small: one unit whatever the value's size.
  const feedWrites = cost.writeUnits.feed ?? 0;
  // Consistent batch reads (one unit per 4 KB each), which DynamoDB Local does not report.
  const batchReads = cost.requests['BatchGetItem keys shards'] ?? 0;
  const shardTableReads = ((cost.readUnits.shards ?? 0) + batchReads) * factors.read;
  const indexReads = cost.readUnits['shards.byKey'] ?? 0;
  return {
    writeUnits: shardTableWrites + tokenIndexWrites + listingIndexWrites + txnRecordWrites + deadlineIndexWrites + feedWrites,
    readUnits: shardTableReads + indexReads,
    shardTableWrites,
    shardTableReads,
    listingIndexWrites,
    tokenIndexWrites,
    txnRecordWrites,
    deadlineIndexWrites,
    feedWrites,
  };
}

/** The same operation done directly on one DynamoDB table with no index: its units. */
function directUnits(operation: MixOperation, valueBytes: number): { writeUnits: number; readUnits: number } {
  const factors = sizeFactors(valueBytes);
  switch (operation) {
    case 'getEventual':
      return { writeUnits: 0, readUnits: factors.read / 2 };
    case 'getStrong':
      return { writeUnits: 0, readUnits: factors.read };
    case 'list':
      // One Query of 40 small items (an index of keys): 0.5 read units.
      return { writeUnits: 0, readUnits: 0.5 };
    case 'txn1Shard':
    case 'txn3Shards':
      // TransactWriteItems of 3 puts: two units per item per KB.
      return { writeUnits: 6 * factors.write, readUnits: 0 };
    default:
      return { writeUnits: factors.write, readUnits: 0 };
  }
}

const lambdaGbSeconds = (memoryMb: number, durationMs: number) => (memoryMb / 1024) * (durationMs / 1000);

/**
 * The Lambda work behind each operation besides its API handler: `records`, owner writes (each one
 * stream record the replicator copies to the other replicas); `steps`, task invocations of the
 * transaction workflow (Begin, Prepare per shard, Decide: an eventual commit is then applied by the
 * applier from the transaction table's stream, not by Commit tasks; one shard runs no workflow);
 * `applierMs`, the applier's work (a batched read of the keys and their applies), invoked per batch.
 */
const backgroundWork: Record<MixOperation, { records: number; steps: number; applierMs: number }> = {
  getEventual: { records: 0, steps: 0, applierMs: 0 },
  getStrong: { records: 0, steps: 0, applierMs: 0 },
  putEventual: { records: 1, steps: 0, applierMs: 0 },
  putStrong: { records: 1, steps: 0, applierMs: 0 },
  deleteEventual: { records: 1, steps: 0, applierMs: 0 },
  list: { records: 0, steps: 0, applierMs: 0 },
  txn1Shard: { records: 3, steps: 0, applierMs: 0 },
  txn3Shards: { records: 3, steps: 5, applierMs: 10 },
};

/** Lambda invocations and GB-seconds of one operation (the API's handler, transaction steps, the replicator's share). */
function lambdaUse(operation: MixOperation) {
  const isTxn = operation === 'txn1Shard' || operation === 'txn3Shards';
  const front = isTxn ? handlers.txn : operation.startsWith('get') || operation === 'list' ? handlers.kvRead : handlers.kvWrite;
  const { steps, records, applierMs } = backgroundWork[operation];
  const concurrencyMs = assumedDurationsMs[operation] + steps * txnStepDurationMs + records * replicatorMsPerRecord + applierMs;
  const gbSeconds =
    lambdaGbSeconds(front.memoryMb, assumedDurationsMs[operation]) +
    steps * lambdaGbSeconds(handlers.txnStep.memoryMb, txnStepDurationMs) +
    records * lambdaGbSeconds(handlers.replicator.memoryMb, replicatorMsPerRecord) +
    lambdaGbSeconds(handlers.txnApplier.memoryMb, applierMs);
  const applierInvocations = applierMs > 0 ? 1 / replicationDefaults.streamBatchSize : 0;
  const invocations = 1 + steps + records / replicationDefaults.streamBatchSize + applierInvocations;
  return {
    invocations,
    gbSeconds,
    concurrencyMs,
    expressStarts: steps > 0 ? 1 : 0,
    expressMs: steps > 0 ? assumedDurationsMs[operation] : 0,
  };
}

/** Cost per operation in dollars, Ringstore and the same operation done directly on DynamoDB. */
function costOf(operation: MixOperation, traffic: Traffic, replicationFactor: number) {
  const cost = operationCosts[mixOperations[operation]];
  const units = unitsPerOperation(cost, traffic.valueBytes, replicationFactor);
  const cached = operation === 'getEventual' ? traffic.cacheHitRatio : 0;
  const lambda = lambdaUse(operation);
  const ringstore =
    (units.writeUnits * prices.perMillionWriteUnits + units.readUnits * (1 - cached) * prices.perMillionReadUnits) / 1e6 +
    prices.perMillionApiRequests / 1e6 +
    (lambda.invocations * prices.perMillionLambdaRequests) / 1e6 +
    lambda.gbSeconds * prices.lambdaGbSecond +
    (lambda.expressStarts * prices.perMillionExpressRequests) / 1e6 +
    lambdaGbSeconds(64, Math.ceil(lambda.expressMs / 100) * 100) * prices.expressGbSecond +
    // The cache is written on every write and read on every eventual read.
    prices.perMillionCacheEcpus / 1e6;
  const direct = directUnits(operation, traffic.valueBytes);
  const dynamodb = (direct.writeUnits * prices.perMillionWriteUnits + direct.readUnits * prices.perMillionReadUnits) / 1e6;
  return { ringstore, dynamodb };
}

function normalisedMix(mix: Traffic['mix']): Array<[MixOperation, number]> {
  const entries = Object.entries(mix).filter(([, share]) => (share ?? 0) > 0) as Array<[MixOperation, number]>;
  const total = sum(entries.map(([, share]) => share));
  if (total <= 0) throw new Error('the traffic mix has no operation with a positive share');
  return entries.map(([operation, share]) => [operation, share / total]);
}

/**
 * The load on each limit, which is reached first and at what rate, and the cost per million operations.
 *
 * @example
 * const report = capacityReport({ shards: 4, replicationFactor: 3 }, { opsPerSecond: 5_000, mix: { getEventual: 0.9, putEventual: 0.1 },
 *   valueBytes: 1_000, busiestNamespaceShare: 1, cacheHitRatio: 0.8 });
 * report.bottleneck.limit; // 'API Gateway requests/s'
 */
export function capacityReport(deployment: Deployment, traffic: Traffic): CapacityReport {
  const mix = normalisedMix(traffic.mix);
  const rate = traffic.opsPerSecond;
  let shardWrites = 0;
  let shardReads = 0;
  let listingWrites = 0;
  let tokenIndexWrites = 0;
  let txnRecordWrites = 0;
  let deadlineWrites = 0;
  let feedWrites = 0;
  let concurrency = 0;
  let expressStarts = 0;
  for (const [operation, share] of mix) {
    const cost = operationCosts[mixOperations[operation]];
    const units = unitsPerOperation(cost, traffic.valueBytes, deployment.replicationFactor);
    const opsPerSecond = rate * share;
    const cached = operation === 'getEventual' ? traffic.cacheHitRatio : 0;
    shardWrites += opsPerSecond * units.shardTableWrites;
    shardReads += opsPerSecond * units.shardTableReads * (1 - cached);
    listingWrites += opsPerSecond * units.listingIndexWrites;
    tokenIndexWrites += opsPerSecond * units.tokenIndexWrites;
    txnRecordWrites += opsPerSecond * units.txnRecordWrites;
    deadlineWrites += opsPerSecond * units.deadlineIndexWrites;
    feedWrites += opsPerSecond * units.feedWrites;
    const lambda = lambdaUse(operation);
    concurrency += (opsPerSecond * lambda.concurrencyMs) / 1000;
    expressStarts += opsPerSecond * lambda.expressStarts;
  }
  const { shards } = deployment;
  // Keys hash evenly over the ring: each shard table takes 1/shards of the units.
  const tokenPartitionsPerShard = Math.min(256, Math.ceil((256 * deployment.replicationFactor) / shards));
  const loads: LimitLoad[] = [
    {
      limit: 'shard table write units/s (each table; each index has its own quota)',
      load: shardWrites / shards,
      capacity: awsLimits.tableWriteUnits,
      unit: 'WRU/s',
      remedy: 'more shards (each is a table with its own quota), or a table quota increase',
    },
    {
      limit: 'shard table read units/s (each table)',
      load: shardReads / shards,
      capacity: awsLimits.tableReadUnits,
      unit: 'RRU/s',
      remedy: 'more shards, a higher cache hit ratio (larger L1 or cache), or a table quota increase',
    },
    {
      limit: 'listing index partition (busiest namespace, one bucket of one shard)',
      load: (listingWrites * traffic.busiestNamespaceShare) / (shards * shardSchema.keyIndex.buckets),
      capacity: awsLimits.partitionWriteUnits,
      unit: 'WRU/s',
      remedy: 'more shards, or more listing buckets (shardSchema.keyIndex.buckets; a reindex)',
    },
    {
      limit: "token index write units/s (each shard table's index)",
      load: tokenIndexWrites / shards,
      capacity: awsLimits.tableWriteUnits,
      unit: 'WRU/s',
      remedy: 'more shards, or a table quota increase',
    },
    {
      limit: 'token index partition (one token bucket of one shard)',
      load: tokenIndexWrites / (shards * tokenPartitionsPerShard),
      capacity: awsLimits.partitionWriteUnits,
      unit: 'WRU/s',
      remedy: 'more shards',
    },
    {
      limit: 'feed table write units/s (one table for the deployment)',
      load: feedWrites,
      capacity: awsLimits.tableWriteUnits,
      unit: 'WRU/s',
      remedy: 'a table quota increase',
    },
    {
      // Keys spread over the buckets by their first path segment: a namespace whose writes all go to one topic puts
      // them all on one partition (docs/watch.md, "Layout").
      limit: `feed partition (busiest namespace, one of its ${watchDefaults.buckets} topic buckets)`,
      load: (feedWrites * traffic.busiestNamespaceShare) / watchDefaults.buckets,
      capacity: awsLimits.partitionWriteUnits,
      unit: 'WRU/s',
      remedy: 'spread keys over more first path segments, or more feed buckets (watchDefaults.buckets)',
    },
    {
      limit: 'transaction table write units/s',
      load: txnRecordWrites,
      capacity: awsLimits.tableWriteUnits,
      unit: 'WRU/s',
      remedy: 'a table quota increase',
    },
    {
      limit: 'transaction deadline index partition (one minute bucket)',
      load: deadlineWrites / txnSchema.deadlineIndex.buckets,
      capacity: awsLimits.partitionWriteUnits,
      unit: 'WRU/s',
      remedy: 'more deadline buckets (txnSchema.deadlineIndex.buckets)',
    },
    {
      limit: 'Lambda concurrency (account)',
      load: concurrency,
      capacity: awsLimits.lambdaConcurrency,
      unit: 'executions',
      remedy: 'a concurrency quota increase (tens of thousands are granted routinely)',
    },
    {
      limit: 'API Gateway requests/s (account)',
      load: rate,
      capacity: awsLimits.apiRequestsPerSecond,
      unit: 'requests/s',
      remedy: 'a quota increase, or several stages (each a deployment) behind your own routing',
    },
    {
      limit: 'Express workflow starts/s (account)',
      load: expressStarts,
      capacity: awsLimits.expressStartsPerSecond,
      unit: 'starts/s',
      remedy: 'a quota increase, or keeping transactions on one shard (no workflow)',
    },
  ];
  const limits = loads.map((entry) => {
    const utilisation = entry.load / entry.capacity;
    return { ...entry, utilisation, ceilingOpsPerSecond: utilisation > 0 ? rate / utilisation : Number.POSITIVE_INFINITY };
  });
  const bottleneck = limits.reduce((worst, entry) => (entry.utilisation > worst.utilisation ? entry : worst));
  const perOperation = (Object.keys(mixOperations) as MixOperation[]).map((operation) => {
    const { ringstore, dynamodb } = costOf(operation, traffic, deployment.replicationFactor);
    return { operation, ringstoreUsdPerMillion: ringstore * 1e6, dynamodbUsdPerMillion: dynamodb * 1e6, ratio: ringstore / dynamodb };
  });
  const mixUsdPerMillion = sum(
    mix.map(([operation, share]) => share * costOf(operation, traffic, deployment.replicationFactor).ringstore * 1e6),
  );
  return { limits, bottleneck, perOperation, mixUsdPerMillion };
}
