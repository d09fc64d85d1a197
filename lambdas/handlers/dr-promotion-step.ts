// The tasks of the promotion workflow (schemas/dr-promotion-state-machine.asl.json): one action per
// state, each a call into PromotionService. Errors are renamed for the machine's Retry and Catch:
// `Ringstore.Retryable` (throttling, an unreachable table) or `Ringstore.Failed`.
import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import { isRingstoreError } from '../core/errors';
import type { PromotionService } from '../core/dr-promotion';
import type { PromotionReport, PromotionRequest } from '../ports';
import { flushMetrics, type MetricsSink } from '../http/metrics';

export type PromotionStepEvent =
  | { action: 'begin' | 'fence' | 'drain' | 'awaitValues' | 'markLost' | 'open'; promotion: PromotionRequest }
  | {
      action: 'finish';
      promotion: PromotionRequest;
      fence: { fencedAtMs: number };
      drain: PromotionReport['drain'];
      values: PromotionReport['values'];
      lost: PromotionReport['lost'];
      open: { promotedAtMs: number };
    }
  | { action: 'fail'; promotion: PromotionRequest; failure: { Error?: string; Cause?: string } };

async function step(promotions: PromotionService, event: PromotionStepEvent): Promise<unknown> {
  const { promotion } = event;
  switch (event.action) {
    case 'begin':
      return promotions.begin(promotion);
    case 'fence':
      return promotions.fence(promotion);
    case 'drain':
      return promotions.drain();
    case 'awaitValues':
      return promotions.awaitValues();
    case 'markLost':
      return promotions.markLost();
    case 'open':
      return promotions.open(promotion);
    case 'finish':
      return promotions.finish(promotion, {
        fencedAtMs: event.fence.fencedAtMs,
        drain: event.drain,
        values: event.values,
        lost: event.lost,
        promotedAtMs: event.open.promotedAtMs,
      });
    case 'fail':
      return promotions.fail(promotion, `${event.failure.Error ?? 'Error'}: ${event.failure.Cause ?? ''}`);
  }
}

export interface DrPromotionStepDeps {
  promotions: PromotionService;
  /** The DR metrics (keys marked lost), flushed after every step. */
  metrics: MetricsSink;
  logger: Logger;
}

export function drPromotionStepHandler({ promotions, metrics, logger }: DrPromotionStepDeps) {
  return middy<PromotionStepEvent, unknown>()
    .use(flushMetrics(metrics))
    .handler(async (event) => {
      logger.info('promotion step', { action: event.action, promotion: event.promotion.id });
      try {
        return await step(promotions, event);
      } catch (error) {
        if (!isRingstoreError(error)) throw error;
        const renamed = new Error(JSON.stringify({ code: error.code, message: error.message }));
        renamed.name = error.retryable ? 'Ringstore.Retryable' : 'Ringstore.Failed';
        throw renamed;
      }
    });
}
