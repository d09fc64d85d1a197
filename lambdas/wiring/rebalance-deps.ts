// Builders of the deps of rebalancing's handlers (docs/rebalancing.md): the workflow's step, and the admin API's
// rebalance routes (admin-deps.ts), which ask for the workflow's starter and the ring's record per request.
import type { RebalanceRoutesDeps } from '../handlers/admin-rebalance-routes';
import type { RebalanceStepDeps } from '../handlers/rebalance-step';
import { ringStore } from './control';
import { rebalanceService, rebalanceStarter } from './rebalance';
import type { Wiring } from './wiring';

export function rebalanceStepDeps(wiring: Wiring): RebalanceStepDeps {
  return { rebalances: rebalanceService(wiring), logger: wiring.logger };
}

export function rebalanceRoutesDeps(wiring: Wiring): RebalanceRoutesDeps {
  return {
    rebalances: rebalanceService(wiring),
    logger: wiring.logger,
    // Per request, as before: a handler whose spec may not start rebalances is refused by the request, not at init.
    rebalanceStarter: () => rebalanceStarter(wiring),
    rings: () => ringStore(wiring),
    clock: wiring.clock,
    ids: wiring.ids,
  };
}
