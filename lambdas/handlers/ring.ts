// GET /v1/ring: the ring as clients see it ("keyrange").
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { tokenBits } from '../core/ring';
import { httpErrors } from '../http/errors';
import { principalOf } from '../http/request';
import { json } from '../http/response';
import { router } from '../http/router';
import { ringSource } from '../wiring/control';
import { callerAndQuotas } from './request-guards';
import type { Wiring } from '../wiring/wiring';

export function ringHandler(wiring: Wiring) {
  const ring = ringSource(wiring);
  const { logger } = wiring;

  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(httpErrors(logger))
    .use(callerAndQuotas(wiring))
    .handler(
      router('ring', {
        describeRing: async (event) => {
          principalOf(event);
          // As fresh as writes see it (the lease, ringLeaseMs), so a failover shows within a second.
          const { ring: current } = await ring.lease();
          const { epoch, replicationFactor, vnodesPerShard, shards, rejoining } = current.state;
          return json(200, {
            epoch,
            replicationFactor,
            vnodesPerShard,
            tokenBits,
            shards,
            ranges: current.ranges(),
            ...(rejoining ? { rejoining } : {}),
          });
        },
      }),
    );
}
