// CloudFormation custom resource: writes the initial ring of a deployment (the local cloud does the same
// at start). Never changes an existing ring: ring changes are epoch-fenced operations, not deploys.
import middy from '@middy/core';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { RingState, RingStore } from '../ports';

export interface BootstrapDeps {
  rings: RingStore;
  /** The deployment's stage, which names the custom resource's physical id. */
  stage: string;
  /** The ring a deployment starts with, from its configuration; computed per event, so a bad one answers FAILED. */
  initialRing: () => RingState;
  logger: Logger;
}

/** CloudFormation waits for this PUT to the presigned response URL; without it a deploy hangs for an hour. */
async function respond(
  event: CloudFormationCustomResourceEvent,
  stage: string,
  status: 'SUCCESS' | 'FAILED',
  reason: string,
  data: Record<string, unknown> = {},
) {
  const body = JSON.stringify({
    Status: status,
    Reason: reason.slice(0, 1000),
    PhysicalResourceId: `${stage}-ring`,
    StackId: event.StackId,
    RequestId: event.RequestId,
    LogicalResourceId: event.LogicalResourceId,
    Data: data,
  });
  await fetch(event.ResponseURL, { method: 'PUT', headers: { 'content-type': '' }, body });
}

export function bootstrapHandler({ rings, stage, initialRing, logger }: BootstrapDeps) {
  // CloudFormation reads the answer from the PUT to its presigned URL, never from the return value.
  return middy<CloudFormationCustomResourceEvent, undefined>().handler(async (event) => {
    if (event.RequestType === 'Delete') {
      await respond(event, stage, 'SUCCESS', 'the ring is kept with the control table');
      return undefined;
    }
    try {
      const ring = await rings.ensureRing(initialRing());
      await respond(event, stage, 'SUCCESS', `ring at epoch ${ring.epoch}`, { epoch: ring.epoch, shardCount: ring.shards.length });
    } catch (error) {
      logger.error('ring bootstrap failed', { error: String(error) });
      await respond(event, stage, 'FAILED', error instanceof Error ? error.message : String(error));
    }
    return undefined;
  });
}
