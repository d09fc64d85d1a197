// Dispatches a proxy event to the operation that topology assigns its method and resource.
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { RingstoreError } from '../core/errors';
import { type HandlerName, type OperationIdOf, routes } from '../../schemas/topology';
import { routeQueries } from '../../schemas/api';
import { refuseUnknownQuery } from './request';

export type Operation = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

/**
 * One handler's operations, keyed by operationId: the type makes a missing or unknown operation a compile
 * error, and the loop below re-checks at module load what the types cannot see (a cast at a call site).
 */
export function router<Handler extends HandlerName>(handler: Handler, operations: Record<OperationIdOf<Handler>, Operation>): Operation {
  const table = new Map<string, { operation: Operation; query: readonly string[] }>();
  const byId: Partial<Record<string, Operation>> = operations;
  for (const route of routes.filter((r) => r.handler === handler)) {
    const operation = byId[route.operationId];
    if (!operation) throw new Error(`handler ${handler} does not implement ${route.operationId}`);
    table.set(`${route.method} ${route.path}`, { operation, query: Object.keys(routeQueries[route.operationId].shape) });
  }
  return async (event) => {
    const entry = table.get(`${event.httpMethod} ${event.resource}`);
    if (!entry) throw new RingstoreError('route.notFound', `no route ${event.httpMethod} ${event.resource}`);
    // Every route refuses a query parameter it does not know: a typo (`ttl` for `ttlSeconds`) must not be ignored.
    refuseUnknownQuery(event.queryStringParameters, entry.query, `${event.httpMethod} ${event.resource}`);
    return entry.operation(event);
  };
}
