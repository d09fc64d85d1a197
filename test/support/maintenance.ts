// What the unit suites that run a MaintenanceService for its hinted handoff give it: small replay pages,
// no anti-entropy slice, no pacing and no recovery settle, so one run does one whole handoff pass.
import type { MaintenanceDeps } from '../../lambdas/core/maintenance';

export const handoffOnlyLimits: MaintenanceDeps['limits'] = {
  hintReplayPageSize: 10,
  hintReplayConcurrency: 2,
  antiEntropyRangesPerRun: 0,
  antiEntropyMinIntervalMs: 0,
  recoverySettleMs: 0,
};
