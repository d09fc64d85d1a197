// After the measured rounds, two measurements of replication itself: how long replicas take to converge
// after a burst of eventual writes, and how fast a shard that comes back replays its hints.
import { performance } from 'node:perf_hooks';
import { type AttributeValue, type DynamoDBClient, GetItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { partitionKeyOf } from '../lambdas/adapters/dynamodb-item-codec';
import { type Ring, tokenOf } from '../lambdas/core/ring';
import type { BenchRuntime as Runtime } from './runtime';
import { callTimeoutMs } from './cases';

const middlewareName = 'ringstoreBenchReplicaWatch';
/** Bounds on the waits below, so a replication that never finishes ends the measurement, not the run. */
const quietWaitMaxMs = 30_000;
const convergenceWaitMaxMs = 60_000;
/** Pause between two polls of the replica tables, so the polls leave the cores to replication. */
const pollPauseMs = 20;
/** Scan pages per table per poll (a bound); a burst of 20,000 keys needs fewer than 40. */
const scanPagesMax = 200;
/** The shard tables count as quiet after this long without a write. */
const quietMs = 1_000;

/** One replica write (conditional PutItem) seen on the handlers' client: the stream path or a fan-out. */
interface ReplicaWrite {
  table: string;
  key: string;
  version: number;
  /** When the owner's write started (the item's `mt`): the basis of ReplicationStats' lag too. */
  modifiedAtMs?: number;
  /** Date.now() when DynamoDB answered. */
  doneAtMs: number;
  /** False: the condition failed (the replica already held that version or a newer one). */
  applied: boolean;
}

export interface ReplicaWatch {
  /** Replica writes of keys starting with the watched prefix, in completion order. */
  writes: ReplicaWrite[];
  /** Resolves once no shard table was written for `quietMs` (bounded). */
  quiet(): Promise<void>;
  stop(): void;
}

/**
 * Watches the client every handler in this process shares (the replicator included): a passive record
 * of when each replica copy of a key under `keyPrefix` landed on a shard table, and of when the shard
 * and hints tables go quiet (the control table is read every second and does not count).
 */
export function watchReplicaWrites(
  client: DynamoDBDocumentClient,
  tables: { shardPrefix: string; hints: string },
  keyPrefix: string,
): ReplicaWatch {
  const writes: ReplicaWrite[] = [];
  let lastActivityMs = Date.now();
  let inFlight = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { TableName?: string; Item?: Record<string, { S?: string; N?: string }> };
      const table = input.TableName ?? '';
      if (!table.startsWith(tables.shardPrefix) && table !== tables.hints) return next(args);
      inFlight += 1;
      lastActivityMs = Date.now();
      const record = (applied: boolean) => {
        const pk = input.Item?.pk?.S;
        const key = pk?.slice(pk.indexOf('#') + 1);
        if (context.commandName !== 'PutItemCommand' || table === tables.hints || key === undefined || !key.startsWith(keyPrefix)) return;
        const mt = input.Item?.mt?.N;
        writes.push({
          table,
          key,
          version: Number(input.Item?.v?.N),
          doneAtMs: Date.now(),
          applied,
          ...(mt === undefined ? {} : { modifiedAtMs: Number(mt) }),
        });
      };
      try {
        const output = await next(args);
        record(true);
        return output;
      } catch (error) {
        if ((error as { name?: string }).name === 'ConditionalCheckFailedException') record(false);
        throw error;
      } finally {
        inFlight -= 1;
        lastActivityMs = Date.now();
      }
    },
    { step: 'build', name: middlewareName },
  );
  return {
    writes,
    quiet: async () => {
      const deadline = Date.now() + quietWaitMaxMs;
      while (Date.now() < deadline && (inFlight > 0 || Date.now() - lastActivityMs < quietMs)) await sleep(50);
    },
    stop: () => {
      client.middlewareStack.remove(middlewareName);
    },
  };
}

export interface Distribution {
  p50: number;
  p99: number;
  max: number;
  count: number;
}

export interface ConvergenceReport {
  writes: number;
  concurrency: number;
  /** Eventual PUTs per second during the burst (HTTP, node:http). */
  burstOpsPerSecond: number;
  burstMs: number;
  /** From the last acknowledgement to the end of the first poll that found every copy at its version. */
  polledConvergedAfterLastAckMs: number;
  /** From the last acknowledgement to the start of the last poll that still found a copy behind (0: none did). */
  lastSeenBehindAfterLastAckMs: number;
  /** Each poll: one consistent Scan (filtered to the burst's keys) of every replica table, in parallel. */
  polls: { count: number; meanMs: number };
  /** From the last acknowledgement until the last replica write that brought a copy to its version landed. */
  lastReplicaWriteAfterLastAckMs: number;
  /** Per key: the later of its two replica copies, from the owner's write (ms). */
  perKeyLagMs: Distribution;
  /** Per replica copy, from the owner's write (ms). */
  perCopyLagMs: Distribution;
  /** Replica copies the watch did not see land (the polls still found them current). */
  copiesUnobserved: number;
  /** ReplicationStats of the runtime after the burst: its last (at most 2,000) applied copies. */
  runtimeStats: ReturnType<Runtime['stats']['summary']>;
}

export interface HintReplayReport {
  downTable: string;
  writes: number;
  concurrency: number;
  /** Strong PUTs per second with one replica of every key down (each writes a hint instead). */
  writesWithReplicaDownOpsPerSecond: number;
  /** Copies the strong writes reported (2: the owner and the live replica). */
  copiesReported: number[];
  hintsWaiting: number;
  /** Time to the stream path's hints settling after the last write (its hints duplicate the fan-out's). */
  settleMs: number;
  /** `maintenance.handoff(ring)`, timed around the call: probe, recovery transitions, replay. */
  handoffMs: number;
  /** Hints replayed per second over the whole handoff call. */
  hintsPerSecond: number;
  /** The replay's own report for the shard (ReplayReport). */
  replay: { applied: number; alreadyCurrent: number; durationMs: number; hintsPerSecond: number; transition?: string; completed: boolean };
  hintsLeft: number;
  healthAfter: string;
  /** From the first handoff call until the shard was available again (the settle time included). */
  availableAfterMs: number;
  /** Keys whose copy on the returned shard is at the acknowledged version, read back consistently. */
  verifiedKeys: number;
}

function distribution(values: number[]): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]! : 0);
  return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? 0, count: sorted.length };
}

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs `work` for 0..count-1 with `concurrency` workers. */
async function forEachIndex(count: number, concurrency: number, work: (n: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

/** The version a replica table holds for a key (0: none), read consistently through the raw client. */
async function versionOn(client: DynamoDBClient, table: string, namespace: string, key: string): Promise<number> {
  const { Item } = await client.send(
    new GetItemCommand({
      TableName: table,
      Key: { pk: { S: partitionKeyOf(namespace, key) } },
      ConsistentRead: true,
      ProjectionExpression: '#v',
      ExpressionAttributeNames: { '#v': 'v' },
    }),
    { abortSignal: AbortSignal.timeout(callTimeoutMs) },
  );
  return Number(Item?.v?.N ?? 0);
}

/** Versions of every key under `keyPrefix` a table holds, by one consistent, filtered Scan. */
async function versionsOn(client: DynamoDBClient, table: string, namespace: string, keyPrefix: string): Promise<Map<string, number>> {
  const versions = new Map<string, number>();
  let startKey: Record<string, AttributeValue> | undefined;
  let pages = 0;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: table,
        ConsistentRead: true,
        FilterExpression: '#ns = :ns AND begins_with(#k, :prefix)',
        ProjectionExpression: '#k, #v',
        ExpressionAttributeNames: { '#ns': 'ns', '#k': 'k', '#v': 'v' },
        ExpressionAttributeValues: { ':ns': { S: namespace }, ':prefix': { S: keyPrefix } },
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      }),
      { abortSignal: AbortSignal.timeout(callTimeoutMs) },
    );
    for (const item of page.Items ?? []) versions.set(item.k!.S!, Number(item.v!.N));
    startKey = page.LastEvaluatedKey;
    pages += 1;
    if (pages > scanPagesMax) throw new Error(`scan of ${table} for ${keyPrefix} keys read more than ${scanPagesMax} pages`);
  } while (startKey);
  return versions;
}

export interface BurstDeps {
  ring: Ring;
  namespace: string;
  raw: DynamoDBClient;
  watch: ReplicaWatch;
  runtime: Runtime;
  /** One PUT through the API; returns the acknowledged version. */
  put(key: string, n: number, strong: boolean): Promise<{ version: number; copies?: number }>;
}

/**
 * `writes` eventual PUTs of fresh keys at `concurrency`, then polls of the replica tables (consistent
 * scans of the burst's keys, every table at once) until every key's replica copies hold its version.
 */
export async function measureConvergence(
  deps: BurstDeps,
  options: { writes: number; concurrency: number; keyPrefix: string },
): Promise<ConvergenceReport> {
  const { ring, namespace, raw, watch } = deps;
  const { writes, concurrency, keyPrefix } = options;
  await watch.quiet();
  const keys = Array.from({ length: writes }, (_, n) => `${keyPrefix}${String(n).padStart(5, '0')}`);
  const acks: Array<{ key: string; version: number; ackAt: number; ackAtMs: number }> = [];
  const started = performance.now();
  await forEachIndex(writes, concurrency, async (n) => {
    const { version } = await deps.put(keys[n]!, n, false);
    acks.push({ key: keys[n]!, version, ackAt: performance.now(), ackAtMs: Date.now() });
  });
  const lastAck = acks[acks.length - 1]!;
  const burstMs = lastAck.ackAt - started;

  // Every replica copy of every key: the key's replicas other than its owner.
  const pending = acks.flatMap(({ key, version }) =>
    ring
      .replicasOf(tokenOf(namespace, key))
      .slice(1)
      .map((shard) => ({ key, version, table: shard.table })),
  );
  const tables = [...new Set(pending.map((copy) => copy.table))];
  let polls = 0;
  let pollingMs = 0;
  let lastBehindAt: number | undefined;
  let convergedAt: number | undefined;
  const deadline = performance.now() + convergenceWaitMaxMs;
  while (convergedAt === undefined) {
    if (performance.now() > deadline) throw new Error(`replica copies still behind ${convergenceWaitMaxMs} ms after the burst`);
    const pollStarted = performance.now();
    const held = new Map(
      await Promise.all(tables.map(async (table) => [table, await versionsOn(raw, table, namespace, keyPrefix)] as const)),
    );
    const pollEnded = performance.now();
    polls += 1;
    pollingMs += pollEnded - pollStarted;
    const behind = pending.some((copy) => (held.get(copy.table)!.get(copy.key) ?? 0) < copy.version);
    if (behind) {
      lastBehindAt = pollStarted;
      await sleep(pollPauseMs);
    } else convergedAt = pollEnded;
  }

  // The passive record: when the replica write that brought each copy to its version landed.
  const landed = new Map<string, ReplicaWrite>();
  for (const write of watch.writes) {
    const id = `${write.key}|${write.table}`;
    if (write.applied && !landed.has(id)) landed.set(id, write);
  }
  const byKey = new Map(acks.map((ack) => [ack.key, ack]));
  const perCopy: number[] = [];
  const perKey = new Map<string, number>();
  let lastLandedMs = lastAck.ackAtMs;
  let unobserved = 0;
  for (const copy of pending) {
    const write = landed.get(`${copy.key}|${copy.table}`);
    if (!write || write.modifiedAtMs === undefined || write.version < byKey.get(copy.key)!.version) {
      unobserved += 1;
      continue;
    }
    const lag = write.doneAtMs - write.modifiedAtMs;
    perCopy.push(lag);
    perKey.set(copy.key, Math.max(perKey.get(copy.key) ?? 0, lag));
    lastLandedMs = Math.max(lastLandedMs, write.doneAtMs);
  }
  return {
    writes,
    concurrency,
    burstOpsPerSecond: Math.round((writes * 1000) / burstMs),
    burstMs: Math.round(burstMs),
    polledConvergedAfterLastAckMs: Math.round(convergedAt - lastAck.ackAt),
    lastSeenBehindAfterLastAckMs: lastBehindAt === undefined ? 0 : Math.max(0, Math.round(lastBehindAt - lastAck.ackAt)),
    polls: { count: polls, meanMs: Math.round(pollingMs / polls) },
    lastReplicaWriteAfterLastAckMs: Math.max(0, lastLandedMs - lastAck.ackAtMs),
    perKeyLagMs: distribution([...perKey.values()]),
    perCopyLagMs: distribution(perCopy),
    copiesUnobserved: unobserved,
    runtimeStats: deps.runtime.stats.summary(),
  };
}

/**
 * Takes one shard down (fault injection), makes `writes` strong PUTs of fresh keys that have it as a
 * replica (not as owner) so each leaves a hint, brings the shard back and times one hinted handoff.
 */
export async function measureHintReplay(
  deps: BurstDeps,
  options: { writes: number; concurrency: number; keyPrefix: string },
): Promise<HintReplayReport> {
  const { ring, namespace, raw, watch, runtime: rt } = deps;
  const { writes, concurrency, keyPrefix } = options;
  const faults = rt.faults;
  if (!faults) throw new Error('the hint replay measurement needs the local cloud started with faultInjection');
  const downTable = ring.shards[ring.shards.length - 1]!.table;
  const keys: string[] = [];
  for (let n = 0; keys.length < writes; n += 1) {
    const key = `${keyPrefix}${String(n).padStart(6, '0')}`;
    if (
      ring
        .replicasOf(tokenOf(namespace, key))
        .slice(1)
        .some((shard) => shard.table === downTable)
    )
      keys.push(key);
  }
  await watch.quiet();
  const hintsBefore = await rt.hints.count(downTable);
  const versions = new Map<string, number>();
  const copiesReported = new Set<number>();
  const timed = async (work: () => Promise<void>) => {
    const started = performance.now();
    await work();
    return performance.now() - started;
  };
  faults.apply({ downShards: [downTable] });
  let writesMs: number;
  let settleMs: number;
  try {
    writesMs = await timed(() =>
      forEachIndex(writes, concurrency, async (n) => {
        const ack = await deps.put(keys[n]!, n, true);
        versions.set(keys[n]!, ack.version);
        copiesReported.add(ack.copies ?? 0);
      }),
    );
    // The stream path hints the same versions again (the same hint items): it finishes before the replay.
    settleMs = await timed(() => watch.quiet());
  } finally {
    faults.apply({ downShards: [] });
  }
  const hintsWaiting = (await rt.hints.count(downTable)) - hintsBefore;
  const handoffStarted = performance.now();
  const reports = await rt.maintenance.handoff(ring);
  const handoffMs = performance.now() - handoffStarted;
  const replay = reports.find((report) => report.table === downTable);
  if (!replay) throw new Error(`hinted handoff did not replay ${downTable}: ${JSON.stringify(reports)}`);
  const hintsLeft = await rt.hints.count(downTable);
  // A recovering shard serves again only after a settle time: later passes (as the schedule would make)
  // complete the recovery, so the system ends healthy and the report says when it served again.
  const statusOf = async () => {
    rt.health.invalidate();
    return (await rt.health.all()).get(downTable)?.status ?? 'available';
  };
  const recoveryDeadline = performance.now() + quietWaitMaxMs;
  let healthAfter = await statusOf();
  while (healthAfter !== 'available' && performance.now() < recoveryDeadline) {
    await sleep(250);
    await rt.maintenance.handoff(ring);
    healthAfter = await statusOf();
  }
  const availableAfterMs = performance.now() - handoffStarted;
  let verifiedKeys = 0;
  await forEachIndex(keys.length, concurrency, async (n) => {
    if ((await versionOn(raw, downTable, namespace, keys[n]!)) >= versions.get(keys[n]!)!) verifiedKeys += 1;
  });
  const replayed = replay.applied + replay.alreadyCurrent;
  return {
    downTable,
    writes,
    concurrency,
    writesWithReplicaDownOpsPerSecond: Math.round((writes * 1000) / writesMs),
    copiesReported: [...copiesReported].sort(),
    hintsWaiting,
    settleMs: Math.round(settleMs),
    handoffMs: Math.round(handoffMs),
    hintsPerSecond: Math.round((replayed * 1000) / handoffMs),
    replay: {
      applied: replay.applied,
      alreadyCurrent: replay.alreadyCurrent,
      durationMs: replay.durationMs,
      hintsPerSecond: replay.hintsPerSecond,
      ...(replay.transition ? { transition: replay.transition } : {}),
      completed: replay.completed,
    },
    hintsLeft,
    healthAfter,
    availableAfterMs: Math.round(availableAfterMs),
    verifiedKeys,
  };
}

/**
 * Diagnosis: holds the replicator (stream batches wait, nothing is lost) until the returned function is
 * called, to price what background replication costs the calls measured meanwhile.
 */
export function holdReplication(replication: Runtime['replication']): () => void {
  const apply = replication.applyOwnerChanges.bind(replication);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  replication.applyOwnerChanges = async (...args) => {
    await held;
    return apply(...args);
  };
  return () => {
    replication.applyOwnerChanges = apply;
    release();
  };
}
