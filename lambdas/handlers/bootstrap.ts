// CloudFormation custom resource: writes the initial ring of a deployment (the local cloud does the same
// at start). Never changes an existing ring: ring changes are epoch-fenced operations, not deploys.
import middy from '@middy/core';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { initialRingOf } from '../config';
import { ringStore } from '../wiring/control';
import type { Wiring } from '../wiring/wiring';

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

export function bootstrapHandler(wiring: Wiring) {
  const rings = ringStore(wiring);
  const { config, logger } = wiring;

  // CloudFormation reads the answer from the PUT to its presigned URL, never from the return value.
  return middy<CloudFormationCustomResourceEvent, undefined>().handler(async (event) => {
    if (event.RequestType === 'Delete') {
      await respond(event, config.stage, 'SUCCESS', 'the ring is kept with the control table');
      return undefined;
    }
    try {
      const ring = await rings.ensureRing(initialRingOf(config));
      await respond(event, config.stage, 'SUCCESS', `ring at epoch ${ring.epoch}`, { epoch: ring.epoch, shardCount: ring.shards.length });
    } catch (error) {
      logger.error('ring bootstrap failed', { error: String(error) });
      await respond(event, config.stage, 'FAILED', error instanceof Error ? error.message : String(error));
    }
    return undefined;
  });
}
