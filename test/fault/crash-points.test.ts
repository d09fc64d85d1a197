// Crash at every named point of the write and replication paths, recover, and judge the replicas in
// DynamoDB directly: acknowledged writes survive on every replica, no replica runs ahead of its owner,
// and the read caches never serve a version older than one already read strongly.
import { type CrashPoint, replicationCrashPoints } from '../../lambdas/ports';
import {
  baseSeed,
  type Consistency,
  deriveSeed,
  describeItem,
  divergence,
  describeFaults,
  driveUntil,
  type FaultCloud,
  type FaultPlan,
  localNamespace,
  NeverHappenedError,
  readReplicas,
  type Reply,
  replicaTablesOf,
  Rng,
  sleep,
  startFaultCloud,
  waitForConvergence,
  withSeed,
} from './support';
import { sha256Hex } from '../../lambdas/core/digest';

/** Writes and deletes per run (more are sent, bounded, until the armed point has crashed). */
const workloadOps = 36;
/** Bounds on driving the run to its crash (or a hint to replay) once the counted ops have not reached it. */
const extraOpsMax = 60;
const driveBoundMs = 60_000;
/** How long the replicator gets between the extra writes that drive it to its crash point. */
const replicatorPatienceMs = 250;
const keysPerRun = 10;
/** Share of the writes that go to the first `hotKeys` keys. */
const hotKeyShare = 0.6;
const hotKeys = 3;
/** Bound on recovery: repairs until handoff is done, then until every replica holds the owner's item. */
const recoveryBoundMs = 30_000;
/** Points reached only while a replica shard is down (hints are written, then replayed). */
const hintPoints: readonly CrashPoint[] = ['write.beforeHint', 'hints.duringReplay'];
/** Points reached asynchronously, by the stream poller's replicator, after the write was answered. */
const replicatorPoints: readonly CrashPoint[] = ['replicator.beforeApply', 'replicator.afterApply'];

const seed = baseSeed();
let cloud: FaultCloud;

beforeAll(async () => {
  // No maintenance timer: hints are replayed only when the test asks (POST /v1/admin/repair), so a
  // crash armed at hints.duringReplay is reached by the repair the test sends.
  cloud = await startFaultCloud('crash', { RINGSTORE_MAINTENANCE_INTERVAL_MS: '0' });
}, 240_000);

afterAll(async () => {
  await cloud?.close();
});

/** What the test knows about one key. */
interface Ledger {
  /** The last acknowledged (200) write or delete. */
  lastAck?: { version: number; op: number; content: Content };
  /** The last write or delete that may have changed the key (acknowledged or outcome unknown). */
  lastIssuedOp: number;
  /** Every acknowledged version's content: the owner assigns each version once. */
  acked: Map<number, Content>;
  /** Newest version seen by any call (for If-Match). */
  knownVersion: number;
  /** Newest version a strong read returned, and whether a delete was sent since. */
  strongRead: number;
  deleteSinceStrongRead: boolean;
}

type Content = { tombstone: true } | { tombstone: false; value: string };

describe('crash points', () => {
  it.each(replicationCrashPoints.map((point) => [point]))(
    '%s: acknowledged writes survive a crash there, and replicas converge',
    async (point) => {
      const testSeed = deriveSeed(seed, point);
      await withSeed(seed, () => runCrashPoint(point, new Rng(testSeed)));
    },
  );
});

async function runCrashPoint(point: CrashPoint, rng: Rng): Promise<void> {
  // Prepare: keys of this run; for the hint points, a shard that replicates most of them without
  // owning them (it owns one or two: their writes fail while it is down, unacknowledged).
  const { api, ring } = cloud;
  const prefix = `${point}-${rng.int(0, 1e9).toString(36)}-`;
  const downShard = rng.pick(ring.shards).table;
  const keys = chooseKeys(prefix, downShard, rng);
  const ledgers = new Map<string, Ledger>(
    keys.map((key) => [key, { lastIssuedOp: -1, acked: new Map(), knownVersion: 0, strongRead: 0, deleteSinceStrongRead: false }]),
  );
  const violations: string[] = [];
  const unexpected: string[] = [];
  let opIndex = 0;
  const withHints = hintPoints.includes(point);
  // Hint points are reached only a few times per run; the others on most writes, so their crash can
  // wait until the keys have some history.
  const armed: FaultPlan['crashes'] = [{ point, after: withHints ? rng.int(0, 2) : rng.int(4, 12), times: rng.int(1, 3) }];

  const crashedCount = async () => (await api.faults()).crashed[point] ?? 0;
  const pendingHints = async () => (await api.shards()).shards.find((shard) => shard.table === downShard)!.pendingHints;

  /** One seeded write or delete, then (sometimes) a strong read and an eventual read of the same key. */
  const step = async (): Promise<void> => {
    const op = opIndex;
    opIndex += 1;
    // Most writes go to a few hot keys, so a crash usually hits a key with earlier versions cached.
    const key = rng.chance(hotKeyShare) ? rng.pick(keys.slice(0, hotKeys)) : rng.pick(keys);
    const ledger = ledgers.get(key)!;
    const consistency: Consistency = rng.chance(0.5) ? 'strong' : 'eventual';
    const roll = rng.next();
    const value = `${prefix}op${op}-${rng.int(0, 1e6)}`;
    let reply: Reply;
    let content: Content;
    if (roll < 0.45) {
      content = { tombstone: false, value };
      reply = await api.put(key, value, { consistency });
    } else if (roll < 0.65) {
      content = { tombstone: false, value };
      reply = await api.put(key, value, { consistency, ifMatch: ledger.knownVersion || 1 });
    } else if (roll < 0.75) {
      content = { tombstone: false, value };
      reply = await api.put(key, value, { consistency, ifNoneMatch: true });
    } else {
      content = { tombstone: true };
      reply = await api.delete(key, { consistency, ...(rng.chance(0.5) ? { ifMatch: ledger.knownVersion || 1 } : {}) });
    }
    if (reply.status === 200) {
      const version = reply.version!;
      if (ledger.lastAck && version <= ledger.lastAck.version) {
        violations.push(`op ${op} on ${key}: acknowledged version ${version} after version ${ledger.lastAck.version} (versions must grow)`);
      }
      ledger.lastAck = { version, op, content };
      ledger.lastIssuedOp = op;
      ledger.acked.set(version, content);
      ledger.knownVersion = Math.max(ledger.knownVersion, version);
    } else if (reply.status === 404 || reply.status === 412) {
      // Definitely not applied: the precondition did not hold at the owner.
    } else if (reply.status === 502 || reply.status === 503 || reply.status === 0) {
      ledger.lastIssuedOp = op;
    } else {
      unexpected.push(`op ${op} on ${key}: ${reply.status} ${reply.code ?? ''} ${reply.message ?? ''}`);
      ledger.lastIssuedOp = op;
    }
    // Always after an unknown outcome (the crash may have left the caches behind the owner).
    const unknownOutcome = reply.status >= 500 || reply.status === 0;
    if (content.tombstone && (reply.status === 200 || unknownOutcome)) ledger.deleteSinceStrongRead = true;
    if (rng.chance(0.4) || unknownOutcome) await checkCacheRule(key, ledger, op);
  };

  /** After a strong read of version v, an eventual read (cache first) must not return anything older. */
  const checkCacheRule = async (key: string, ledger: Ledger, op: number): Promise<void> => {
    const strong = await api.get(key, 'strong');
    if (strong.status === 200) {
      ledger.strongRead = Math.max(ledger.strongRead, strong.version!);
      ledger.deleteSinceStrongRead = false;
      ledger.knownVersion = Math.max(ledger.knownVersion, strong.version!);
    } else if (strong.status !== 404 && strong.status !== 503) {
      unexpected.push(`strong read of ${key} after op ${op}: ${strong.status} ${strong.code ?? ''} ${strong.message ?? ''}`);
    }
    const eventual = await api.get(key, 'eventual');
    if (eventual.status === 200 && eventual.version! < ledger.strongRead) {
      violations.push(
        `after op ${op}: eventual read of ${key} returned v${eventual.version} after a strong read returned v${ledger.strongRead}`,
      );
    } else if (eventual.status === 404 && ledger.strongRead > 0 && !ledger.deleteSinceStrongRead) {
      violations.push(
        `after op ${op}: eventual read of ${key} answered 404 after a strong read returned v${ledger.strongRead} (no delete sent since)`,
      );
    } else if (eventual.status !== 200 && eventual.status !== 404 && eventual.status !== 503) {
      unexpected.push(`eventual read of ${key} after op ${op}: ${eventual.status} ${eventual.code ?? ''} ${eventual.message ?? ''}`);
    }
    if (eventual.status === 200) ledger.knownVersion = Math.max(ledger.knownVersion, eventual.version!);
  };

  /** What the run drove towards and never saw (reported with the verdict; the recovery still runs). */
  const neverHappened: string[] = [];
  const drive = async (what: string, happened: () => Promise<boolean>, next: () => Promise<void>) => {
    try {
      await driveUntil(what, happened, next, {
        stepsMax: extraOpsMax,
        boundMs: driveBoundMs,
        explain: async () => describeFaults(await api.faults()),
      });
    } catch (error) {
      if (!(error instanceof NeverHappenedError)) throw error;
      neverHappened.push(error.message);
    }
  };
  const crashed = async () => (await crashedCount()) > 0;
  /** Runs `count` steps, then more (bounded) while the armed point has not crashed yet. */
  const runSteps = async (count: number, untilCrashed: boolean): Promise<void> => {
    for (let i = 0; i < count; i += 1) await step();
    if (untilCrashed) await drive(`a crash at ${point}`, crashed, step);
  };

  // Act: the workload in three thirds; for the hint points the middle third runs with a replica down.
  const third = Math.ceil(workloadOps / 3);
  await api.setFaults(point === 'hints.duringReplay' ? {} : { crashes: armed });
  await runSteps(third, false);
  if (withHints) await api.setFaults({ crashes: point === 'hints.duringReplay' ? [] : armed, downShards: [downShard] });
  await runSteps(third, point === 'write.beforeHint');
  if (point === 'hints.duringReplay') {
    await drive('a hint for the down replica', async () => (await pendingHints()) > 0, step);
    // The shard is back; the replay runs with the crash armed (a crashed repair answers 502).
    const pending = await pendingHints();
    armed[0]!.after = rng.int(0, Math.max(0, Math.min(pending, 4) - 1));
    await api.setFaults({ crashes: armed });
    await drive(`a crash at ${point}`, crashed, async () => {
      const repair = await api.repair();
      if (repair.status !== 200 && repair.status !== 502) unexpected.push(`repair while armed: ${repair.status} ${repair.message ?? ''}`);
    });
  } else if (withHints) {
    await api.setFaults({ crashes: (await api.faults()).crashes });
  }
  await runSteps(workloadOps - 2 * third, !replicatorPoints.includes(point) && !withHints);
  if (replicatorPoints.includes(point)) {
    // The replicator runs after the writes were answered, as far behind as the machine is busy: each step
    // gives it a moment, then writes once more.
    await drive(`a crash at ${point}`, crashed, async () => {
      await sleep(replicatorPatienceMs);
      await step();
    });
  }
  const faultStatus = await api.faults();

  // Assess, before recovery: no replica holds a version newer than its owner's, and every copy of an
  // acknowledged version holds what was acknowledged.
  const before = await readReplicas(cloud.ddb, ring, localNamespace, keys);
  for (const [key, views] of before) {
    const ownerVersion = views[0]!.item?.v ?? 0;
    for (const view of views) {
      if (view.item && view.item.v > ownerVersion) {
        violations.push(`before recovery: ${view.table} holds ${key} at v${view.item.v}, newer than the owner's v${ownerVersion}`);
      }
      const mismatch = contentMismatch(ledgers.get(key)!, view.item);
      if (mismatch) violations.push(`before recovery: ${view.table} ${key}: ${mismatch}`);
    }
  }

  // Recover: disarm, repair until no hints wait and every shard serves, then until every replica
  // holds its owner's item (the stream drains; a repair every few seconds covers what it cannot).
  await api.setFaults({});
  const recoveryStarted = Date.now();
  let handedOff = false;
  while (!handedOff && Date.now() - recoveryStarted < recoveryBoundMs) {
    const repair = await api.repair();
    if (repair.status !== 200) unexpected.push(`repair after disarming: ${repair.status} ${repair.message ?? ''}`);
    const status = await api.shards();
    handedOff = status.shards.every((shard) => shard.health === 'available' && shard.pendingHints === 0);
  }
  let lastRepairAt = 0;
  const convergence = await waitForConvergence({
    ddb: cloud.ddb,
    ring,
    keys,
    boundMs: Math.max(1_000, recoveryBoundMs - (Date.now() - recoveryStarted)),
    pollMs: 200,
    between: async (elapsedMs) => {
      if (elapsedMs - lastRepairAt < 3_000) return;
      lastRepairAt = elapsedMs;
      await api.repair();
    },
  });

  // Assess, after recovery.
  const after = await readReplicas(cloud.ddb, ring, localNamespace, keys);
  for (const problem of divergence(after)) violations.push(`after recovery, replicas differ: ${problem}`);
  for (const key of keys) {
    const ledger = ledgers.get(key)!;
    const owner = after.get(key)![0]!.item;
    const ownerVersion = owner?.v ?? 0;
    for (const view of after.get(key)!) {
      const mismatch = contentMismatch(ledger, view.item);
      if (mismatch) violations.push(`after recovery: ${view.table} ${key}: ${mismatch}`);
    }
    if (!ledger.lastAck) continue;
    if (ownerVersion < ledger.lastAck.version) {
      violations.push(`${key}: owner holds ${describeItem(owner)}, older than acknowledged v${ledger.lastAck.version}`);
    } else if (ledger.lastAck.op === ledger.lastIssuedOp && ownerVersion !== ledger.lastAck.version) {
      violations.push(
        `${key}: the last write sent was acknowledged at v${ledger.lastAck.version}, but the owner holds ${describeItem(owner)}`,
      );
    }
  }

  const context =
    `keys ${prefix}*, replicas ${keys.map((key) => `${key}=[${replicaTablesOf(ring, localNamespace, key).map(shortTable).join(',')}]`).join(' ')}` +
    `${withHints ? `, down shard ${shortTable(downShard)}` : ''}; faults ${JSON.stringify({ reached: faultStatus.reached, crashed: faultStatus.crashed })}`;
  if (process.env.RINGSTORE_FAULT_VERBOSE === '1') {
    const ledgerList = [...ledgers.values()];
    console.log(
      `${point}: ${opIndex} ops, ${ledgerList.reduce((sum, ledger) => sum + ledger.acked.size, 0)} acknowledged, ` +
        `${ledgerList.filter((ledger) => ledger.strongRead > 0).length} keys read strongly, crashed ${faultStatus.crashed[point] ?? 0}x ` +
        `(reached ${faultStatus.reached[point] ?? 0}x), converged in ${convergence.elapsedMs} ms after ${Date.now() - recoveryStarted - convergence.elapsedMs} ms of handoff; ${context}`,
    );
  }
  expect({ context, crashed: (faultStatus.crashed[point] ?? 0) >= 1, neverHappened }).toEqual({
    context,
    crashed: true,
    neverHappened: [],
  });
  expect({ context, unexpected }).toEqual({ context, unexpected: [] });
  expect({ context, converged: convergence.converged, divergent: convergence.divergent }).toEqual({
    context,
    converged: true,
    divergent: [],
  });
  expect({ context, violations }).toEqual({ context, violations: [] });
  // Something was acknowledged, so the checks above judged real data.
  expect([...ledgers.values()].filter((ledger) => ledger.lastAck).length).toBeGreaterThan(0);
}

/** `<prefix>k<n>` keys; with a down shard, mostly keys it replicates without owning. */
function chooseKeys(prefix: string, downShard: string, rng: Rng): string[] {
  const ring = cloud.ring;
  const owned: string[] = [];
  const replicated: string[] = [];
  const ownedWanted = rng.int(1, 2);
  for (let n = 0; (owned.length < ownedWanted || replicated.length < keysPerRun - ownedWanted) && n < 10_000; n += 1) {
    const key = `${prefix}k${n}`;
    const [owner, ...others] = replicaTablesOf(ring, localNamespace, key);
    if (owner === downShard && owned.length < ownedWanted) owned.push(key);
    else if (others.includes(downShard) && replicated.length < keysPerRun - ownedWanted) replicated.push(key);
  }
  // Keys the down shard only replicates come first: they are the hot ones, whose writes leave hints.
  return [...replicated, ...owned];
}

/** Why an item's content contradicts what was acknowledged at its version (undefined: it does not). */
function contentMismatch(
  ledger: Ledger,
  item: { v: number; tomb: boolean; sha: string; val?: Uint8Array } | undefined,
): string | undefined {
  if (!item) return undefined;
  const acked = ledger.acked.get(item.v);
  if (!acked) return undefined;
  if (acked.tombstone) return item.tomb ? undefined : `v${item.v} was acknowledged as a delete but holds ${describeItem(item as never)}`;
  const value = item.val === undefined ? undefined : Buffer.from(item.val).toString('utf8');
  if (item.tomb || value !== acked.value || item.sha !== sha256Hex(acked.value)) {
    return `v${item.v} was acknowledged as ${JSON.stringify(acked.value)} but holds ${describeItem(item as never)}`;
  }
  return undefined;
}

function shortTable(table: string): string {
  return table.replace(/^ringstore-[^-]+-/, '');
}
