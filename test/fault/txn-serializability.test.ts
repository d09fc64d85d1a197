// Transactions are serializable: concurrent clients run random read-write, read-only and write-only
// transactions over a few hot keys on every shard (with coordinator crashes for a while), and the
// recorded history is checked for cycles in Adya's serialization graph (test/serializability). With
// read-set validation deliberately skipped (broken mode txnSkipValidation) the same check must fail.
import { type BrokenMode, transactionCrashPoints } from '../../lambdas/ports';
import { type CheckResult, type History, type ReadObservation, type TxnObservation, checkSerializable } from '../serializability/check';
import {
  baseSeed,
  deriveSeed,
  type FaultCloud,
  keysOwnedByEachShard,
  Rng,
  sleep,
  startFaultCloud,
  type TxnOpInput,
  waitForTxnRecovery,
  withSeed,
} from './support';

const clientCount = 8;
/** Hot keys: every shard owns at least one. */
const keysPerShard = 2;
/** Transactions each client attempts (counts, not time: the progress checks must not depend on speed). */
const attemptsPerClient = 25;
const brokenAttemptsPerClient = 12;
/** How often the run looks whether a crash is armed, while crashes are wanted. */
const crashCheckMs = 250;
/** What the crash run must see, at least; its clients go on past their count (up to extraMsMax) until it has. */
const minimums = { 'readWrite.committed': 15, 'readOnly.committed': 5, 'writeOnly.committed': 3, unknown: 1 } as const;
const extraMsMax = 60_000;
const brokenRoundsMax = 3;
/** Short deadlines: a crashed coordinator's intents are cleared within a few seconds. */
const txnTimeoutMs = 1_000;
const recoveryBoundMs = 30_000;

const seed = baseSeed();
let cloud: FaultCloud;

beforeAll(async () => {
  cloud = await startFaultCloud('txnser', { RINGSTORE_MAINTENANCE_INTERVAL_MS: '0' });
}, 240_000);

afterAll(async () => {
  await cloud?.close();
});

interface Run {
  history: History;
  result: CheckResult;
  counts: Record<string, number>;
  unexpected: string[];
  context: string;
}

describe('serializability of transactions', () => {
  it(`holds for ${clientCount} concurrent clients over hot keys on every shard, through coordinator crashes`, async () => {
    const runSeed = deriveSeed(seed, 'txn-serializable');
    await withSeed(seed, async () => {
      // Act
      const run = await runWorkload(new Rng(runSeed), { name: 'ok', attemptsPerClient, broken: [], crashes: true, minimums });

      // Assess: not vacuous (read-write, read-only and unknown outcomes happened), and no anomaly.
      const { context, counts } = run;
      expect({ context, unexpected: run.unexpected }).toEqual({ context, unexpected: [] });
      expect({
        context,
        readWrite: (counts['readWrite.committed'] ?? 0) >= minimums['readWrite.committed'],
        readOnly: (counts['readOnly.committed'] ?? 0) >= minimums['readOnly.committed'],
        writeOnly: (counts['writeOnly.committed'] ?? 0) >= minimums['writeOnly.committed'],
        crashesFelt: (counts.unknown ?? 0) >= minimums.unknown,
      }).toEqual({ context, readWrite: true, readOnly: true, writeOnly: true, crashesFelt: true });
      expect({ context, anomalies: run.result.anomalies }).toEqual({ context, anomalies: [] });
    });
  });

  it('is caught by the checker when read-set validation is skipped (broken mode txnSkipValidation)', async () => {
    await withSeed(seed, async () => {
      // Act: rounds (each seeded) until the checker finds a cycle, bounded.
      const rounds: Run[] = [];
      for (let round = 0; round < brokenRoundsMax && !rounds.some((run) => hasCycle(run.result)); round += 1) {
        rounds.push(
          await runWorkload(new Rng(deriveSeed(seed, `txn-broken-${round}`)), {
            name: `broken${round}`,
            attemptsPerClient: brokenAttemptsPerClient,
            broken: ['txnSkipValidation'],
            crashes: false,
          }),
        );
      }

      // Assess
      const caught = rounds.find((run) => hasCycle(run.result));
      const context = rounds.map((run) => run.context).join('; ');
      expect({ context, caught: caught !== undefined }).toEqual({ context, caught: true });
      expect(caught!.result.anomalies.some((anomaly) => anomaly.kind === 'G2')).toBe(true);
    });
  });
});

const hasCycle = (result: CheckResult) => result.anomalies.some((anomaly) => anomaly.cycle !== undefined);

/** Runs the clients, records the history, waits for recovery, and checks it. */
async function runWorkload(
  rng: Rng,
  options: { name: string; attemptsPerClient: number; broken: BrokenMode[]; crashes: boolean; minimums?: Readonly<Record<string, number>> },
): Promise<Run> {
  // Prepare
  const { api, ring, ddb } = cloud;
  const prefix = `ser-${options.name}-${rng.int(0, 1e9).toString(36)}-`;
  const keys = [...keysOwnedByEachShard(ring, prefix, keysPerShard).values()].flat();
  const txns: TxnObservation[] = [];
  const aborted: string[] = [];
  const txids: string[] = [];
  const unexpected: string[] = [];
  const counts: Record<string, number> = { unknown: 0, aborted: 0 };
  const count = (name: string) => (counts[name] = (counts[name] ?? 0) + 1);
  await api.setFaults({ broken: options.broken });

  let attempted = 0;
  // The clients go on past their count (bounded) until the run has seen what makes it not vacuous.
  const enough = () => Object.entries(options.minimums ?? {}).every(([name, min]) => (counts[name] ?? 0) >= min);
  let extraUntil: number | undefined;
  const goOn = (n: number) => {
    if (n < options.attemptsPerClient) return true;
    extraUntil ??= Date.now() + extraMsMax;
    return !enough() && Date.now() < extraUntil;
  };
  const client = async (clientId: number, clientRng: Rng) => {
    /** The newest version this client saw of each key, for ifVersion and check. */
    const known = new Map<string, number>();
    for (let n = 0; goOn(n); n += 1, attempted += 1) {
      const id = `c${clientId}-${n}`;
      const { ops, kind } = randomTxn(clientRng, keys, known, id);
      const reply = await api.txn(ops, { timeoutMs: txnTimeoutMs });
      if (reply.txid) txids.push(reply.txid);
      if (reply.status === 200) {
        count(`${kind}.committed`);
        const reads: ReadObservation[] = reply.reads!.map((read) => ({
          key: read.key,
          version: read.found ? read.version! : 0,
          ...(read.found && read.value ? { writer: read.value } : {}),
        }));
        for (const op of ops) if (op.op === 'check') reads.push({ key: op.key, version: op.ifVersion });
        txns.push({ id, outcome: 'committed', reads, writes: reply.writes! });
        for (const read of reads) known.set(read.key, Math.max(known.get(read.key) ?? 0, read.version));
        for (const write of reply.writes!) known.set(write.key, Math.max(known.get(write.key) ?? 0, write.version));
      } else if (reply.status === 409 || reply.status === 412 || reply.status === 404) {
        count('aborted');
        aborted.push(id);
      } else if (reply.status === 503 || reply.status === 502 || reply.status === 0) {
        // Outcome unknown: it may have committed; its reads are not known.
        count('unknown');
        txns.push({ id, outcome: 'unknown', reads: [], writes: ops.filter((op) => op.op === 'put').map((op) => ({ key: op.key })) });
        await sleep(50);
      } else {
        unexpected.push(`${id}: ${reply.status} ${reply.code ?? ''} ${reply.message ?? ''}`);
      }
    }
  };

  // Act: the clients run; for the middle half of the attempts, coordinator crashes are armed.
  const total = clientCount * options.attemptsPerClient;
  let done = false;
  const clients = Promise.all(Array.from({ length: clientCount }, (_, n) => client(n, new Rng(rng.int(0, 2 ** 31))))).finally(
    () => (done = true),
  );
  // A crash is armed when none is (re-arming would reset its count of reaches: on a slow run it would never
  // fire), from a quarter of the attempts until three quarters, and on until one was felt.
  while (options.crashes && !done && (attempted < (total * 3) / 4 || (counts.unknown ?? 0) === 0)) {
    if (attempted >= total / 4 && (await api.faults()).crashes.length === 0)
      await api.setFaults({ crashes: [{ point: rng.pick(transactionCrashPoints), after: rng.int(0, 3) }], broken: options.broken });
    await sleep(crashCheckMs);
  }
  await api.setFaults({ broken: options.broken });
  await clients;
  await api.setFaults({});

  // Recovery: the sweeper finishes what crashed; then the final state of every key is observed.
  const recovery = await waitForTxnRecovery({ ddb, ring, txids, boundMs: recoveryBoundMs });
  const observations: NonNullable<History['observations']> = [];
  for (const key of keys) {
    const read = await api.get(key, 'strong');
    if (read.status === 200) observations.push({ key, version: read.version!, writer: read.value! });
    else if (read.status !== 404) unexpected.push(`final read of ${key}: ${read.status} ${read.message ?? ''}`);
  }
  if (!recovery.recovered)
    unexpected.push(
      `not recovered after ${recovery.elapsedMs} ms: intents ${JSON.stringify(recovery.intents)}, pending ${recovery.pending.join(',')}`,
    );

  const history: History = { txns, aborted, observations };
  const result = checkSerializable(history);
  const cycle = result.anomalies.find((anomaly) => anomaly.cycle);
  const context =
    `${options.name}: keys ${prefix}* ${JSON.stringify(counts)}, graph ${result.nodes} nodes ${result.edges} edges, ` +
    `${result.anomalies.length} anomalies${cycle ? ` (first: ${cycle.message})` : ''}`;
  if (process.env.RINGSTORE_FAULT_VERBOSE === '1') console.log(context);
  return { history, result, counts, unexpected, context };
}

/**
 * One random transaction: read-only (gets), write-only (puts, some with ifVersion), or read-write
 * (gets of some keys, puts of others or the same, sometimes a check). Gets come before puts of the same
 * key, so every get reads the state before the transaction. Every put writes the transaction's id.
 */
function randomTxn(rng: Rng, keys: readonly string[], known: ReadonlyMap<string, number>, id: string): { ops: TxnOpInput[]; kind: string } {
  const shuffled = [...keys].sort(() => rng.next() - 0.5);
  const roll = rng.next();
  if (roll < 0.2) {
    return { kind: 'readOnly', ops: shuffled.slice(0, rng.int(2, 4)).map((key) => ({ op: 'get', key })) };
  }
  if (roll < 0.35) {
    const ops: TxnOpInput[] = shuffled.slice(0, rng.int(1, 2)).map((key) => ({
      op: 'put',
      key,
      value: id,
      ...(rng.chance(0.3) ? { ifVersion: known.get(key) ?? 0 } : {}),
    }));
    return { kind: 'writeOnly', ops };
  }
  const readCount = rng.int(1, 3);
  const reads = shuffled.slice(0, readCount);
  // Writes: another key (write skew shape) or one just read (read-modify-write), or both.
  const writes = new Set<string>([rng.chance(0.6) ? shuffled[readCount]! : rng.pick(reads)]);
  if (rng.chance(0.3)) writes.add(shuffled[readCount + 1]!);
  const ops: TxnOpInput[] = [
    ...reads.map((key): TxnOpInput => ({ op: 'get', key })),
    ...[...writes].map((key): TxnOpInput => ({ op: 'put', key, value: id })),
  ];
  const unused = shuffled.slice(readCount + 2).filter((key) => !writes.has(key));
  if (rng.chance(0.2) && unused.length > 0) ops.push({ op: 'check', key: unused[0]!, ifVersion: known.get(unused[0]!) ?? 0 });
  return { kind: 'readWrite', ops };
}
