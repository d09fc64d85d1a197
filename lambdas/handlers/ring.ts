// GET /v1/ring: the ring as clients see it ("keyrange").
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { Logger } from '@aws-lambda-powertools/logger';
import { tokenBits } from '../core/ring';
import type { RingSource } from '../core/ring-source';
import { httpErrors } from '../http/errors';
import { principalOf } from '../http/request';
import { json } from '../http/response';
import { router } from '../http/router';
import { callerAndQuotas, type RequestGuardDeps } from './request-guards';

export interface RingDeps {
  ring: RingSource;
  guards: RequestGuardDeps;
  logger: Logger;
}

export function ringHandler({ ring, guards, logger }: RingDeps) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(httpErrors(logger))
    .use(callerAndQuotas(guards))
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
