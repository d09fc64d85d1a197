// The tasks of the failover state machine (schemas/failover-state-machine.asl.json): one action per
// state, each a call into FailoverService. Errors are renamed for the machine's Retry and Catch:
// `Ringstore.Retryable` (throttling, an unreachable table) or `Ringstore.Failed`.
import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import { performance } from 'node:perf_hooks';
import { isRingstoreError } from '../core/errors';
import {
  NoCandidateError,
  type FailoverService,
  type FenceResult,
  type PublishResult,
  type RangeHandOver,
  type TxnSettlement,
  type TxnsFound,
} from '../core/failover-service';
import type { FailoverMetrics, FailoverRequest } from '../ports';
import type { MetricsSink } from '../http/metrics';

export interface FailoverStepDeps {
  failovers: FailoverService;
  /** Each failover's outcome, flushed after every step. */
  metrics: FailoverMetrics & MetricsSink;
  logger: Logger;
}

export type FailoverStepEvent =
  | { action: 'confirm'; failover: FailoverRequest }
  | { action: 'fence'; failover: FailoverRequest }
  | { action: 'handOver'; failover: FailoverRequest; end: number }
  | { action: 'findTransactions'; failover: FailoverRequest; fence: FenceResult }
  | { action: 'settle'; failover: FailoverRequest; ranges: RangeHandOver[]; found: TxnsFound }
  | { action: 'publish'; failover: FailoverRequest; fence: FenceResult; ranges: RangeHandOver[] }
  | { action: 'reReplicate'; failover: FailoverRequest; fence: FenceResult; publish: PublishResult }
  | { action: 'abort'; failover: FailoverRequest; failure: { Error?: string; Cause?: string } }
  | {
      action: 'report';
      failover: FailoverRequest;
      outcome: 'notDown' | 'completed';
      confirm: unknown;
      fence?: FenceResult;
      ranges?: RangeHandOver[];
      transactions?: TxnSettlement;
      publish?: PublishResult;
      reReplication?: unknown;
    };

async function step(failovers: FailoverService, event: FailoverStepEvent, metrics: FailoverMetrics): Promise<unknown> {
  const { failover } = event;
  switch (event.action) {
    case 'confirm':
      return failovers.confirm(failover);
    case 'fence':
      return failovers.fenceAndWaitFor(failover);
    case 'handOver':
      return failover.action === 'moveBack'
        ? failovers.moveBackRange(failover.shard, event.end)
        : failovers.handOverRange(failover.shard, event.end);
    case 'findTransactions':
      return failovers.findTransactions(event.fence.ranges);
    case 'settle':
      return failovers.applyCommitted(
        event.ranges.map(({ end, owner }) => ({ end, owner })),
        event.found,
      );
    case 'publish':
      return failovers.publish(
        failover.shard,
        event.ranges.map(({ end, owner, before }) => ({ end, owner, before })),
        event.fence.epoch,
        failover.id,
      );
    case 'reReplicate':
      // A move-back gives ranges to a shard whose range keeps its RF replicas; a lost race published nothing.
      if (failover.action === 'moveBack' || !event.publish.published) return { added: [], copied: 0, ready: true };
      return failovers.reReplicate(failover.shard, event.fence.ranges, failover.id);
    case 'abort': {
      // A step that failed after the publication (the Catch of Publish): the hand-over stands.
      if (await failovers.isPublishedBy(failover.id)) {
        await failovers.record(failover, 'completed', { failure: event.failure, publishedBeforeFailure: true });
        return { published: true };
      }
      const abandoned = await failovers.abandonFor(failover);
      await failovers.record(failover, 'aborted', { failure: event.failure, ...abandoned });
      metrics.failoverFinished({
        status: 'aborted',
        action: failover.action ?? 'failOver',
        durationMs: Date.now() - failover.requestedAtMs,
        rangesMoved: 0,
      });
      return abandoned;
    }
    case 'report': {
      const { action: _action, failover: _failover, outcome, ...report } = event;
      // A hand-over another run of the same failover published first is reported as lost, not completed;
      // a move-back that did not go ahead is not ready (the shard not rejoined, or nothing to move).
      const status =
        outcome === 'completed' && event.publish?.published === false
          ? 'lost'
          : outcome === 'notDown' && failover.action === 'moveBack'
            ? 'notReady'
            : outcome;
      await failovers.record(failover, status, report);
      metrics.failoverFinished({
        status,
        action: failover.action ?? 'failOver',
        durationMs: Date.now() - failover.requestedAtMs,
        rangesMoved: status === 'completed' ? (event.ranges?.length ?? 0) : 0,
      });
      return { status };
    }
  }
}

export function failoverStepHandler({ failovers, metrics, logger }: FailoverStepDeps) {
  return middy<FailoverStepEvent, unknown>().handler(async (event) => {
    logger.info('failover step', { action: event.action, failover: event.failover.id, shard: event.failover.shard });
    try {
      const started = performance.now();
      const result = await step(failovers, event, metrics).finally(() => metrics.publish());
      // Each step's own time goes into the failover's report (the bench reads the phases from it).
      const durationMs = Math.round(performance.now() - started);
      return typeof result === 'object' && result !== null && !Array.isArray(result) ? { ...result, durationMs } : result;
    } catch (error) {
      if (error instanceof NoCandidateError) {
        const renamed = new Error(error.message);
        renamed.name = 'Ringstore.Failed';
        throw renamed;
      }
      if (!isRingstoreError(error)) throw error;
      const renamed = new Error(JSON.stringify({ code: error.code, message: error.message }));
      renamed.name = error.retryable ? 'Ringstore.Retryable' : 'Ringstore.Failed';
      throw renamed;
    }
  });
}
