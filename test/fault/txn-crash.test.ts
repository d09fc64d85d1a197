// Crash a transaction at every named point (the coordinator's state boundaries, a participant before and
// after its intent), let the recovery sweeper finish it, and judge the shards in DynamoDB directly:
// every transaction is all or nothing, its record ends committed or aborted, what was acknowledged as
// committed is visible, and no intent is left anywhere.
import { type CrashPoint, transactionCrashPoints } from '../../lambdas/ports';
import { tokenOf } from '../../lambdas/core/ring';
import {
  baseSeed,
  deriveSeed,
  describeFaults,
  driveUntil,
  type FaultCloud,
  keysOwnedByEachShard,
  localNamespace,
  Rng,
  sleep,
  startFaultCloud,
  type TxnOpInput,
  type TxnReply,
  waitForTxnRecovery,
  withSeed,
} from './support';

const clientCount = 3;
const txnsPerClient = 4;
/** Short deadlines: the sweeper (every 2 s locally, 1 s after a deadline) finishes a crashed one soon. */
const txnTimeoutMs = 1_000;
const recoveryBoundMs = 30_000;
/** Half a deadline: a client's four attempts span more than one crashed transaction's deadline. */
const conflictBackoffMs = txnTimeoutMs / 2;
/** Bounds on driving a run to the crash and the commit it must see. */
const driveStepsMax = 20;
const driveBoundMs = 60_000;

const seed = baseSeed();
let cloud: FaultCloud;

beforeAll(async () => {
  cloud = await startFaultCloud('txncrash', { RINGSTORE_MAINTENANCE_INTERVAL_MS: '0' });
}, 240_000);

afterAll(async () => {
  await cloud?.close();
});

/** One transaction of the run: its own key on every shard, plus the shared hot key. */
interface Attempt {
  tag: string;
  keys: string[];
  reply: TxnReply;
}

describe('transaction crash points', () => {
  it.each(transactionCrashPoints.map((point) => [point]))(
    '%s: every transaction ends all or nothing, decided, with no intent left',
    async (point) => {
      await withSeed(seed, () => runCrashPoint(point, new Rng(deriveSeed(seed, point))));
    },
  );
});

/**
 * A crashed coordinator is answered 503 txn.outcomeUnknown; a one-shard transaction has none, and its
 * crashed handler is API Gateway's 502 (the outcome is just as unknown to the client).
 */
function isUnknownOutcome(reply: TxnReply, atomic: boolean): boolean {
  return atomic ? reply.status === 502 : reply.status === 503 && reply.code === 'txn.outcomeUnknown';
}

async function runCrashPoint(point: CrashPoint, rng: Rng): Promise<void> {
  // Prepare
  const { api, ring, ddb } = cloud;
  const prefix = `txncrash-${point}-${rng.int(0, 1e9).toString(36)}-`;
  const hotKey = `${prefix}hot`;
  // The one-shard path's crash point is reached only by transactions whose keys all live on one shard:
  // for it, every key of the run is owned by the hot key's shard (the transactions never run 2PC).
  const atomic = point === 'txn.afterAtomicCommit';
  const hotShard = ring.ownerOf(tokenOf(localNamespace, hotKey)).table;
  const readKey = atomic ? keysOwnedByEachShard(ring, `${prefix}read`, 1).get(hotShard)![0]! : `${prefix}read`;
  const attempts: Attempt[] = [];
  const unexpected: string[] = [];
  const arm = () => api.setFaults({ crashes: [{ point, after: rng.int(0, 2), times: rng.int(1, 2) }] });

  const transaction = async (clientId: number, n: number) => {
    const tag = `${prefix}c${clientId}t${n}`;
    const keys = atomic
      ? keysOwnedByEachShard(ring, `${tag}-k`, 2).get(hotShard)!
      : [...keysOwnedByEachShard(ring, `${tag}-k`, 1).values()].flat();
    // Half read a key they do not write, so Validate runs too (read-write rather than write-only).
    const ops: TxnOpInput[] = [
      ...(n % 2 === 0 ? [{ op: 'get' as const, key: readKey }] : []),
      ...keys.map((key) => ({ op: 'put' as const, key, value: tag })),
      { op: 'put', key: hotKey, value: tag },
    ];
    const reply = await api.txn(ops, { timeoutMs: txnTimeoutMs });
    attempts.push({ tag, keys, reply });
    if (![200, 409, 412, 502, 503, 0].includes(reply.status))
      unexpected.push(`${tag}: ${reply.status} ${reply.code ?? ''} ${reply.message ?? ''}`);
    // As a client would: back off after a conflict. A crashed transaction holds the hot key until its
    // deadline; without the pause every attempt could fall inside it and nothing would commit.
    if (reply.status === 409) await sleep(conflictBackoffMs);
  };
  const client = async (clientId: number) => {
    for (let n = 0; n < txnsPerClient; n += 1) await transaction(clientId, n);
  };

  // Act: armed at the start and again half way, so each run crashes more than once.
  await arm();
  await Promise.all(Array.from({ length: clientCount }, (_, n) => client(n)));
  const faultsMid = await api.faults();
  await arm();
  await Promise.all(Array.from({ length: clientCount }, (_, n) => client(clientCount + n)));
  // Not vacuous by construction: a crash with an unknown outcome, then a commit. Contention can keep the
  // concurrent rounds from either; one client alone then sends transactions (armed, then not) until each happened.
  const drivenClient = 2 * clientCount;
  const unknownOutcomes = () => attempts.filter((attempt) => isUnknownOutcome(attempt.reply, atomic)).length;
  const explain = async () => `outcomes ${JSON.stringify(tallyOutcomes(attempts))}, ${describeFaults(await api.faults())}`;
  await driveUntil(
    `a crash at ${point} answered as an unknown outcome`,
    async () => ((await api.faults()).crashed[point] ?? 0) >= 1 && unknownOutcomes() >= 1,
    async (n) => {
      if ((await api.faults()).crashes.length === 0) await api.setFaults({ crashes: [{ point, after: 0, times: 1 }] });
      await transaction(drivenClient, n);
    },
    { stepsMax: driveStepsMax, boundMs: driveBoundMs, explain },
  );
  const faultStatus = await api.faults();
  await api.setFaults({});
  await driveUntil(
    'a transaction acknowledged as committed',
    async () => attempts.some((attempt) => attempt.reply.status === 200),
    (n) => transaction(drivenClient + 1, n),
    { stepsMax: driveStepsMax, boundMs: driveBoundMs, explain },
  );
  const crashed = faultStatus.crashed[point] ?? 0;
  const txids = attempts.flatMap((attempt) => (attempt.reply.txid ? [attempt.reply.txid] : []));
  const recovery = await waitForTxnRecovery({ ddb, ring, txids, boundMs: recoveryBoundMs });

  // Assess: each transaction's own keys (one per shard) hold its value at version 1, all or none.
  const violations: string[] = [];
  let committedCount = 0;
  for (const attempt of attempts) {
    const reads = await Promise.all(attempt.keys.map((key) => api.get(key, 'strong')));
    const failed = reads.filter((read) => read.status !== 200 && read.status !== 404);
    if (failed.length > 0) unexpected.push(`${attempt.tag}: strong reads answered ${failed.map((read) => read.status).join(',')}`);
    const present = reads.filter((read) => read.status === 200);
    const visible = present.length === attempt.keys.length;
    if (present.length > 0 && !visible)
      violations.push(`${attempt.tag}: ${present.length} of its ${attempt.keys.length} writes are visible`);
    for (const read of present) {
      if (read.value !== attempt.tag || read.version !== 1) violations.push(`${attempt.tag}: a key holds ${read.value}@${read.version}`);
    }
    if (visible) committedCount += 1;
    const { reply } = attempt;
    const status = reply.txid ? recovery.statuses.get(reply.txid) : undefined;
    if (reply.status === 200 && !visible) violations.push(`${attempt.tag}: acknowledged committed, but not visible`);
    if (reply.status === 200 && reply.writes!.some((write) => write.key !== hotKey && write.version !== 1)) {
      violations.push(`${attempt.tag}: acknowledged versions ${JSON.stringify(reply.writes)}`);
    }
    if ((reply.status === 409 || reply.status === 412) && visible)
      violations.push(`${attempt.tag}: answered ${reply.status} ${reply.code}, but its writes are visible`);
    if (reply.txid && status !== undefined && status !== (visible ? 'committed' : 'aborted')) {
      violations.push(`${attempt.tag}: record ${reply.txid} is ${status}, but its writes are ${visible ? '' : 'not '}visible`);
    }
    // A one-shard transaction commits without a record; every other one that committed has one.
    if (reply.txid && status === undefined && visible && !atomic)
      violations.push(`${attempt.tag}: visible, but has no record ${reply.txid}`);
  }
  // The hot key: written once by every committed transaction, so its version counts them.
  const hot = await api.get(hotKey, 'strong');
  const hotVersion = hot.status === 200 ? hot.version! : 0;
  if (hotVersion !== committedCount) violations.push(`hot key at v${hotVersion}, but ${committedCount} transactions committed`);
  if (hot.status === 200 && !attempts.some((attempt) => attempt.tag === hot.value)) violations.push(`hot key holds ${hot.value}`);

  const outcomes = tallyOutcomes(attempts);
  const context =
    `keys ${prefix}*, outcomes ${JSON.stringify(outcomes)}, committed ${committedCount}, crashed ${crashed}x ` +
    `(${faultsMid.crashed[point] ?? 0} in the first half), recovery ${recovery.elapsedMs} ms`;
  if (process.env.RINGSTORE_FAULT_VERBOSE === '1') console.log(`${point}: ${context}`);
  expect({ context, crashed: crashed >= 1, outcomeUnknown: unknownOutcomes() >= 1 }).toEqual({
    context,
    crashed: true,
    outcomeUnknown: true,
  });
  expect({ context, unexpected }).toEqual({ context, unexpected: [] });
  expect({ context, recovered: recovery.recovered, intents: recovery.intents, pending: recovery.pending }).toEqual({
    context,
    recovered: true,
    intents: [],
    pending: [],
  });
  expect({ context, violations }).toEqual({ context, violations: [] });
  // Something committed, so the checks judged real data.
  expect({ context, committed: committedCount > 0 }).toEqual({ context, committed: true });
}

/** How many attempts ended in each answer (`status code`). */
function tallyOutcomes(attempts: readonly Attempt[]): Record<string, number> {
  return attempts.reduce<Record<string, number>>((tally, attempt) => {
    const name = `${attempt.reply.status}${attempt.reply.code ? ` ${attempt.reply.code}` : ''}`;
    tally[name] = (tally[name] ?? 0) + 1;
    return tally;
  }, {});
}
