// Strong operations stay linearizable across a failover: concurrent clients read, write, compare-and-set,
// create and delete keys owned by one shard; the shard goes down, automatic failover hands its ranges to
// their replicas, and the shard comes back (as a replica) while the clients keep going. Porcupine checks
// the history. The deliberately broken mode (writes keep routing by the ring they started with, without
// fencing) acknowledges writes on the old owner once it is back, and the same check must catch it.
import { rmSync } from 'node:fs';
import { buildLincheck, checkLinearizable } from '../linearizability/check';
import { checkTimeoutSeconds, clientCount, expectBrokenModeCaught, keyCount, runWorkload } from './lin-workload';
import { tokenOf } from '../../lambdas/core/ring';
import { baseSeed, deriveSeed, type FaultCloud, localNamespace, Rng, sleep, startFaultCloud, withSeed } from './support';

const seed = baseSeed();
/** The victim is down from 1.35 s to 6.75 s of it, or longer until its ranges have failed over. */
const failoverWorkloadMs = 9_000;
/** Calls acknowledged after the victim's return that make the run not vacuous (the clients go on until then). */
const afterReturnOk = { 'write.ok': 10, 'read.ok': 10 } as const;
/** How long the victim stays down at most, waiting for its ranges' failover. */
const handOverBoundMs = 60_000;
/** Down at 0.6 s, back once failed over (about 2 s): the stale writers then write to it for the rest. */
const brokenFailoverWorkloadMs = 6_000;
/** Acknowledged answers after the old owner's return in the broken mode: its stale writes, and reads that see past them. */
const staleStretchOk = { 'write.ok': 16, 'read.ok': 16 } as const;
let cloud: FaultCloud;

beforeAll(async () => {
  // Automatic failover on; a quick maintenance timer brings a returning shard back as a replica.
  const [started] = await Promise.all([
    startFaultCloud('linfailover', { RINGSTORE_MAINTENANCE_INTERVAL_MS: '500', RINGSTORE_AUTO_FAILOVER: '1' }),
    buildLincheck(),
  ]);
  cloud = started;
}, 300_000);

afterAll(async () => {
  await cloud?.close();
});

/** A shard that owns ranges now, and `keyCount` fresh keys it owns. */
async function victimAndKeys(label: string, avoid: ReadonlySet<string>) {
  const ring = await cloud.api.ring();
  const owners = [...new Set(ring.ranges().map((range) => range.owner))].map((id) => ring.shard(id).table);
  const victim = owners.find((table) => !avoid.has(table)) ?? owners[0]!;
  const keys: string[] = [];
  for (let n = 0; keys.length < keyCount; n += 1) {
    const key = `linfo-${label}-${n}`;
    if (ring.ownerOf(tokenOf(localNamespace, key)).table === victim) keys.push(key);
  }
  return { ring, victim, keys };
}

/** Waits until the ring no longer gives `victim` any of `keys` (the failover published). */
async function waitForHandOver(victim: string, keys: readonly string[], boundMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const ring = await cloud.api.ring();
    if (keys.every((key) => ring.ownerOf(tokenOf(localNamespace, key)).table !== victim)) return true;
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
}

describe('linearizability across a failover', () => {
  const failedOver = new Set<string>();

  it(`holds for ${clientCount} clients while a key's owner fails, its ranges fail over, and it returns`, async () => {
    await withSeed(seed, async () => {
      const { ring, victim, keys } = await victimAndKeys('holds', failedOver);
      failedOver.add(victim);
      const run = await runWorkload(
        cloud,
        new Rng(deriveSeed(seed, 'failover')),
        {
          name: 'failover',
          // Longer than the outage suite's: the failover (about 1.5 s here, 3 s and more on a loaded machine)
          // must finish well inside the outage, and the run go on after it.
          durationMs: failoverWorkloadMs,
          writeConsistency: 'strong',
          readAfterWrite: false,
          broken: [],
          // The victim returns once its ranges have new owners, however long the failover takes on a loaded
          // machine; the clients then go on until enough calls were acknowledged after its return.
          outages: [
            [0.15, [victim]],
            [0.75, [], () => waitForHandOver(victim, keys, handOverBoundMs)],
          ],
          afterSchedule: { minMs: 2_000, maxMs: 30_000, untilOk: afterReturnOk },
        },
        keys,
      );
      const result = await checkLinearizable(run.history, { timeoutSeconds: checkTimeoutSeconds });

      const context = `history ${run.historyPath} (${JSON.stringify(run.counts)})`;
      expect({ context, unexpected: run.unexpected }).toEqual({ context, unexpected: [] });
      expect({ context, handedOver: await waitForHandOver(victim, keys) }).toEqual({ context, handedOver: true });
      expect((await cloud.api.ring()).epoch).toBeGreaterThanOrEqual(ring.epoch + 2);
      // Not vacuous: writes and reads were acknowledged after the failover and the victim's return.
      const after = { writesOk: run.countsAfterSchedule['write.ok'] ?? 0, readsOk: run.countsAfterSchedule['read.ok'] ?? 0 };
      const enough = after.writesOk >= afterReturnOk['write.ok'] && after.readsOk >= afterReturnOk['read.ok'];
      expect({ context, after, enough }).toEqual({ context, after, enough: true });
      expect({ context, result }).toEqual({ context, result: { ...result, linearizable: true, failingKeys: [] } });
      rmSync(run.historyPath, { force: true });
    });
  }, 240_000);

  it('catches the deliberately broken mode (writes routed by a stale ring, acknowledged on the old owner)', async () => {
    await withSeed(seed, async () => {
      await expectBrokenModeCaught(async (attempt) => {
        const { victim, keys } = await victimAndKeys(`broken${attempt}`, failedOver);
        failedOver.add(victim);
        // The stale writers return to the old owner early, so most of the run writes there.
        return runWorkload(
          cloud,
          new Rng(deriveSeed(seed, `failover-broken-${attempt}`)),
          {
            name: `failoverbroken${attempt}`,
            // Short and with fewer clients: the check of a history with stale writes is costly.
            durationMs: brokenFailoverWorkloadMs,
            clients: 4,
            // Eventual writes are acknowledged by the owner alone (as linearizable, read strongly from the
            // owner): a stale writer's write then reaches the new owner only later, by replication.
            writeConsistency: 'eventual',
            readAfterWrite: true,
            broken: ['staleRingWrites'],
            // The old owner returns only once its ranges have new owners (however long that takes on a loaded
            // machine), so the stale writers always have the rest of the run to write to it.
            outages: [
              [0.1, [victim]],
              [0.35, [], () => waitForHandOver(victim, keys)],
            ],
            // The stale writes need a stretch after the old owner's return with writes and reads on it, whatever
            // the machine's load: a loaded run that ended with a handful of operations there saw no anomaly.
            afterSchedule: { minMs: 2_000, maxMs: 30_000, untilOk: staleStretchOk },
          },
          keys,
        );
      });
    });
  }, 300_000);
});
