// The steps of one rebalance, in a process of their own: on AWS the rebalance step is a Lambda apart from
// the API's, and never shares an event loop with a client's request. bench:rebalance starts this for the
// removal it runs "apart" (its header), with the local cloud's configuration in RINGSTORE_BENCH_CONFIG, and
// compares it with the same removal run in the local cloud's one process.
//
// Usage (from bench/rebalance.ts): tsx bench/rebalance-apart.ts <rebalance id>
import type { RuntimeConfig } from '../lambdas/config';
import { destroyClients } from '../lambdas/wiring/clients';
import { rebalanceService } from '../lambdas/wiring/rebalance';
import { Wiring } from '../lambdas/wiring/wiring';
import { localCredentials } from '../cdk/local/engines/aws';

/** As the state machine does (schemas/rebalance-state-machine.asl.json): a failed step is retried, eight times at most. */
const stepAttemptsMax = 9;

async function main(): Promise<void> {
  const id = process.argv[2];
  const config = process.env.RINGSTORE_BENCH_CONFIG;
  if (!id || !config) throw new Error('usage: RINGSTORE_BENCH_CONFIG=<json> tsx bench/rebalance-apart.ts <rebalance id>');
  const wiring = Wiring.create({ config: JSON.parse(config) as RuntimeConfig, awsCredentials: { ...localCredentials } });
  const service = rebalanceService(wiring);
  try {
    for (let failures = 0; ;) {
      try {
        const job = await service.advance(id);
        failures = 0;
        if (job.status !== 'running') return;
      } catch (error) {
        failures += 1;
        if (failures >= stepAttemptsMax) throw error;
        await new Promise((resolve) => setTimeout(resolve, 1_000 * failures));
      }
    }
  } finally {
    destroyClients(wiring);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
