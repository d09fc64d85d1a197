// Eventual mode: after a burst of concurrent eventual writes, every replica reaches its owner's version
// through the stream path alone (no maintenance timer, no repair). The time is printed for the
// benchmark docs; the only assertion on time is a generous bound.
import { type FaultCloud, measureBurstConvergence, startFaultCloud } from './support';

const burstWrites = 300;
const burstKeys = 30;
const burstConcurrency = 16;
/** Not a performance target: a run that takes longer than this has lost writes, not speed. */
const convergenceBoundMs = 60_000;

let cloud: FaultCloud;

beforeAll(async () => {
  // Maintenance off: anti-entropy would repair replicas too, and the figure is the stream path's.
  cloud = await startFaultCloud('convergence', { RINGSTORE_MAINTENANCE_INTERVAL_MS: '0' });
}, 240_000);

afterAll(async () => {
  await cloud?.close();
});

describe('eventual consistency', () => {
  it(`brings every replica to the owner's version after a burst of ${burstWrites} eventual writes`, async () => {
    // Act
    const result = await measureBurstConvergence({
      url: cloud.url,
      apiKey: cloud.apiKey,
      dynamodbEndpoint: cloud.dynamodbEndpoint,
      writes: burstWrites,
      keys: burstKeys,
      concurrency: burstConcurrency,
      boundMs: convergenceBoundMs,
    });
    console.log(
      `convergence after burst of ${result.writes} writes: ${result.convergenceMs} ms ` +
        `(${result.keys} keys, ${burstConcurrency} in flight, burst took ${result.burstMs} ms, ${result.acknowledged} acknowledged)`,
    );

    // Assess: every write was acknowledged (no faults are injected), and the replicas converged.
    expect(result.failures).toEqual([]);
    expect(result.acknowledged).toBe(burstWrites);
    expect({ converged: result.converged, divergent: result.divergent }).toEqual({ converged: true, divergent: [] });
  });
});
