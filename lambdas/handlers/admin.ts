// /v1/admin/*: API keys, namespace defaults, shard health and repair, failover, DR and rebalancing; admin keys only.
// The routes live by group in admin-*-routes.ts; this module adds what every admin request goes through.
import middy, { type Request } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { requireAdmin } from '../core/auth';
import { auditTrail } from '../http/audit';
import { httpErrors } from '../http/errors';
import { principalOf } from '../http/request';
import { router } from '../http/router';
import { auditLog } from '../wiring/control';
import type { Wiring } from '../wiring/wiring';
import { accessRoutes } from './admin-access-routes';
import { iamCallerAuth } from './request-guards';
import { drRoutes } from './admin-dr-routes';
import { rebalanceRoutes } from './admin-rebalance-routes';
import { shardRoutes } from './admin-shard-routes';

export function adminHandler(wiring: Wiring) {
  const audit = auditLog(wiring);
  const { logger } = wiring;
  return (
    middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
      .use(httpErrors(logger))
      // A SigV4-signed caller (API Gateway AWS_IAM) becomes the principal its mapping names.
      .use(iamCallerAuth(wiring))
      .use({ before: (request: Request<APIGatewayProxyEvent>) => requireAdmin(principalOf(request.event)) })
      // Every change an admin makes, and every attempt a non-admin key makes, with its outcome.
      .use(auditTrail({ log: audit, clock: wiring.clock, logger }))
      .handler(router('admin', { ...accessRoutes(wiring), ...shardRoutes(wiring), ...drRoutes(wiring), ...rebalanceRoutes(wiring) }))
  );
}
