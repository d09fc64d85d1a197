// /v1/admin/*: API keys, namespace defaults, shard health and repair, failover, DR and rebalancing; admin keys only.
// The routes live by group in admin-*-routes.ts; this module adds what every admin request goes through.
import type { Logger } from '@aws-lambda-powertools/logger';
import middy, { type Request } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { requireAdmin } from '../core/auth';
import type { AuditLog, Clock } from '../ports';
import { auditTrail } from '../http/audit';
import { httpErrors } from '../http/errors';
import { principalOf } from '../http/request';
import { router } from '../http/router';
import { accessRoutes, type AccessRoutesDeps } from './admin-access-routes';
import { iamCallerAuth, type CallerAuthDeps } from './request-guards';
import { drRoutes, type DrRoutesDeps } from './admin-dr-routes';
import { rebalanceRoutes, type RebalanceRoutesDeps } from './admin-rebalance-routes';
import { shardRoutes, type ShardRoutesDeps } from './admin-shard-routes';

export interface AdminDeps {
  /** The audit trail every admin request is recorded in. */
  audit: AuditLog;
  callers: CallerAuthDeps;
  access: AccessRoutesDeps;
  shards: ShardRoutesDeps;
  dr: DrRoutesDeps;
  rebalance: RebalanceRoutesDeps;
  clock: Clock;
  logger: Logger;
}

export function adminHandler(deps: AdminDeps) {
  const { audit, clock, logger } = deps;
  return (
    middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
      .use(httpErrors(logger))
      // A SigV4-signed caller (API Gateway AWS_IAM) becomes the principal its mapping names.
      .use(iamCallerAuth(deps.callers))
      .use({ before: (request: Request<APIGatewayProxyEvent>) => requireAdmin(principalOf(request.event)) })
      // Every change an admin makes, and every attempt a non-admin key makes, with its outcome.
      .use(auditTrail({ log: audit, clock, logger }))
      .handler(
        router('admin', {
          ...accessRoutes(deps.access),
          ...shardRoutes(deps.shards),
          ...drRoutes(deps.dr),
          ...rebalanceRoutes(deps.rebalance),
        }),
      )
  );
}
