// Dispatches a proxy event to the operation that topology assigns its method and resource.
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { RingstoreError } from '../core/errors';
import { type HandlerName, routes } from '../../schemas/topology';

export type Operation = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

/** One handler's operations, keyed by operationId; the types make a missing operation a compile error. */
export function router(handler: HandlerName, operations: Record<string, Operation>): Operation {
  const table = new Map<string, Operation>();
  for (const route of routes.filter((r) => r.handler === handler)) {
    const operation = operations[route.operationId];
    if (!operation) throw new Error(`handler ${handler} does not implement ${route.operationId}`);
    table.set(`${route.method} ${route.path}`, operation);
  }
  return async (event) => {
    const operation = table.get(`${event.httpMethod} ${event.resource}`);
    if (!operation) throw new RingstoreError('route.notFound', `no route ${event.httpMethod} ${event.resource}`);
    return operation(event);
  };
}
