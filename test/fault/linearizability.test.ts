// Strong operations are linearizable per key through shard outages: concurrent clients read, write,
// compare-and-set and create on a few keys while a replica shard (and, for a while, one key's owner)
// is down; Porcupine (test/linearizability) checks the recorded history. The deliberately broken mode
// (strong reads from a replica) must be caught by the same check, so a pass means something.
import { rmSync } from 'node:fs';
import { buildLincheck, checkLinearizable } from '../linearizability/check';
import {
  brokenWorkloadMs,
  checkTimeoutSeconds,
  clientCount,
  expectBrokenModeCaught,
  keyCount,
  type Workload,
  type WorkloadRun,
  runWorkload as runSharedWorkload,
  unknownsIn,
  untilOutageFelt,
  workloadMs,
} from './lin-workload';
import { baseSeed, deriveSeed, type FaultCloud, localNamespace, replicaTablesOf, Rng, startFaultCloud, withSeed } from './support';

const seed = baseSeed();
/** What the outage run must see (its clients go on past the duration until it has): not vacuous by construction. */
const minimums = { 'read.ok': 21, 'write.ok': 11, 'cas.ok': 1 } as const;
let cloud: FaultCloud;

beforeAll(async () => {
  // A quick maintenance timer: shards that come back replay their hints within the run.
  const [started] = await Promise.all([startFaultCloud('lin', { RINGSTORE_MAINTENANCE_INTERVAL_MS: '500' }), buildLincheck()]);
  cloud = started;
}, 300_000);

afterAll(async () => {
  await cloud?.close();
});

/**
 * The workload on keys chosen for the outage schedule: at 25% a replica shard (a non-owner replica of
 * every key) goes down, at 45% the owner of the first key too, at 60% the owner returns, at 70% the replica.
 */
function runWorkload(rng: Rng, workload: Omit<Workload, 'outages'>): Promise<WorkloadRun> {
  const { keys, replicaDown, ownerDown } = chooseKeys(`lin-${workload.name}-${rng.int(0, 1e9).toString(36)}-`);
  // The owner comes back only once a client has felt it down (bounded): the outage is felt by construction.
  const outages: Workload['outages'] = [
    [0.25, [replicaDown]],
    [0.45, [replicaDown, ownerDown]],
    [0.6, [replicaDown], (counts) => untilOutageFelt(counts)],
    [0.7, []],
  ];
  return runSharedWorkload(cloud, rng, { ...workload, outages }, keys);
}

describe('linearizability of strong operations', () => {
  it(`holds for ${clientCount} concurrent clients while a replica shard, then a key's owner, goes down and comes back`, async () => {
    const runSeed = deriveSeed(seed, 'outage');
    await withSeed(seed, async () => {
      // Act
      const run = await runWorkload(new Rng(runSeed), {
        name: 'outage',
        durationMs: workloadMs,
        writeConsistency: 'strong',
        readAfterWrite: false,
        broken: [],
        minimums,
      });
      const result = await checkLinearizable(run.history, { timeoutSeconds: checkTimeoutSeconds });

      // Assess: the history is not vacuous (reads and writes succeeded, outages produced failures),
      // and it linearizes.
      const context = `history ${run.historyPath} (${JSON.stringify(run.counts)})`;
      expect({ context, unexpected: run.unexpected }).toEqual({ context, unexpected: [] });
      expect({
        context,
        readsOk: (run.counts['read.ok'] ?? 0) >= minimums['read.ok'],
        writesOk: (run.counts['write.ok'] ?? 0) >= minimums['write.ok'],
        casOk: (run.counts['cas.ok'] ?? 0) >= minimums['cas.ok'],
        outageFelt: unknownsIn(run.counts) > 0,
      }).toEqual({ context, readsOk: true, writesOk: true, casOk: true, outageFelt: true });
      expect({ context, result }).toEqual({ context, result: { ...result, linearizable: true, failingKeys: [] } });
      // Kept only when the test fails, for replay and Porcupine's visualization.
      rmSync(run.historyPath, { force: true });
    });
  });

  it('catches the deliberately broken mode (strong reads served by a lagging replica)', async () => {
    await withSeed(seed, async () => {
      // Act: eventual writes (replicas lag behind the owner) each followed by a strong read from the
      // same client; a stale read is likely within a few pairs, and the run is retried (bounded) if not.
      await expectBrokenModeCaught((attempt) =>
        runWorkload(new Rng(deriveSeed(seed, `broken-${attempt}`)), {
          name: `broken${attempt}`,
          durationMs: brokenWorkloadMs,
          writeConsistency: 'eventual',
          readAfterWrite: true,
          broken: ['strongReadFromReplica'],
          // Enough write-then-read pairs whatever the machine's load (a loaded run makes few in its duration).
          minimums: { 'write.ok': 20, 'read.ok': 20 },
        }),
      );
    });
  });
});

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
