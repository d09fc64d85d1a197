// Strong operations are linearizable per key through shard outages: concurrent clients read, write,
// compare-and-set and create on a few keys while a replica shard (and, for a while, one key's owner)
// is down; Porcupine (test/linearizability) checks the recorded history. The deliberately broken mode
// (strong reads from a replica) must be caught by the same check, so a pass means something.
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildLincheck, checkLinearizable, type LinearizabilityResult } from '../linearizability/check';
import { type History, HistoryRecorder, type OperationInput, type PendingOperation } from '../linearizability/history';
import {
  baseSeed,
  type Consistency,
  deriveSeed,
  type FaultCloud,
  type FaultPlan,
  localNamespace,
  type Reply,
  replicaTablesOf,
  Rng,
  sleep,
  startFaultCloud,
  withSeed,
} from './support';

const clientCount = 8;
const keyCount = 3;
/** How long the clients run; the outage schedule is in fractions of it. */
const workloadMs = 6_000;
/** The broken-mode workload is shorter: a stale read shows up within a few write-then-read pairs. */
const brokenWorkloadMs = 2_500;
const brokenAttemptsMax = 3;
/** A client that saw a 5xx backs off, so an outage does not fill the history with unknown outcomes. */
const backoffAfterFailureMs = 100;
const checkTimeoutSeconds = 60;

const seed = baseSeed();
let cloud: FaultCloud;

beforeAll(async () => {
  // A quick maintenance timer: shards that come back replay their hints within the run.
  const [started] = await Promise.all([startFaultCloud('lin', { RINGSTORE_MAINTENANCE_INTERVAL_MS: '500' }), buildLincheck()]);
  cloud = started;
}, 300_000);

afterAll(async () => {
  await cloud?.close();
});

interface Workload {
  /** Label of the run, for keys and values. */
  name: string;
  durationMs: number;
  writeConsistency: Consistency;
  /** After every acknowledged write, the same client reads the key strongly at once. */
  readAfterWrite: boolean;
  /** Broken modes for the whole run (plus the outage schedule). */
  broken: NonNullable<FaultPlan['broken']>;
}

interface WorkloadRun {
  history: History;
  historyPath: string;
  keys: string[];
  /** Answers no history status covers (4xx other than 404/412, 500): each is a bug of its own. */
  unexpected: string[];
  counts: Record<string, number>;
}

describe('linearizability of strong operations', () => {
  it(`holds for ${clientCount} concurrent clients while a replica shard, then a key's owner, goes down and comes back`, async () => {
    const runSeed = deriveSeed(seed, 'outage');
    const replay = `RINGSTORE_FAULT_SEED=${seed} npx jest --selectProjects fault -t 'holds' test/fault/linearizability.test.ts`;
    await withSeed(seed, replay, async () => {
      // Act
      const run = await runWorkload(new Rng(runSeed), {
        name: 'outage',
        durationMs: workloadMs,
        writeConsistency: 'strong',
        readAfterWrite: false,
        broken: [],
      });
      const result = await checkLinearizable(run.history, { timeoutSeconds: checkTimeoutSeconds });

      // Assess: the history is not vacuous (reads and writes succeeded, outages produced failures),
      // and it linearizes.
      const context = `history ${run.historyPath} (${JSON.stringify(run.counts)})`;
      expect({ context, unexpected: run.unexpected }).toEqual({ context, unexpected: [] });
      const unknowns = Object.entries(run.counts)
        .filter(([name]) => /^\w+\.unknown$/.test(name))
        .reduce((sum, [, n]) => sum + n, 0);
      expect({
        context,
        readsOk: run.counts['read.ok']! > 20,
        writesOk: run.counts['write.ok']! > 10,
        casOk: run.counts['cas.ok']! > 0,
        outageFelt: unknowns > 0,
      }).toEqual({ context, readsOk: true, writesOk: true, casOk: true, outageFelt: true });
      expect({ context, result }).toEqual({ context, result: { ...result, linearizable: true, failingKeys: [] } });
      // Kept only when the test fails, for replay and Porcupine's visualization.
      rmSync(run.historyPath, { force: true });
    });
  });

  it('catches the deliberately broken mode (strong reads served by a lagging replica)', async () => {
    const replay = `RINGSTORE_FAULT_SEED=${seed} npx jest --selectProjects fault -t 'broken' test/fault/linearizability.test.ts`;
    await withSeed(seed, replay, async () => {
      // Act: eventual writes (replicas lag behind the owner) each followed by a strong read from the
      // same client; a stale read is likely within a few pairs, and the run is retried (bounded) if not.
      const attempts: Array<{ historyPath: string; result: LinearizabilityResult }> = [];
      for (let attempt = 0; attempt < brokenAttemptsMax; attempt += 1) {
        const run = await runWorkload(new Rng(deriveSeed(seed, `broken-${attempt}`)), {
          name: `broken${attempt}`,
          durationMs: brokenWorkloadMs,
          writeConsistency: 'eventual',
          readAfterWrite: true,
          broken: ['strongReadFromReplica'],
        });
        expect({ historyPath: run.historyPath, unexpected: run.unexpected }).toEqual({ historyPath: run.historyPath, unexpected: [] });
        const result = await checkLinearizable(run.history, { timeoutSeconds: checkTimeoutSeconds });
        attempts.push({ historyPath: run.historyPath, result });
        if (result.linearizable === false) break;
      }

      // Assess
      const last = attempts.at(-1)!;
      expect({ attempts, linearizable: last.result.linearizable }).toEqual({ attempts, linearizable: false });
      expect(last.result.failingKeys.length).toBeGreaterThan(0);
      for (const { historyPath } of attempts) rmSync(historyPath, { force: true });
    });
  });
});

/**
 * Runs `clientCount` clients on `keyCount` keys for `durationMs` while the outage schedule runs:
 * at 25% a replica shard (a non-owner replica of every key) goes down, at 45% the owner of the first
 * key too, at 60% the owner returns, at 70% the replica. Records every call in a history.
 */
async function runWorkload(rng: Rng, workload: Workload): Promise<WorkloadRun> {
  const { api } = cloud;
  const { keys, replicaDown, ownerDown } = chooseKeys(`lin-${workload.name}-${rng.int(0, 1e9).toString(36)}-`);
  const recorder = new HistoryRecorder();
  const unexpected: string[] = [];
  const counts: Record<string, number> = {};
  const count = (name: string) => (counts[name] = (counts[name] ?? 0) + 1);
  const { broken } = workload;
  const plan = (downShards: string[]) => api.setFaults({ broken, downShards });

  await plan([]);
  const started = Date.now();
  const elapsed = () => (Date.now() - started) / workload.durationMs;
  const schedule = (async () => {
    const steps: Array<[number, string[]]> = [
      [0.25, [replicaDown]],
      [0.45, [replicaDown, ownerDown]],
      [0.6, [replicaDown]],
      [0.7, []],
    ];
    for (const [at, down] of steps) {
      await sleep(Math.max(0, at * workload.durationMs - (Date.now() - started)));
      await plan(down);
    }
  })();

  const client = async (clientId: number, clientRng: Rng): Promise<void> => {
    /** The newest version this client saw per key: the version its compare-and-sets expect. */
    const seen = new Map<string, number>();
    /**
     * Keys whose last call failed with an unknown outcome: the client reads them strongly until a read
     * answers (as the API advises: "read strongly to see whether it applied"). This keeps outages from
     * filling the history with unknown writes, each of which the checker may place anywhere after it.
     */
    const probing = new Set<string>();
    let sequence = 0;
    while (elapsed() < 1) {
      const key = clientRng.pick(keys);
      const value = `c${clientId}-${sequence}`;
      sequence += 1;
      const roll = clientRng.next();
      let input: OperationInput;
      if (probing.has(key)) input = { op: 'read' };
      else if (workload.readAfterWrite) input = roll < 0.6 ? { op: 'write', value } : { op: 'read' };
      else if (roll < 0.4) input = { op: 'read' };
      else if (roll < 0.65) input = { op: 'write', value };
      else if (roll < 0.85) input = { op: 'cas', value, ifVersion: seen.get(key) ?? 1 };
      else if (roll < 0.95) input = { op: 'create', value };
      else input = { op: 'delete', ifVersion: seen.get(key) ?? 1 };

      const reply = await perform(clientId, key, input);
      if (reply.status >= 500 || reply.status === 0) probing.add(key);
      else if (input.op === 'read') probing.delete(key);
      if (reply.status === 200 && reply.version !== undefined) seen.set(key, Math.max(seen.get(key) ?? 0, reply.version));
      if (reply.status === 200 && input.op !== 'read' && workload.readAfterWrite) {
        const read = await perform(clientId, key, { op: 'read' });
        if (read.status === 200) seen.set(key, Math.max(seen.get(key) ?? 0, read.version!));
      }
      if (reply.status >= 500 || reply.status === 0) await sleep(backoffAfterFailureMs);
      else await sleep(clientRng.int(0, 5));
    }
  };

  /** One call, recorded: 200 ok, 404 notFound, 412 preconditionFailed, anything else unknown. */
  const perform = async (clientId: number, key: string, input: OperationInput): Promise<Reply> => {
    const pending: PendingOperation = recorder.invoke(clientId, key, input);
    const consistency = input.op === 'read' ? 'strong' : workload.writeConsistency;
    let reply: Reply;
    switch (input.op) {
      case 'read':
        reply = await api.get(key, 'strong');
        break;
      case 'write':
        reply = await api.put(key, input.value, { consistency });
        break;
      case 'cas':
        reply = await api.put(key, input.value, { consistency, ifMatch: input.ifVersion });
        break;
      case 'create':
        reply = await api.put(key, input.value, { consistency, ifNoneMatch: true });
        break;
      case 'delete':
        reply = await api.delete(key, { consistency, ...(input.ifVersion === undefined ? {} : { ifMatch: input.ifVersion }) });
        break;
    }
    if (reply.status === 200) {
      pending.ok(input.op === 'read' ? { value: reply.value!, version: reply.version! } : { version: reply.version! });
      count(`${input.op}.ok`);
    } else if (reply.status === 404) {
      pending.fail({ status: 'notFound' });
      count(`${input.op}.notFound`);
    } else if (reply.status === 412) {
      pending.fail({ status: 'preconditionFailed' });
      count(`${input.op}.preconditionFailed`);
    } else {
      pending.unknown();
      count(`${input.op}.unknown`);
      count(`${input.op}.unknown.${reply.status}${reply.code ? `.${reply.code}` : ''}`);
      if (reply.status !== 0 && reply.status !== 502 && reply.status !== 503) {
        unexpected.push(`${input.op} of ${key} by client ${clientId}: ${reply.status} ${reply.code ?? ''} ${reply.message ?? ''}`);
      }
    }
    return reply;
  };

  await Promise.all(Array.from({ length: clientCount }, (_, clientId) => client(clientId, new Rng(rng.int(0, 2 ** 31)))));
  await schedule;
  await api.setFaults({});
  // A read whose answer never came changes nothing and constrains nothing: leaving it out keeps the
  // check small (the checker would otherwise try it at every point after its invocation).
  const recorded = recorder.toJSON();
  const history: History = {
    operations: recorded.operations.filter((operation) => !(operation.input.op === 'read' && operation.output.status === 'unknown')),
  };
  const historyPath = join(tmpdir(), `ringstore-lin-${workload.name}-${process.pid}-${Date.now()}.json`);
  writeFileSync(historyPath, JSON.stringify(history));
  if (process.env.RINGSTORE_FAULT_VERBOSE === '1') {
    console.log(
      `${workload.name}: keys ${keys.join(', ')} (owner of the first: ${ownerDown}; replica of all: ${replicaDown}); ` +
        `${history.operations.length} operations in ${historyPath}; ${JSON.stringify(counts)}`,
    );
  }
  return { history, historyPath, keys, unexpected, counts };
}

/**
 * `keyCount` keys and two shards: `replicaDown` replicates every key without owning any (taking it down
 * never fails a write by itself); `ownerDown` owns the first key and no other.
 */
function chooseKeys(prefix: string): { keys: string[]; replicaDown: string; ownerDown: string } {
  const ring = cloud.ring;
  const tables = ring.shards.map((shard) => shard.table);
  for (const replicaDown of tables) {
    for (const ownerDown of tables.filter((table) => table !== replicaDown)) {
      const keys: string[] = [];
      for (let n = 0; keys.length < keyCount && n < 1_000; n += 1) {
        const key = `${prefix}k${n}`;
        const [owner, ...others] = replicaTablesOf(ring, localNamespace, key);
        const ownerFits = keys.length === 0 ? owner === ownerDown : owner !== ownerDown;
        if (ownerFits && owner !== replicaDown && others.includes(replicaDown)) keys.push(key);
      }
      if (keys.length === keyCount) return { keys, replicaDown, ownerDown };
    }
  }
  throw new Error('no pair of shards fits the outage schedule');
}
