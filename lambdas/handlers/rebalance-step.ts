// The task of the rebalance state machine (schemas/rebalance-state-machine.asl.json): `advance` moves the
// rebalance on for one bounded step and returns its status; `halt` pauses it with the reason its steps
// kept failing.
import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import { z } from 'zod';
import type { RebalanceService } from '../core/rebalance-service';

export interface RebalanceStepDeps {
  rebalances: RebalanceService;
  logger: Logger;
}

const RebalanceStepEvent = z.discriminatedUnion('action', [
  z.object({ action: z.literal('advance'), rebalance: z.object({ id: z.string().min(1) }) }),
  z.object({
    action: z.literal('halt'),
    rebalance: z.object({ id: z.string().min(1) }),
    failure: z.object({ Error: z.string().optional(), Cause: z.string().optional() }).optional(),
  }),
]);

export function rebalanceStepHandler({ rebalances, logger }: RebalanceStepDeps) {
  return middy<unknown, unknown>().handler(async (raw) => {
    const event = RebalanceStepEvent.parse(raw);
    if (event.action === 'halt') {
      const reason = `${event.failure?.Error ?? 'error'}: ${event.failure?.Cause ?? 'no cause given'}`;
      logger.error('rebalance stopped: its step kept failing', { rebalance: event.rebalance.id, reason });
      const job = await rebalances.halt(event.rebalance.id, reason);
      return { status: job.status };
    }
    const job = await rebalances.advance(event.rebalance.id).catch((error: unknown) => {
      // The state machine retries the step; the log says what it met (a throttled or unreachable table).
      logger.warn('rebalance step failed; it is retried', { rebalance: event.rebalance.id, error });
      throw error;
    });
    const moved = job.ranges.filter((range) => range.stage === 'moved' || range.stage === 'cleaned').length;
    logger.info('rebalance step', { rebalance: job.id, status: job.status, moved, ranges: job.ranges.length });
    return { status: job.status, moved, ranges: job.ranges.length };
  });
}
