// GET /v1/ring: the ring as clients see it ("keyrange").
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { tokenBits } from '../core/ring';
import { httpErrors } from '../http/errors';
import { principalOf } from '../http/request';
import { json } from '../http/response';
import { router } from '../http/router';
import { runtime } from '../runtime';

const { ring, logger } = runtime();

export const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
  .use(httpErrors(logger))
  .handler(
    router('ring', {
      describeRing: async (event) => {
        principalOf(event);
        const current = await ring.current();
        const { epoch, replicationFactor, vnodesPerShard, shards } = current.state;
        return json(200, { epoch, replicationFactor, vnodesPerShard, tokenBits, shards, ranges: current.ranges() });
      },
    }),
  );
